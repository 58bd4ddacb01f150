package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// FuzzEdit edits any valid file: adding a server block keeps the file as a
// prefix, and removing it again gives the file back (exactly, when the file
// ends in one line end after a line with content); removing any server
// block keeps the bytes of every other top-level item; setting the
// approvals keeps every top-level item but the settings block, and reads
// back as written. No edit may panic or leave a file that does not parse.
func FuzzEdit(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.hcl")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		handFile,
		"",
		"\n\n",
		"  ",
		"# only a comment",
		"x = 1 /* a */ # b\n# lead\nserver \"b\" {}\ny = 2\n",
		"server \"a\" {}\r\n\r\n# c\r\nserver \"b\" {\r\n}\r\n",
		"settings { tool_timeout = \"5m\" }",
		"settings {\n\tapproved_project_servers = { a = \"x\" } # c\n}\n",
		"/* b */ server \"b\" {}\n  \nserver \"c\" { command = \"c\" }",
		"a = <<EOT\nx\nEOT\nserver \"b\" {}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkEdits)
}

// TestEditPieces checks what FuzzEdit checks on every file of three pieces
// (blocks, attributes, comments, blank lines, heredocs), with LF and CRLF
// line ends, with and without a final line end: the fuzz target is too slow
// to find these on a busy machine.
func TestEditPieces(t *testing.T) {
	pieces := []string{
		"a = 1\n", "x = 1 # c\n", "x = 1 /* a */ # b\n", "# lead\n", "/* block\n c */\n", "\n", "  \n",
		"server \"s1\" {\n  command = \"c\" # c\n}\n", "server  \"s2\"  {}\n", "/* l */ server \"s3\" {\n}\n",
		"  server \"s4\" {\n  } # e\n", "settings {\n  tool_timeout = \"5m\" # t\n}\n",
		"settings { tool_timeout = \"5m\" }\n", "settings {}\n", "h = <<EOT\n x\nEOT\n",
	}
	for _, a := range pieces {
		for _, b := range pieces {
			for _, c := range pieces {
				src := a + b + c
				for _, v := range []string{src, strings.TrimSuffix(src, "\n"), strings.ReplaceAll(src, "\n", "\r\n")} {
					checkEdits(t, []byte(v))
					if t.Failed() {
						return
					}
				}
			}
		}
	}
}

// checkEdits is FuzzEdit's check of one file.
func checkEdits(t *testing.T, src []byte) {
	t.Helper()
	file, diags := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return
	}
	body := file.Body.(*hclsyntax.Body)
	items := topItems(src, body)

	// Add, then remove.
	if findServerBlock(body, "fuzz-added") == nil {
		e := &ServerEntry{Name: "fuzz-added", Command: "x", Args: []string{"${A}", "b"}, Env: map[string]string{"K": "v"}}
		out, err := AddServerBlock(src, "f.hcl", e)
		if err != nil {
			t.Fatalf("add: %v", err)
		}
		if !bytes.HasPrefix(out, src) {
			t.Fatalf("add changed the file:\n%q\n%q", src, out)
		}
		back, _, err := RemoveServerBlock(out, "f.hcl", e.Name)
		if err != nil {
			t.Fatalf("remove what add wrote: %v\n%q", err, out)
		}
		if endsWithOneLineEnd(src) && !bytes.Equal(back, src) {
			t.Fatalf("add then remove:\n%q\nwant:\n%q", back, src)
		}
		// Otherwise only blank lines at the end, or a final line end,
		// may differ.
		trimmed := bytes.TrimRight(back, "\r\n")
		if !bytes.HasPrefix(src, trimmed) || !isBlank(src[len(trimmed):]) {
			t.Fatalf("add then remove:\n%q\nfrom:\n%q", back, src)
		}
	}

	// Remove each server block.
	for _, b := range body.Blocks {
		if b.Type != "server" || len(b.Labels) != 1 {
			continue
		}
		out, _, err := RemoveServerBlock(src, "f.hcl", b.Labels[0])
		if err != nil {
			t.Fatalf("remove %q: %v", b.Labels[0], err)
		}
		kept := keptItems(t, out, items, b.Range())
		if len(kept) != len(items)-1 {
			t.Fatalf("remove %q left %d of %d items:\n%q", b.Labels[0], len(kept), len(items), out)
		}
		break // the first server block is enough; the others are alike
	}

	// Set the approvals.
	if _, err := ReadApprovals("f.hcl", src); err != nil {
		return
	}
	want := map[string]string{"fuzz": "sha256:0", "other-one": "sha256:1"}
	v := cty.ObjectVal(map[string]cty.Value{"fuzz": cty.StringVal("sha256:0"), "other-one": cty.StringVal("sha256:1")})
	out, err := setApprovals(src, "f.hcl", v)
	if err != nil {
		t.Fatalf("set approvals: %v", err)
	}
	got, err := ReadApprovals("f.hcl", out)
	if err != nil || len(got) != len(want) || got["fuzz"] != want["fuzz"] || got["other-one"] != want["other-one"] {
		t.Fatalf("approvals read back: %v, %v\n%q", got, err, out)
	}
	var settings hcl.Range
	for _, b := range body.Blocks {
		if b.Type == "settings" && len(b.Labels) == 0 {
			settings = b.Range()
			break
		}
	}
	keptItems(t, out, items, settings)
}

// topItem is a top-level attribute or block of a file: its range and bytes.
type topItem struct {
	rng  hcl.Range
	text []byte
}

func topItems(src []byte, body *hclsyntax.Body) []topItem {
	var out []topItem
	for _, a := range body.Attributes {
		out = append(out, topItem{a.SrcRange, src[a.SrcRange.Start.Byte:a.SrcRange.End.Byte]})
	}
	for _, b := range body.Blocks {
		r := b.Range()
		out = append(out, topItem{r, src[r.Start.Byte:r.End.Byte]})
	}
	return out
}

// keptItems checks that out parses and holds the bytes of every item but
// the one at skip, and returns the items of out.
func keptItems(t *testing.T, out []byte, items []topItem, skip hcl.Range) []topItem {
	t.Helper()
	f, diags := hclsyntax.ParseConfig(out, "out.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("the edited file does not parse: %v\n%q", diags, out)
	}
	for _, it := range items {
		if it.rng.Start.Byte == skip.Start.Byte && it.rng.End.Byte == skip.End.Byte {
			continue
		}
		if !bytes.Contains(out, it.text) {
			t.Fatalf("the edit changed an item it did not touch:\n%q\nin:\n%q", it.text, out)
		}
	}
	return topItems(out, f.Body.(*hclsyntax.Body))
}

// endsWithOneLineEnd reports whether src ends in a line end that ends a
// line with content.
func endsWithOneLineEnd(src []byte) bool {
	if len(src) == 0 || src[len(src)-1] != '\n' {
		return false
	}
	rest := src[:len(src)-1]
	last := rest[bytes.LastIndexByte(rest, '\n')+1:]
	return !isBlank(last)
}

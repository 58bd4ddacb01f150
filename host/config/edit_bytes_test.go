package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handFile is a configuration file laid out by hand: aligned "=" and
// inline comments, odd spacing, a tab-indented line, a block comment, a
// heredoc and a comment after the last block. An edit of one server block
// must leave every other byte of it as it is (issue 37, part 9).
const handFile = `# my configuration	(a tab before this)
settings {
  tool_timeout    = "5m"   # long calls
  connect_timeout = "10s"  # a slow VPN
	log_level="debug"        # tab-indented, no spaces
}

/* servers
   below */
server "keep" {
  command = "keep"     # aligned
  args    = ["-v"]     # by hand
  env = { TEXT = <<EOT
  indented   text
EOT
  }
}

# about gone
server  "gone"  {
  command="gone"
}

permissions {
  allow = ["keep__*"]   # all of it
}
# the end`

// TestEditsKeepOtherBytes: server add, server remove and add-then-remove
// change only the block they touch, in LF, CRLF and mixed files.
func TestEditsKeepOtherBytes(t *testing.T) {
	newBlock := "server \"new\" {\n  command = \"n\"\n  args    = [\"-x\"]\n}\n"
	lf := handFile
	crlf := strings.ReplaceAll(handFile, "\n", "\r\n")
	// Mixed: the settings block's lines end in CRLF, the others in LF.
	i := strings.Index(handFile, "}\n")
	mixed := strings.ReplaceAll(handFile[:i], "\n", "\r\n") + handFile[i:]
	gone := "# about gone\nserver  \"gone\"  {\n  command=\"gone\"\n}\n\n"

	tests := []struct {
		name, src string
		eol       string // the line end added lines get
		// without is src without the block "gone" (and its lead comment
		// and one of the blank lines around it).
		without string
	}{
		{"LF", lf, "\n", strings.Replace(lf, gone, "", 1)},
		{"CRLF", crlf, "\r\n", strings.Replace(crlf, strings.ReplaceAll(gone, "\n", "\r\n"), "", 1)},
		{"mixed", mixed, "\r\n", strings.Replace(mixed, gone, "", 1)},
		{"final newline", lf + "\n", "\n", strings.Replace(lf+"\n", gone, "", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := AddServerBlock([]byte(tc.src), "f.hcl", &ServerEntry{Name: "new", Command: "n", Args: []string{"-x"}})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.src
			if !strings.HasSuffix(want, "\n") {
				want += tc.eol
			}
			want += tc.eol + strings.ReplaceAll(newBlock, "\n", tc.eol)
			if string(out) != want {
				t.Errorf("add changed other bytes:\n%q\nwant:\n%q", out, want)
			}

			back, _, err := RemoveServerBlock(out, "f.hcl", "new")
			if err != nil {
				t.Fatal(err)
			}
			wantBack := tc.src
			if !strings.HasSuffix(wantBack, "\n") {
				wantBack += tc.eol // the final newline the addition supplied
			}
			if string(back) != wantBack {
				t.Errorf("add then remove:\n%q\nwant:\n%q", back, wantBack)
			}

			rm, _, err := RemoveServerBlock([]byte(tc.src), "f.hcl", "gone")
			if err != nil {
				t.Fatal(err)
			}
			if string(rm) != tc.without {
				t.Errorf("remove changed other bytes:\n%q\nwant:\n%q", rm, tc.without)
			}
		})
	}
}

// TestRemoveServerBlockEdges: what goes with a removed block (its lead
// comments, its line comment, its line end) and what stays (the line
// comment of the item before it, a comment separated by a blank line).
func TestRemoveServerBlockEdges(t *testing.T) {
	tests := []struct{ name, src, want string }{{
		name: "line comment of the attribute before stays",
		src:  "x = 1 # about x\nserver \"b\" {\n}\ny = 2\n",
		want: "x = 1 # about x\ny = 2\n",
	}, {
		name: "block comments of the attribute before stay",
		src:  "x = 1 /* a */ # b\n# lead\nserver \"b\" {}\ny = 2\n",
		want: "x = 1 /* a */ # b\ny = 2\n",
	}, {
		name: "its line comment and indentation go",
		src:  "a = 1\n\n   server \"b\" {\n   }   # b's\n\nc = 3\n",
		want: "a = 1\n\nc = 3\n",
	}, {
		name: "a comment on its first line goes",
		src:  "a = 1\n\n/* b */ server \"b\" {}\n\nc = 3\n",
		want: "a = 1\n\nc = 3\n",
	}, {
		name: "a comment after a blank line stays",
		src:  "# not b's\n\n// b's\n// too\nserver \"b\" {}\n",
		want: "# not b's\n",
	}, {
		name: "last, with no final newline",
		src:  "a = 1\n\nserver \"b\" {}",
		want: "a = 1\n",
	}, {
		name: "first of two, in CRLF",
		src:  "server \"b\" {}\r\n\r\nserver \"c\" {}\r\n",
		want: "server \"c\" {}\r\n",
	}, {
		name: "a line of spaces is a blank line",
		src:  "a = 1\n  \nserver \"b\" {}\n\t\nc = 3\n",
		want: "a = 1\n  \nc = 3\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := RemoveServerBlock([]byte(tc.src), "f.hcl", "b")
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got:\n%q\nwant:\n%q", out, tc.want)
			}
		})
	}
}

// TestWriteApprovalsKeepsOtherBytes: WriteApprovals replaces only the
// approved_project_servers attribute (or inserts it, or a settings block).
func TestWriteApprovalsKeepsOtherBytes(t *testing.T) {
	h := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	attr := func(indent string, names ...string) string {
		s := "approved_project_servers = {\n"
		w := 0
		for _, n := range names {
			w = max(w, len(n))
		}
		for _, n := range names {
			s += indent + "  " + n + strings.Repeat(" ", w-len(n)) + " = \"" + h(n[:1]) + "\"\n"
		}
		return s + indent + "}"
	}
	tests := []struct{ name, src, want string }{{
		name: "replaced in place",
		src:  "# mine\nsettings {\n  tool_timeout    = \"5m\"   # long\n  approved_project_servers = { a = \"" + h("a") + "\" } # approvals\n  connect_timeout = \"1s\"  # short\n}\n",
		want: "# mine\nsettings {\n  tool_timeout    = \"5m\"   # long\n  " + attr("  ", "a", "b") + " # approvals\n  connect_timeout = \"1s\"  # short\n}\n",
	}, {
		name: "inserted at the end of the settings block",
		src:  "settings {\n    tool_timeout = \"5m\"   # long, indented by four\n}\n\nserver \"x\" {\n  command = \"x\" # odd\n}\n",
		want: "settings {\n    tool_timeout = \"5m\"   # long, indented by four\n    " + attr("    ", "b") + "\n}\n\nserver \"x\" {\n  command = \"x\" # odd\n}\n",
	}, {
		name: "inserted in an empty one-line settings block",
		src:  "server \"x\" {\n  command   =   \"x\"\n}\nsettings {}\n# end\n",
		want: "server \"x\" {\n  command   =   \"x\"\n}\nsettings {\n  " + attr("  ", "b") + "\n}\n# end\n",
	}, {
		name: "inserted in a one-line settings block with an attribute",
		src:  "  settings  {  tool_timeout   =  \"5m\"  }  # odd\n",
		want: "  settings  {\n    tool_timeout   =  \"5m\"\n    " + attr("    ", "b") + "\n  }  # odd\n",
	}, {
		name: "a settings block appended",
		src:  "server \"x\" {\n  command   =   \"x\"   # odd\n}",
		want: "server \"x\" {\n  command   =   \"x\"   # odd\n}\n\nsettings {\n  " + attr("  ", "b") + "\n}\n",
	}, {
		name: "CRLF",
		src:  "settings {\r\n  tool_timeout    = \"5m\"   # long\r\n}\r\n",
		want: strings.ReplaceAll("settings {\n  tool_timeout    = \"5m\"   # long\n  "+attr("  ", "b")+"\n}\n", "\n", "\r\n"),
	}, {
		name: "a new file",
		src:  "",
		want: "settings {\n  " + attr("  ", "b") + "\n}\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "local.hcl")
			if tc.src != "" {
				must(t, os.WriteFile(path, []byte(tc.src), 0o600))
			}
			must(t, WriteApprovals(path, map[string]string{"b": h("b")}))
			got, err := os.ReadFile(path)
			must(t, err)
			if string(got) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

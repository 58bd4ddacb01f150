package clientconf

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func seeds(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "in"))
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join("testdata", "in", e.Name())); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"mcpServers":{"mcphost":{"command":"x"}}}`))
	f.Add([]byte("{}"))
}

// FuzzJSONEdit: whatever a client's file holds, an edit either refuses it
// or yields a file that parses, holds the entry, and from which removing
// the entry gives the file back.
func FuzzJSONEdit(f *testing.F) {
	seeds(f)
	cc, _ := Lookup("claude-code")
	e := Entry{Command: "/bin/mcphost", Args: []string{"serve", "--naming", "server"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := jsonSet(data, "mcpServers", DefaultName, e.jsonEntry(cc))
		if err != nil {
			return
		}
		got, _, err := jsonGet(out, "mcpServers", DefaultName)
		if err != nil || got == nil || got["command"] != "/bin/mcphost" {
			t.Fatalf("after set: %v, %v\n%s", got, err, out)
		}
		back, found, err := jsonRemove(out, "mcpServers", DefaultName)
		if err != nil || !found {
			t.Fatalf("remove: %v %v\n%s", found, err, out)
		}
		had, _, _ := jsonGet(data, "mcpServers", DefaultName)
		if had == nil && len(bytes.TrimSpace(data)) > 0 && !bytes.Equal(back, data) {
			// Byte for byte when the file had servers; else (the servers
			// member added, then removed: the spacing of an empty object
			// may differ) the same values.
			doc, err := jsonDecode(data)
			servers, _ := doc["mcpServers"].(map[string]any)
			if err != nil || len(servers) > 0 {
				t.Fatalf("remove did not give the file back:\n%q\n%q", data, back)
			}
			withoutMember(doc, "mcpServers", DefaultName) // an empty servers member goes
			if got, err := jsonDecode(back); err != nil || !reflect.DeepEqual(got, doc) {
				t.Fatalf("remove changed the file's values:\n%q\n%q", data, back)
			}
		}
	})
}

// FuzzTOMLEdit: the same for a Codex file, and every other key survives
// both edits.
func FuzzTOMLEdit(f *testing.F) {
	seeds(f)
	f.Add([]byte("[mcp_servers.mcphost]\ncommand=\"old\"\n\n[[profiles]]\nname=\"keep\"\n"))
	f.Add([]byte("a = [\n  [\"a\"]\n]\n[mcp_servers.mcphost]\nx = \"\"\"\n[y]\n\"\"\"\n"))
	e := Entry{Command: "/bin/mcphost", Args: []string{"serve"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := tomlSet(data, DefaultName, e)
		if err != nil {
			return
		}
		rest := func(b []byte) map[string]any {
			doc, err := tomlDecode(b)
			if err != nil {
				t.Fatalf("does not decode: %v\n%s", err, b)
			}
			withoutServer(doc, DefaultName)
			return doc
		}
		if in, got := rest(data), rest(out); !reflect.DeepEqual(in, got) {
			t.Fatalf("set changed other keys:\n%v\n%v\n%s", in, got, out)
		}
		got, _, err := tomlGet(out, DefaultName)
		if err != nil || got == nil || got["command"] != "/bin/mcphost" {
			t.Fatalf("after set: %v, %v\n%s", got, err, out)
		}
		back, found, err := tomlRemove(out, DefaultName)
		if err != nil || !found {
			t.Fatalf("remove: %v %v\n%s", found, err, out)
		}
		if got, _, _ := tomlGet(back, DefaultName); got != nil {
			t.Fatalf("still there after remove:\n%s", back)
		}
		if in, got := rest(data), rest(back); !reflect.DeepEqual(in, got) {
			t.Fatalf("remove changed other keys:\n%v\n%v\n%s", in, got, back)
		}
	})
}

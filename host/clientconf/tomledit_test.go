package clientconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestTOMLEditKeepsTheRest: valid TOML the old line-regex editor misread
// (review 37a finding 3). Each edit either refuses with ErrShape or keeps
// every other key.
func TestTOMLEditKeepsTheRest(t *testing.T) {
	e := Entry{Command: "/bin/mcphost", Args: []string{"serve"}}
	tests := []struct {
		name, in  string
		setErr    bool // ErrShape on set
		removeErr bool // ErrShape on remove
	}{
		{name: "array of tables after the entry", in: "[mcp_servers.mcphost]\ncommand=\"old\"\n\n[[profiles]]\nname=\"keep\"\n"},
		{name: "header-like line in a multi-line array", in: "[mcp_servers.mcphost]\ncommand=\"old\"\nargs = [\n  [\"a\"]\n]\nafter = 1\n\n[other]\nx = 1\n"},
		{name: "header-like line in a multi-line string", in: "[mcp_servers.mcphost]\ncommand=\"old\"\ndesc = \"\"\"\n[x]\n\"\"\"\nafter = 1\n[other]\nx = 1\n"},
		{name: "subtable not contiguous", in: "[mcp_servers.mcphost]\ncommand=\"old\"\n[other]\nx = 1\n[mcp_servers.mcphost.env]\nA = \"b\"\n", setErr: true, removeErr: true},
		{name: "inline mcp_servers", in: "mcp_servers = { other = { command = \"x\" } }\n", setErr: true},
		{name: "subtable contiguous", in: "a = 1\n[mcp_servers.mcphost]\ncommand=\"old\"\n[mcp_servers.mcphost.env]\nA = \"b\"\n# about z\n[z]\ny = 2\n"},
		{name: "comment after header", in: "[mcp_servers.mcphost] # ours\ncommand=\"old\" # c\n[[profiles]]\nname=\"keep\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.in)
			before, err := tomlDecode(data)
			if err != nil {
				t.Fatalf("the test's input is not TOML: %v", err)
			}
			withoutServer(before, DefaultName)
			check := func(op string, out []byte, err error, wantErr bool) {
				t.Helper()
				if wantErr {
					if !errors.Is(err, ErrShape) {
						t.Fatalf("%s: err %v, want ErrShape\n%s", op, err, out)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				after, err := tomlDecode(out)
				if err != nil {
					t.Fatalf("%s broke the file: %v\n%s", op, err, out)
				}
				withoutServer(after, DefaultName)
				if !reflect.DeepEqual(before, after) {
					t.Fatalf("%s changed other keys:\n%v\n%v\n%s", op, before, after, out)
				}
			}
			out, err := tomlSet(data, DefaultName, e)
			check("set", out, err, tt.setErr)
			if err == nil {
				if got, _, _ := tomlGet(out, DefaultName); got["command"] != "/bin/mcphost" {
					t.Fatalf("set: entry %v\n%s", got, out)
				}
			}
			back, found, err := tomlRemove(data, DefaultName)
			check("remove", back, err, tt.removeErr)
			if err == nil && strings.Contains(tt.in, "[mcp_servers.mcphost]") && !found {
				t.Fatalf("remove: not found")
			}
		})
	}
}

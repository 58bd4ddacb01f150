package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRenameStatus: a server's status notification reaches the client
// with the gateway's id of the task, without the protocol's _meta members
// of the server's hop or the gateway's own, and with related-task only
// when it named the same task (rewritten). On the old code (renameTask)
// _meta passed whole: a reserved member crossed the hop, and a
// related-task naming another upstream task passed unrenamed.
func TestRenameStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		fails          bool
	}{
		{name: "related-task of the task", in: `{"taskId":"up-1","status":"working","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-1"},"x":1}}`,
			want: `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"mcpt-A"},"x":1},"status":"working","taskId":"mcpt-A"}`},
		{name: "related-task of another task, a reserved member, a gateway's member", in: `{"taskId":"up-1","status":"working","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-other"},"io.modelcontextprotocol/protocolVersion":"2025-11-25","dev.mcphost/route":"7"}}`,
			want: `{"status":"working","taskId":"mcpt-A"}`},
		{name: "no _meta", in: `{"taskId":"up-1","status":"completed"}`, want: `{"status":"completed","taskId":"mcpt-A"}`},
		{name: "_meta not an object", in: `{"taskId":"up-1","_meta":3}`, want: `{"taskId":"mcpt-A"}`},
		{name: "another task", in: `{"taskId":"up-2"}`, fails: true},
		{name: "no taskId", in: `{"status":"working"}`, fails: true},
		{name: "not an object", in: `[1]`, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := renameStatus(json.RawMessage(tc.in), "up-1", "mcpt-A")
			if tc.fails {
				if err == nil {
					t.Fatalf("got %s, want an error", out)
				}
				return
			}
			if err != nil || string(out) != tc.want {
				t.Fatalf("got %s, %v; want %s", out, err, tc.want)
			}
			if strings.Contains(string(out), "up-") {
				t.Errorf("an upstream id passed: %s", out)
			}
		})
	}
}

// FuzzRenameStatus: whatever a server sends, renameStatus never panics,
// and what it passes names the task by the gateway's id only.
func FuzzRenameStatus(f *testing.F) {
	f.Add([]byte(`{"taskId":"up-1","status":"working","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-1"}}}`))
	f.Add([]byte(`{"taskId":"up-1","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"up-other"}}}`))
	f.Add([]byte(`{"taskId":"up-1","_meta":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := renameStatus(in, "up-1", "mcpt-A")
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage // (exact names: the struct decoder would take "_metA" for "_meta")
		var id string
		var meta map[string]json.RawMessage
		if json.Unmarshal(out, &obj) != nil || json.Unmarshal(obj["taskId"], &id) != nil || id != "mcpt-A" {
			t.Fatalf("%s -> %s", in, out)
		}
		if raw, ok := obj["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
			t.Fatalf("%s -> %s: _meta not an object", in, out)
		}
		for k, v := range meta {
			if strings.HasPrefix(k, "io.modelcontextprotocol/") && (k != relatedTask || string(v) != `{"taskId":"mcpt-A"}`) {
				t.Fatalf("%s -> %s: reserved member %s passed", in, out, k)
			}
		}
	})
}

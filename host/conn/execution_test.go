package conn

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/internal/mcpmeta"
)

func TestHideExecution(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		changed  bool
		want     string // the tools, when changed
	}{
		{"moved", `{"tools":[{"name":"a","execution":{"taskSupport":"optional"}},{"name":"b"}]}`, true,
			`[{"name":"a","_meta":{"dev.mcphost/execution":{"taskSupport":"optional"}}},{"name":"b"}]`},
		{"beside _meta", `{"tools":[{"name":"a","_meta":{"x":1},"execution":{"taskSupport":"required"}}],"nextCursor":"c"}`, true,
			`[{"name":"a","_meta":{"x":1,"dev.mcphost/execution":{"taskSupport":"required"}}}]`},
		{"null _meta", `{"tools":[{"name":"a","_meta":null,"execution":{}}]}`, true,
			`[{"name":"a","_meta":{"dev.mcphost/execution":{}}}]`},
		{"no execution", `{"tools":[{"name":"a"}]}`, false, ""},
		{"only in a description", `{"tools":[{"name":"a","description":"\"execution\""}]}`, false, ""},
		{"not a tool list", `{"content":[{"type":"text","text":"\"execution\""}]}`, false, ""},
		{"tools not a list", `{"tools":{"execution":1}}`, false, ""},
		{"bad _meta", `{"tools":[{"name":"a","_meta":[1],"execution":{}}]}`, false, ""},
		{"not JSON", `{"tools":[{"execution"`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed := hideExecution(json.RawMessage(tc.in))
			if changed != tc.changed {
				t.Fatalf("changed %v, want %v (%s)", changed, tc.changed, out)
			}
			if !changed {
				if string(out) != tc.in {
					t.Errorf("unchanged result rewritten: %s", out)
				}
				return
			}
			var got struct{ Tools any }
			var want any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got.Tools, want) {
				t.Errorf("tools %s, want %s", out, tc.want)
			}
		})
	}
}

// FuzzHideExecution: whatever a server sends, hideExecution returns it as
// it is or as valid JSON whose tools have no "execution" left.
func FuzzHideExecution(f *testing.F) {
	for _, s := range []string{`{"tools":[{"name":"a","execution":{"taskSupport":"optional"}}]}`,
		`{"tools":[{"name":"a","_meta":{"x":1},"execution":null}]}`, `{"tools":null}`, `"execution"`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, changed := hideExecution(data)
		if !changed {
			if string(out) != string(data) {
				t.Fatalf("unchanged but rewritten")
			}
			return
		}
		var got struct {
			Tools []map[string]json.RawMessage
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("changed into invalid JSON %s: %v", out, err)
		}
		for _, tool := range got.Tools {
			if _, ok := tool["execution"]; ok {
				var meta map[string]json.RawMessage
				if json.Unmarshal(tool["_meta"], &meta) == nil && meta[mcpmeta.ExecutionKey] != nil {
					t.Fatalf("execution left beside the moved one: %s", out)
				}
			}
		}
	})
}

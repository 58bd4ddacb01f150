package conn

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCapsWithoutTasks: a caller that cannot carry a task result does not
// offer the server the tasks extension; the rest of its capabilities are
// sent as they are.
func TestCapsWithoutTasks(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no extensions", `{"elicitation":{}}`, `{"elicitation":{}}`},
		{"tasks only", `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, `{"elicitation":{}}`},
		{"tasks and another", `{"extensions":{"io.modelcontextprotocol/tasks":{},"x.example/y":{"a":1}}}`, `{"extensions":{"x.example/y":{"a":1}}}`},
		{"another only", `{"extensions":{"x.example/y":{}}}`, `{"extensions":{"x.example/y":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in, want map[string]any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			orig := cloneJSON(t, in)
			if got := capsWithoutTasks(in); !reflect.DeepEqual(got, want) {
				t.Errorf("capsWithoutTasks(%s) = %v, want %v", tc.in, got, want)
			}
			if !reflect.DeepEqual(in, orig) {
				t.Errorf("capsWithoutTasks changed its argument: %v", in)
			}
			var got map[string]any
			if err := json.Unmarshal(rawCapsWithoutTasks([]byte(tc.in)), &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("rawCapsWithoutTasks(%s) = %v (%v), want %v", tc.in, got, err, want)
			}
		})
	}
	if rawCapsWithoutTasks(nil) != nil {
		t.Error("rawCapsWithoutTasks(nil) is not nil")
	}
}

func cloneJSON(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

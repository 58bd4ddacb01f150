package conn

import (
	"context"
	"encoding/json"
	"testing"
)

type prefixIDs struct{}

func (prefixIDs) Outward(_ context.Context, server, version, id string) string {
	return server + "/" + version + "/" + id
}

// TestTaskResults: the task id of a 2026-07-28 task result and of a
// 2025-11-25 CreateTaskResult is replaced by the caller's name for it, and
// nothing else changes; other results pass as they are.
func TestTaskResults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		legacy         bool
	}{
		{"task", `{"jsonrpc":"2.0","id":"x","result":{"resultType":"task","taskId":"t1","status":"working"}}`,
			`{"jsonrpc":"2.0","id":"x","result":{"resultType":"task","taskId":"s/2026-07-28/t1","status":"working"}}`, false},
		{"task, escaped id", `{"id":1,"result":{"taskId":"a\"b","resultType":"task"}}`,
			`{"id":1,"result":{"taskId":"s/2026-07-28/a\"b","resultType":"task"}}`, false},
		{"complete", `{"id":1,"result":{"resultType":"complete","taskId":"t1"}}`, `{"id":1,"result":{"resultType":"complete","taskId":"t1"}}`, false},
		{"task without id", `{"id":1,"result":{"resultType":"task"}}`, `{"id":1,"result":{"resultType":"task"}}`, false},
		{"error", `{"id":1,"error":{"code":-32602,"message":"x"}}`, `{"id":1,"error":{"code":-32602,"message":"x"}}`, false},
		{"legacy", `{"id":1,"result":{"task":{"taskId":"t2","status":"working"},"_meta":{}}}`,
			`{"id":1,"result":{"task":{"taskId":"s/2025-11-25/t2","status":"working"},"_meta":{}}}`, true},
		{"legacy, no task", `{"id":1,"result":{"content":[]}}`, `{"id":1,"result":{"content":[]}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out []byte
			if tc.legacy {
				out = createTaskResult(context.Background(), prefixIDs{}, "s", "2025-11-25", []byte(tc.in))
			} else {
				var ok bool
				if out, ok = completeResultTasks(context.Background(), []byte(tc.in), false, prefixIDs{}, "s", "2026-07-28"); !ok {
					t.Fatal("not ok")
				}
			}
			if string(out) != tc.want {
				t.Errorf("got  %s\nwant %s", out, tc.want)
			}
			if !json.Valid(out) {
				t.Errorf("not JSON: %s", out)
			}
		})
	}
}

// TestNoteCapabilities: a server's tasks capability is read from its
// initialize result; other answers are not taken for one.
func TestNoteCapabilities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		result     string
		recognized bool
		tasks      bool
	}{
		{`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{}}}}`, true, true},
		{`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}`, true, false},
		{`{"capabilities":{"tasks":true}}`, true, false},
		{`{"tools":[]}`, false, false},
		{``, false, false},
	} {
		var c Conn
		if got := c.noteCapabilities([]byte(tc.result)); got != tc.recognized || c.tasks.Load() != tc.tasks {
			t.Errorf("%s: recognized %v tasks %v, want %v %v", tc.result, got, c.tasks.Load(), tc.recognized, tc.tasks)
		}
	}
}

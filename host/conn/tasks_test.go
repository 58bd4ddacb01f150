package conn

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
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
				c := &Conn{cfg: &config.Server{Name: "s"}}
				out, _ = c.createTaskResult(context.Background(), prefixIDs{}, nil, "2025-11-25", []byte(tc.in))
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

// TestDecodeRetry: a retry's raw response (callRawRetry) comes back as the
// go-sdk client would give it — a result decoded, an error as a
// *jsonrpc.Error with its code and data — but for a task result, returned
// whole under TaskResultKey with its taskId named by the caller.
func TestDecodeRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		task     string // the task result wanted ("": none)
		code     int64  // the error wanted (0: none)
		text     string // the first content's text wanted
		inputs   bool   // input requests wanted
	}{
		{"task", `{"jsonrpc":"2.0","id":"x","result":{"resultType":"task","taskId":"t1","status":"working","ttlMs":null}}`,
			`{"resultType":"task","taskId":"s/2026-07-28/t1","status":"working","ttlMs":null}`, 0, "", false},
		{"complete", `{"id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}]}}`, "", 0, "hi", false},
		{"input required again", `{"id":1,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"requestState":"s"}}`, "", 0, "", true},
		{"error", `{"id":1,"error":{"code":-32042,"message":"x","data":{"a":1}}}`, "", -32042, "", false},
		{"garbage", `{"id":1`, "", -1, "", false},
		{"neither", `{"id":1}`, "", -1, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, sent, err := decodeRetry(context.Background(), prefixIDs{}, "s", "2026-07-28", []byte(tc.in), nil)
			if !sent {
				t.Fatal("not sent")
			}
			if tc.code != 0 {
				var rpc *jsonrpc.Error
				if err == nil || tc.code != -1 && (!errors.As(err, &rpc) || rpc.Code != tc.code) {
					t.Fatalf("got %+v, %v; want error %d", res, err, tc.code)
				}
				if tc.code == -32042 && string(rpc.Data) != `{"a":1}` {
					t.Errorf("error data %s", rpc.Data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			task, ok := TaskResultOf(res)
			if (tc.task != "") != ok || string(task) != tc.task {
				t.Errorf("task result %s (%v), want %s", task, ok, tc.task)
			}
			if tc.text != "" {
				if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != tc.text {
					t.Errorf("content %+v, want %q", res.Content, tc.text)
				}
			}
			if (res.InputRequests != nil) != tc.inputs {
				t.Errorf("input requests %+v", res.InputRequests)
			}
		})
	}
	// A server's own _meta member of the key is not a task result.
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"_meta":{"`+TaskResultKey+`":{"taskId":"x"}}}`), &res); err != nil {
		t.Fatal(err)
	}
	if _, ok := TaskResultOf(&res); ok {
		t.Error("a server's _meta member was taken for a task result")
	}
}

// FuzzDecodeRetry: whatever a server answers a retry with, decodeRetry
// returns a result or an error, never panics, and a task result it
// returns is valid JSON.
func FuzzDecodeRetry(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":{"resultType":"task","taskId":"t1"}}`))
	f.Add([]byte(`{"id":1,"error":{"code":-32602,"message":"x"}}`))
	f.Add([]byte(`{"id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`))
	f.Add([]byte(`{"id":1,"result":{"task":{"taskId":"t1","status":"working"}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, version := range []string{"2026-07-28", "2025-11-25"} { // (a 2025-11-25 CreateTaskResult too)
			res, _, err := decodeRetry(context.Background(), prefixIDs{}, "s", version, in, nil)
			if err == nil && res == nil {
				t.Fatal("neither result nor error")
			}
			if task, ok := TaskResultOf(res); ok && !json.Valid(task) {
				t.Fatalf("task result %q is not JSON", task)
			}
		}
	})
}

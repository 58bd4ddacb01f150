package tasksserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withTasks is the _meta of a request whose client declares the extension.
const withTasks = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// exchange sends one JSON-RPC request to s (parsed and dispatched as on any
// front) and returns the decoded response.
func exchange(t *testing.T, s *Server, method, params string) (result map[string]any, code int64, data string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
	req, jerr := parseMessage([]byte(body))
	var res any
	var err error
	if jerr != nil {
		err = jerr
	} else {
		res, err = s.handle(context.Background(), nil, req)
	}
	raw, eerr := response(req.id, res, err)
	if eerr != nil {
		t.Fatalf("%s: %v", method, eerr)
	}
	return decodeResponse(t, raw)
}

func decodeResponse(t *testing.T, raw []byte) (map[string]any, int64, string) {
	t.Helper()
	var resp struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code int64           `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	if resp.Error != nil {
		return nil, resp.Error.Code, string(resp.Error.Data)
	}
	return resp.Result, 0, ""
}

func TestHTTP(t *testing.T) {
	s := New(Options{})
	t.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	tests := []struct {
		name    string
		method  string // HTTP method; POST when empty
		body    string
		headers map[string]string
		status  int
		code    int64             // JSON-RPC error code, 0 for a result
		fields  map[string]string // result fields (JSON-encoded) that must be so
		data    string            // substring of the error's data
	}{
		{name: "discover advertises the extension", body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
			status: 200, fields: map[string]string{"capabilities": `{"extensions":{"io.modelcontextprotocol/tasks":{}},"tools":{}}`}},
		{name: "sync tool", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"W"}}}`,
			headers: map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": " greet "},
			status:  200, fields: map[string]string{"resultType": `"complete"`, "content": `[{"text":"Hello, W!","type":"text"}]`}},
		{name: "legacy task param does not promote", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"W"},"task":{"ttl":1}},` + withTasks[:0] + `"x":1}`,
			status: 200, fields: map[string]string{"resultType": `"complete"`}},
		{name: "task-supporting tool without the extension runs synchronously",
			body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0,"label":"x"}}}`,
			status: 200, fields: map[string]string{"resultType": `"complete"`}},
		{name: "per-request opt-in creates a task",
			body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":60},` + withTasks + `}}`,
			status: 200, fields: map[string]string{"resultType": `"task"`, "status": `"working"`, "ttlMs": `300000`, "pollIntervalMs": `200`}},
		{name: "required tool without the extension",
			body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"failing_job"}}`,
			status: 400, code: CodeMissingRequiredClientCapability, data: `"io.modelcontextprotocol/tasks":{}`},
		{name: "tasks/get without the extension, before the id lookup",
			body:   `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope"}}`,
			status: 400, code: CodeMissingRequiredClientCapability},
		{name: "tasks/get of an unknown task",
			body:   `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope",` + withTasks + `}}`,
			status: 400, code: -32602},
		{name: "tasks/result is removed", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"x",` + withTasks + `}}`,
			status: 404, code: -32601},
		{name: "tasks/list is removed", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`,
			status: 404, code: -32601},
		{name: "Mcp-Method mismatch", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}}`,
			headers: map[string]string{"Mcp-Method": "tasks/get"}, status: 400, code: CodeHeaderMismatch},
		{name: "Mcp-Name mismatch", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"a",` + withTasks + `}}`,
			headers: map[string]string{"Mcp-Name": "b"}, status: 400, code: CodeHeaderMismatch},
		{name: "Mcp-Name in base64", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}}`,
			headers: map[string]string{"Mcp-Name": "=?base64?Z3JlZXQ=?="}, status: 200, fields: map[string]string{"resultType": `"complete"`}},
		{name: "no protocol version header: errors on HTTP 200", body: `{"jsonrpc":"2.0","id":1,"method":"nope"}`,
			headers: map[string]string{"Mcp-Protocol-Version": ""}, status: 200, code: -32601},
		{name: "missing taskId", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{` + withTasks + `}}`,
			status: 400, code: -32602},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202},
		{name: "parse error", body: `{"jsonrpc":`, status: 400, code: -32700},
		{name: "GET", method: http.MethodGet, status: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.method
			if m == "" {
				m = http.MethodPost
			}
			req, err := http.NewRequest(m, ts.URL, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			for k, v := range tt.headers {
				if v == "" {
					req.Header.Del(k)
					continue
				}
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tt.status, raw)
			}
			if tt.status != 200 && tt.code == 0 {
				return
			}
			result, code, data := decodeResponse(t, raw)
			if code != tt.code {
				t.Fatalf("error code %d, want %d (%s)", code, tt.code, raw)
			}
			if !strings.Contains(data, tt.data) {
				t.Errorf("error data %s, want it to contain %s", data, tt.data)
			}
			for k, want := range tt.fields {
				got, _ := json.Marshal(result[k])
				if string(got) != want {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
			for _, k := range []string{"task", "ttl", "pollInterval", "requestState"} {
				if _, ok := result[k]; ok {
					t.Errorf("result carries %q: %s", k, raw)
				}
			}
		})
	}
}

// TestLifecycle drives tasks through every status, in a synctest bubble so
// that the tools' sleeps take no time.
func TestLifecycle(t *testing.T) {
	type step struct {
		method, params string
		sleep          time.Duration // before the step
		code           int64
		fields         map[string]string
		keys           []string // the inputRequests keys, when set
		absent         []string // result fields that must be absent
	}
	tests := []struct {
		name  string
		tool  string // created with the extension; its task id replaces ID in the steps
		args  string
		steps []step
	}{
		{name: "completes with the result inlined", tool: "slow_compute", args: `{"seconds":2,"label":"l"}`, steps: []step{
			{method: "tasks/get", params: `"taskId":"ID"`, fields: map[string]string{"status": `"working"`, "resultType": `"complete"`}, absent: []string{"result", "error"}},
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: 3 * time.Second,
				fields: map[string]string{"status": `"completed"`, "result": `{"content":[{"text":"computed \"l\" after 2s","type":"text"}]}`}},
			{method: "tasks/cancel", params: `"taskId":"ID"`, fields: map[string]string{"resultType": `"complete"`}, absent: []string{"taskId", "status"}},
			{method: "tasks/get", params: `"taskId":"ID"`, fields: map[string]string{"status": `"completed"`}},
		}},
		{name: "cancel while running", tool: "slow_compute", args: `{"seconds":60}`, steps: []step{
			{method: "tasks/cancel", params: `"taskId":"ID"`, fields: map[string]string{"resultType": `"complete"`}},
			{method: "tasks/get", params: `"taskId":"ID"`, fields: map[string]string{"status": `"cancelled"`}},
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Minute, fields: map[string]string{"status": `"cancelled"`}},
		}},
		{name: "tool error is completed with isError", tool: "failing_job", steps: []step{
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Second,
				fields: map[string]string{"status": `"completed"`, "result": `{"content":[{"text":"the job failed","type":"text"}],"isError":true}`}},
		}},
		{name: "panic is failed with an error", tool: "protocol_error_job", steps: []step{
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Second, fields: map[string]string{"status": `"failed"`}, absent: []string{"result"}},
		}},
		{name: "input one key", tool: "confirm_delete", args: `{"filename":"f"}`, steps: []step{
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Millisecond, fields: map[string]string{"status": `"input_required"`}, keys: []string{"confirm"}},
			{method: "tasks/update", params: `"taskId":"ID","inputResponses":{"unknown-key":{"ignored":true}}`, fields: map[string]string{"resultType": `"complete"`}, absent: []string{"status"}},
			{method: "tasks/get", params: `"taskId":"ID"`, fields: map[string]string{"status": `"input_required"`}, keys: []string{"confirm"}},
			{method: "tasks/update", params: `"taskId":"ID","inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}`},
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Millisecond,
				fields: map[string]string{"status": `"completed"`, "result": `{"content":[{"text":"deleted f","type":"text"}]}`}},
		}},
		{name: "input two keys answered one at a time", tool: "multi_input", steps: []step{
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Millisecond, keys: []string{"first", "second"}},
			{method: "tasks/update", params: `"taskId":"ID","inputResponses":{"first":{"action":"accept","content":{"name":"a"}}}`},
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Millisecond, fields: map[string]string{"status": `"input_required"`}, keys: []string{"second"}},
			{method: "tasks/update", params: `"taskId":"ID","inputResponses":{"second":{"action":"accept","content":{"name":"b"}}}`},
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: time.Millisecond,
				fields: map[string]string{"status": `"completed"`, "result": `{"content":[{"text":"got a and b","type":"text"}]}`}},
		}},
		{name: "forgotten after the TTL", tool: "slow_compute", args: `{"seconds":0}`, steps: []step{
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: 4 * time.Minute, fields: map[string]string{"status": `"completed"`}},
			{method: "tasks/get", params: `"taskId":"ID"`, sleep: 2 * time.Minute, code: -32602},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(Options{})
				defer s.Close()
				args := tt.args
				if args == "" {
					args = "{}"
				}
				created, code, _ := exchange(t, s, "tools/call", `"name":"`+tt.tool+`","arguments":`+args+`,`+withTasks)
				if code != 0 || created["resultType"] != "task" {
					t.Fatalf("tools/call: %v, code %d", created, code)
				}
				id := created["taskId"].(string)
				for i, st := range tt.steps {
					time.Sleep(st.sleep)
					synctest.Wait()
					res, code, _ := exchange(t, s, st.method, strings.ReplaceAll(st.params, "ID", id)+","+withTasks)
					if code != st.code {
						t.Fatalf("step %d %s: code %d, want %d (%v)", i, st.method, code, st.code, res)
					}
					for k, want := range st.fields {
						got, _ := json.Marshal(res[k])
						if string(got) != want {
							t.Errorf("step %d %s: %s = %s, want %s", i, st.method, k, got, want)
						}
					}
					for _, k := range st.absent {
						if _, ok := res[k]; ok {
							t.Errorf("step %d %s: %s present: %v", i, st.method, k, res)
						}
					}
					if st.keys != nil {
						reqs, _ := res["inputRequests"].(map[string]any)
						var keys []string
						for k := range reqs {
							keys = append(keys, k)
						}
						slices.Sort(keys)
						if !slices.Equal(keys, st.keys) {
							t.Errorf("step %d: inputRequests keys %v, want %v", i, keys, st.keys)
						}
					}
				}
			})
		})
	}
}

// TestMRTR: outside a task, input is asked by an InputRequiredResult and
// answered by the next tools/call; test_tool_with_task then creates a task.
func TestMRTR(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{})
		defer s.Close()
		r1, _, _ := exchange(t, s, "tools/call", `"name":"test_tool_with_task","arguments":{},`+withTasks)
		if r1["resultType"] != "input_required" || r1["taskId"] != nil {
			t.Fatalf("round 1: %v", r1)
		}
		if _, ok := r1["inputRequests"].(map[string]any)["user_name"]; !ok {
			t.Fatalf("round 1 asks no user_name: %v", r1)
		}
		r2, _, _ := exchange(t, s, "tools/call", `"name":"test_tool_with_task","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},`+withTasks)
		if r2["resultType"] != "task" || r2["requestState"] != nil || r2["inputRequests"] != nil {
			t.Fatalf("round 2: %v", r2)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		got, _, _ := exchange(t, s, "tasks/get", `"taskId":"`+r2["taskId"].(string)+`",`+withTasks)
		if txt, _ := json.Marshal(got["result"]); got["status"] != "completed" || !strings.Contains(string(txt), "Alice") {
			t.Fatalf("task: %v", got)
		}
		// A task-supporting tool without the extension asks the same way.
		sync1, _, _ := exchange(t, s, "tools/call", `"name":"confirm_delete","arguments":{"filename":"f"}`)
		if sync1["resultType"] != "input_required" {
			t.Fatalf("confirm_delete without the extension: %v", sync1)
		}
		sync2, _, _ := exchange(t, s, "tools/call", `"name":"confirm_delete","arguments":{"filename":"f"},"inputResponses":{"confirm":{"action":"decline"}}`)
		if txt, _ := json.Marshal(sync2["content"]); sync2["resultType"] != "complete" || !strings.Contains(string(txt), "kept f") {
			t.Fatalf("confirm_delete answered: %v", sync2)
		}
		if _, code, _ := exchange(t, s, "tools/call", `"name":"confirm_delete","inputResponses":{"confirm":12}`); code != -32602 {
			t.Fatalf("a malformed answer: code %d, want -32602", code)
		}
	})
}

// TestStdio runs the server over stdio under go-sdk's client (a real peer
// for initialize, tools/list and a sync call), then checks by hand that the
// session's initialize capabilities let tools/call create tasks.
func TestStdio(t *testing.T) {
	s := New(Options{})
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, sr, sw); sw.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	want := []string{"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "stdio"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "Hello, stdio!" {
		t.Fatalf("greet: %v, %v", res, err)
	}
	cs.Close()
	<-done

	// By hand: a session that declared the extension at initialize.
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
not json
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":60}}}
`)
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("answers %q, want 3", lines)
	}
	init, _, _ := decodeResponse(t, []byte(lines[0]))
	if init["protocolVersion"] != "2026-07-28" {
		t.Errorf("initialize: %v", init)
	}
	if _, code, _ := decodeResponse(t, []byte(lines[1])); code != -32700 {
		t.Errorf("not json: %s", lines[1])
	}
	if call, _, _ := decodeResponse(t, []byte(lines[2])); call["resultType"] != "task" {
		t.Errorf("tools/call in a session with the extension: %s", lines[2])
	}
}

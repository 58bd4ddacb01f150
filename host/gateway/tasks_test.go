package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/tasksserver"
)

// tasksUpstream is a tasks-capable upstream: a demo server's streamable
// HTTP handler, with its echo tool creating a task when the call asks for
// one (2026-07-28: the client declared the tasks extension in the request's
// _meta; 2025-11-25: the call has a task parameter) and the tasks methods
// answered. They are answered here as raw JSON-RPC because the go-sdk
// (v1.8.0) has no tasks support: no go-sdk server can return a task result
// or answer tasks/get.
type tasksUpstream struct {
	next http.Handler

	mu    sync.Mutex
	n     int
	tasks map[string]string // upstream task id: its status
	got   []string          // "METHOD TASKID" of each tasks request received
	calls []string          // the JSON-RPC id of each tools/call received
	plain bool              // declares no tasks support, answers no tasks
	// refuseRaw answers 401 to the requests of the host's raw lane (ids
	// "mcphost-raw-…"), as a server whose token the go-sdk client must
	// refresh first.
	refuseRaw bool
	crash     bool // the tasks methods end the connection, unanswered
	// notes: a 2025-11-25 tasks/get is answered on an event stream, after
	// the status notifications of its task and of a task no one created
	// (statusNotes).
	notes bool
	// resultNotes: a 2025-11-25 tasks/result is answered on an event
	// stream, after the status notifications statusNotes (then flushed),
	// once resultGate, when set, is closed (a long task).
	resultNotes bool
	resultGate  chan struct{}
	// push, when set, serves the session's standalone stream (GET) with
	// what is sent on it, as events (the notifications a server sends
	// outside any request).
	push chan []byte
}

// statusNotes are the 2025-11-25 status notifications a tasks upstream
// sends for its task id, one per line: that task's (working, with a
// message) and one of a task no client created ("up-other").
func statusNotes(id string) []byte {
	var out []byte
	for _, p := range []map[string]any{
		{"taskId": id, "status": "working", "statusMessage": "half way", "createdAt": "2026-11-28T12:00:00Z", "lastUpdatedAt": "2026-11-28T12:00:01Z", "ttl": 60000, "pollInterval": 500,
			"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": id}}},
		{"taskId": "up-other", "status": "working", "createdAt": "2026-11-28T12:00:00Z", "lastUpdatedAt": "2026-11-28T12:00:01Z", "ttl": 60000},
	} {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": p})
		out = append(append(out, b...), '\n')
	}
	return out
}

// newTasksUpstream serves a tasksUpstream of version: a 2025-11-25 server
// with sessions, or one of 2026-07-28 whose requests stand alone.
func newTasksUpstream(t *testing.T, version string) (*tasksUpstream, string) {
	return newTasksUpstreamOf(t, version, false, false)
}

// newTasksUpstreamOf is newTasksUpstream whose demoserver also offers, with
// passthrough, what a gateway passes through besides tools (its log tool),
// and which, with plain, declares no tasks support (it only records the
// calls).
func newTasksUpstreamOf(t *testing.T, version string, passthrough, plain bool) (*tasksUpstream, string) {
	var versions []string
	if version < newProtocol {
		versions = []string{version}
	}
	srv := demoserver.New(&demoserver.Options{Name: "t", ProtocolVersions: versions, Passthrough: passthrough})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: version >= newProtocol})
	u := &tasksUpstream{next: h, tasks: map[string]string{}, plain: plain}
	hs := httptest.NewServer(u)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return u, hs.URL
}

// callIDs returns the JSON-RPC id of each tools/call received.
func (u *tasksUpstream) callIDs() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls...)
}

func (u *tasksUpstream) received() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

func (u *tasksUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && u.push != nil && r.Header.Get("Mcp-Session-Id") != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case b := <-u.push:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
			}
		}
	}
	if r.Method != http.MethodPost {
		u.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name   string          `json:"name"`
			TaskID string          `json:"taskId"`
			Task   json.RawMessage `json:"task"`
			Meta   struct {
				Caps struct {
					Extensions map[string]any `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(body, &msg)
	modern := r.Header.Get("Mcp-Protocol-Version") >= newProtocol
	u.mu.Lock()
	if msg.Method == "tools/call" {
		u.calls = append(u.calls, string(msg.ID))
	}
	refuse := u.refuseRaw
	u.mu.Unlock()
	if refuse && bytes.Contains(msg.ID, []byte("mcphost-raw-")) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if u.plain {
		u.next.ServeHTTP(w, r)
		return
	}
	if msg.Method == "initialize" || msg.Method == "server/discover" {
		// The go-sdk server declares no tasks capability, nor the tasks
		// extension: added to its answer (JSON, or an event stream's
		// data).
		rec := httptest.NewRecorder()
		u.next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		caps := `"capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}},`
		if msg.Method == "server/discover" {
			caps = `"capabilities":{"extensions":{"` + gateway.ExtensionTasks + `":{}},`
		}
		w.Write(bytes.Replace(rec.Body.Bytes(), []byte(`"capabilities":{`), []byte(caps), 1))
		return
	}
	if !u.serveTasks(w, r, msg.ID, msg.Method, msg.Params.Name, msg.Params.TaskID, modern, msg.Params.Task != nil, ext(msg.Params.Meta.Caps.Extensions)) {
		u.next.ServeHTTP(w, r) // (not under u.mu: a listen stream lasts)
	}
}

func ext(exts map[string]any) bool {
	_, ok := exts[gateway.ExtensionTasks]
	return ok
}

// serveTasks answers a task-augmented tools/call of echo and the tasks
// methods, and reports whether it did.
func (u *tasksUpstream) serveTasks(w http.ResponseWriter, r *http.Request, rid json.RawMessage, method, name, taskID string, modern, task, ext bool) bool {
	reply := func(result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": result})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	const when = "2026-11-28T12:00:00Z"
	switch method {
	case "tools/call":
		if name != "echo" || !(modern && ext || !modern && task) {
			return false
		}
		u.n++
		id := fmt.Sprintf("up-%d", u.n)
		u.tasks[id] = "working"
		if modern {
			reply(map[string]any{"resultType": "task", "taskId": id, "status": "working", "createdAt": when, "lastUpdatedAt": when, "ttlMs": 60000})
		} else {
			reply(map[string]any{"task": map[string]any{"taskId": id, "status": "working", "createdAt": when, "lastUpdatedAt": when, "ttl": 60000}})
		}
		return true
	case "tasks/get", "tasks/cancel", "tasks/result", "tasks/update", "tasks/list":
		u.got = append(u.got, strings.TrimSpace(method+" "+taskID))
		if u.crash {
			panic(http.ErrAbortHandler) // (the connection ends, unanswered)
		}
		if method == "tasks/list" {
			var list []any
			for id, st := range u.tasks {
				list = append(list, map[string]any{"taskId": id, "status": st})
			}
			reply(map[string]any{"tasks": list})
			return true
		}
		st, ok := u.tasks[taskID]
		if !ok {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "error": map[string]any{"code": -32602, "message": "unknown task"}})
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return true
		}
		result := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
		switch method {
		case "tasks/get":
			u.tasks[taskID] = "completed"
			detail := map[string]any{"taskId": taskID, "status": "completed", "createdAt": when, "lastUpdatedAt": when}
			if modern {
				detail["resultType"], detail["result"] = "complete", result
			}
			if u.notes && !modern {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, n := range bytes.Split(bytes.TrimSpace(statusNotes(taskID)), []byte("\n")) {
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", n)
				}
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": detail})
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				return true
			}
			reply(detail)
		case "tasks/cancel":
			if modern {
				reply(map[string]any{"resultType": "complete"})
			} else {
				reply(map[string]any{"taskId": taskID, "status": st})
			}
		case "tasks/update":
			reply(map[string]any{"resultType": "complete"})
		case "tasks/result":
			result["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": taskID}}
			if u.resultNotes && !modern {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, n := range bytes.Split(bytes.TrimSpace(statusNotes(taskID)), []byte("\n")) {
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", n)
				}
				w.(http.Flusher).Flush()
				if gate := u.resultGate; gate != nil {
					u.mu.Unlock() // (relocked for the deferred unlock)
					select {
					case <-gate:
					case <-r.Context().Done():
					}
					u.mu.Lock()
				}
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": result})
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				return true
			}
			reply(result)
		}
		return true
	}
	return false
}

// rpcResponse is a JSON-RPC response as a client reads it.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (r rpcResponse) code() int {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// taskClient is a downstream client of one front and era, speaking raw
// JSON-RPC (the go-sdk client has no tasks methods).
type taskClient interface {
	// call sends the request of method with params (which carry the
	// client's _meta where its era needs it) and returns the response.
	call(t *testing.T, method string, params map[string]any) rpcResponse
}

// httpClient2026 posts stateless 2026-07-28 requests.
type httpClient2026 struct {
	url     string
	caps    map[string]any
	n       int
	headers map[string]string // more headers of each request (Authorization, …)
}

func (c *httpClient2026) call(t *testing.T, method string, params map[string]any) rpcResponse {
	t.Helper()
	c.n++
	p := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": newProtocol, "io.modelcontextprotocol/clientCapabilities": c.caps}}
	for k, v := range params {
		p[k] = v
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.n, "method": method, "params": p})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", newProtocol)
	req.Header.Set("Mcp-Method", method)
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	return postRPC(t, req)
}

// httpClient2025 is a client of a 2025-11-25 session.
type httpClient2025 struct {
	url, sid string
	bearer   string // the bearer token sent ("": none)
	n        int
	init     rpcResponse // the initialize's answer
}

func newHTTPClient2025(t *testing.T, url string) *httpClient2025 {
	return newHTTPClient2025As(t, url, "")
}

// newHTTPClient2025As is newHTTPClient2025 sending the bearer token
// bearer.
func newHTTPClient2025As(t *testing.T, url, bearer string) *httpClient2025 {
	t.Helper()
	c := &httpClient2025{url: url, bearer: bearer}
	res := c.post(t, "initialize", map[string]any{"protocolVersion": oldProtocol, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tasks-test", "version": "1"}}, true)
	if res.Error != nil {
		t.Fatalf("initialize: %+v", res.Error)
	}
	c.init = res
	c.post(t, "notifications/initialized", nil, false)
	return c
}

func (c *httpClient2025) post(t *testing.T, method string, params map[string]any, isCall bool) rpcResponse {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if isCall {
		c.n++
		msg["id"] = c.n
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", oldProtocol)
	}
	if !isCall {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return rpcResponse{}
	}
	var sid string
	res := postRPCWith(t, req, &sid)
	if c.sid == "" {
		c.sid = sid
	}
	return res
}

func (c *httpClient2025) call(t *testing.T, method string, params map[string]any) rpcResponse {
	t.Helper()
	return c.post(t, method, params, true)
}

func postRPC(t *testing.T, req *http.Request) rpcResponse {
	t.Helper()
	return postRPCWith(t, req, nil)
}

// postRPCWith posts req and reads its response (JSON, or the first message
// of an event stream); sid gets the session id it sets, if any.
func postRPCWith(t *testing.T, req *http.Request, sid *string) rpcResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if sid != nil {
		*sid = resp.Header.Get("Mcp-Session-Id")
	}
	body, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(body), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				body = []byte(data)
				break
			}
		}
	}
	var r rpcResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: status %d, body %q: %v", req.Header.Get("Mcp-Method"), resp.StatusCode, body, err)
	}
	return r
}

// stdioTaskClient speaks to the gateway's stdio front.
type stdioTaskClient struct {
	w       io.Writer
	r       *bufio.Reader
	version string
	caps    map[string]any
	n       int
	init    rpcResponse // the initialize's answer
	notes   [][]byte    // the notifications read while waiting for answers
}

func newStdioTaskClient(t *testing.T, g *gateway.Gateway, version string, caps map[string]any) *stdioTaskClient {
	t.Helper()
	w, r := servePipes(t, g)
	c := &stdioTaskClient{w: w, r: bufio.NewReader(r), version: version, caps: caps}
	res := c.send(t, "initialize", map[string]any{"protocolVersion": version, "capabilities": caps, "clientInfo": map[string]any{"name": "tasks-test", "version": "1"}}, true)
	if res.Error != nil {
		t.Fatalf("initialize: %+v", res.Error)
	}
	c.init = res
	c.send(t, "notifications/initialized", nil, false)
	return c
}

func (c *stdioTaskClient) send(t *testing.T, method string, params map[string]any, isCall bool) rpcResponse {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if isCall {
		c.n++
		msg["id"] = c.n
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	if !isCall {
		return rpcResponse{}
	}
	type line struct {
		b   []byte
		err error
	}
	for {
		ch := make(chan line, 1)
		go func() { // (ends with the pipe, closed by the test's cleanup)
			b, err := c.r.ReadBytes('\n')
			ch <- line{b, err}
		}()
		var l line
		select {
		case l = <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer", method)
		}
		if l.err != nil {
			t.Fatalf("%s: %v", method, l.err)
		}
		var r rpcResponse
		if err := json.Unmarshal(l.b, &r); err != nil {
			t.Fatalf("%s: %q: %v", method, l.b, err)
		}
		if string(r.ID) == fmt.Sprint(c.n) {
			return r
		}
		if r.ID == nil {
			c.notes = append(c.notes, l.b)
		}
	}
}

func (c *stdioTaskClient) call(t *testing.T, method string, params map[string]any) rpcResponse {
	t.Helper()
	if c.version >= newProtocol {
		p := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": newProtocol, "io.modelcontextprotocol/clientCapabilities": c.caps}}
		for k, v := range params {
			p[k] = v
		}
		params = p
	}
	return c.send(t, method, params, true)
}

var tasksExt = map[string]any{"extensions": map[string]any{gateway.ExtensionTasks: map[string]any{}}}

// TestTasksThroughTheGateway: a task an upstream creates reaches the client
// under an id of the gateway's (never the upstream's), and the tasks
// methods with that id reach the upstream with its own id restored and
// come back under the client's; an id the gateway did not issue is -32602
// (nothing sent upstream); on both fronts, both eras. On the old code the
// tasks methods got -32601 (or a 400) and the task id was the upstream's.
func TestTasksThroughTheGateway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version string
		client  func(t *testing.T, p *ptGateway) taskClient
	}{
		{"http 2026-07-28", newProtocol, func(t *testing.T, p *ptGateway) taskClient {
			return &httpClient2026{url: p.url, caps: tasksExt}
		}},
		{"http 2025-11-25", oldProtocol, func(t *testing.T, p *ptGateway) taskClient { return newHTTPClient2025(t, p.url) }},
		{"stdio 2026-07-28", newProtocol, func(t *testing.T, p *ptGateway) taskClient {
			return newStdioTaskClient(t, p.g, newProtocol, tasksExt)
		}},
		{"stdio 2025-11-25", oldProtocol, func(t *testing.T, p *ptGateway) taskClient {
			return newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up, url := newTasksUpstream(t, tc.version)
			p := serveTasksAt(t, url, ptOptions{})
			c := tc.client(t, p)
			modern := tc.version >= newProtocol
			if !modern {
				// The upstream declared the tasks capability: so does the
				// gateway.
				var init rpcResponse
				switch c := c.(type) {
				case *httpClient2025:
					init = c.init
				case *stdioTaskClient:
					init = c.init
				}
				caps, _ := init.Result["capabilities"].(map[string]any)
				if _, ok := caps["tasks"].(map[string]any); !ok {
					t.Errorf("the gateway's capabilities %v declare no tasks", caps)
				}
			}
			args := map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"}}
			if !modern {
				args["task"] = map[string]any{"ttl": 60000}
			}
			res := c.call(t, "tools/call", args)
			var id string
			if modern {
				id, _ = res.Result["taskId"].(string)
				if res.Result["resultType"] != "task" {
					t.Fatalf("tools/call: %+v %+v, want a task result", res.Result, res.Error)
				}
			} else {
				task, _ := res.Result["task"].(map[string]any)
				id, _ = task["taskId"].(string)
			}
			if !strings.HasPrefix(id, "mcpt-") {
				t.Fatalf("task id %q (result %+v, error %+v), want one of the gateway's", id, res.Result, res.Error)
			}

			methods := []string{"tasks/get", "tasks/cancel"}
			if modern {
				methods = append(methods, "tasks/update")
			} else {
				methods = append(methods, "tasks/result")
			}
			for _, m := range methods {
				params := map[string]any{"taskId": id}
				if m == "tasks/update" {
					params["inputResponses"] = map[string]any{}
				}
				res := c.call(t, m, params)
				if res.Error != nil {
					t.Fatalf("%s: %+v", m, res.Error)
				}
				switch m {
				case "tasks/get":
					if res.Result["taskId"] != id || res.Result["status"] != "completed" {
						t.Errorf("tasks/get: %+v, want the task under the client's id", res.Result)
					}
				case "tasks/result":
					rt, _ := res.Result["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any)
					if rt["taskId"] != id {
						t.Errorf("tasks/result: related task %+v, want %s", rt, id)
					}
				}
			}
			if !modern {
				res := c.call(t, "tasks/list", nil)
				tasks, _ := res.Result["tasks"].([]any)
				if res.Error != nil || len(tasks) != 1 || tasks[0].(map[string]any)["taskId"] != id {
					t.Errorf("tasks/list: %+v %+v, want just %s", res.Result, res.Error, id)
				}
			} else if res := c.call(t, "tasks/list", nil); res.code() != -32601 {
				t.Errorf("tasks/list of a 2026-07-28 client: %+v %+v, want -32601", res.Result, res.Error)
			}
			want := []string{"tasks/get up-1", "tasks/cancel up-1", methods[2] + " up-1"}
			if !modern {
				want = append(want, "tasks/list")
			}
			if got := up.received(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("the upstream received %q, want %q", got, want)
			}

			// Ids the gateway did not issue: -32602, and nothing upstream.
			for _, bad := range []string{"up-1", "mcpt-", "mcpt-AAAA", id[:len(id)-2] + "xx", "mcpt-" + strings.Repeat("A", 40)} {
				if res := c.call(t, "tasks/get", map[string]any{"taskId": bad}); res.code() != -32602 {
					t.Errorf("tasks/get %q: %+v %+v, want -32602", bad, res.Result, res.Error)
				}
			}
			if got := up.received(); len(got) != len(want) {
				t.Errorf("the upstream received %q for ids the gateway did not issue", got[len(want):])
			}

			// The upstream's connection ends under a request: an error, no hang.
			up.mu.Lock()
			up.crash = true
			up.mu.Unlock()
			if res := c.call(t, "tasks/get", map[string]any{"taskId": id}); res.Error == nil {
				t.Errorf("tasks/get of a crashed upstream: %+v, want an error", res.Result)
			}
		})
	}
}

// TestTasksNeedTheExtension: a 2026-07-28 client that did not declare the
// tasks extension is answered -32021 (before its task id is looked up).
func TestTasksNeedTheExtension(t *testing.T) {
	t.Parallel()
	_, url := newTasksUpstream(t, newProtocol)
	p := serveTasksAt(t, url, ptOptions{})
	c := &httpClient2026{url: p.url, caps: map[string]any{}}
	// The upstream declared the extension: so does the gateway.
	disc := c.call(t, "server/discover", nil)
	exts, _ := disc.Result["capabilities"].(map[string]any)["extensions"].(map[string]any)
	if _, ok := exts[gateway.ExtensionTasks]; !ok {
		t.Errorf("server/discover: %+v %+v, want the tasks extension declared", disc.Result, disc.Error)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if res := c.call(t, m, map[string]any{"taskId": "gate-test"}); res.code() != gateway.CodeMissingCapability ||
			!strings.Contains(string(res.Error.Data), `"requiredCapabilities":{"extensions":{"`+gateway.ExtensionTasks) {
			t.Errorf("%s: %+v %+v, want %d with the required capabilities", m, res.Result, res.Error, gateway.CodeMissingCapability)
		}
	}
	// A call without the extension is answered as it is (no task).
	res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"}})
	if res.Error != nil || res.Result["taskId"] != nil {
		t.Errorf("tools/call without the extension: %+v %+v", res.Result, res.Error)
	}
}

// TestNoTasksCapabilityWithoutTasks: over servers that declare no tasks
// capability, the gateway declares none to a 2025-11-25 client, nor the
// tasks extension to a 2026-07-28 one.
func TestNoTasksCapabilityWithoutTasks(t *testing.T) {
	t.Parallel()
	g := gatewayOf(t, []*config.Server{demo("a")})
	c := newStdioTaskClient(t, g, oldProtocol, map[string]any{})
	if caps, _ := c.init.Result["capabilities"].(map[string]any); caps == nil || caps["tasks"] != nil {
		t.Errorf("capabilities %v, want no tasks", caps)
	}
	c = newStdioTaskClient(t, g, newProtocol, tasksExt)
	caps, _ := c.init.Result["capabilities"].(map[string]any)
	if exts, _ := caps["extensions"].(map[string]any); caps == nil || exts[gateway.ExtensionTasks] != nil {
		t.Errorf("capabilities %v, want no tasks extension", caps)
	}
}

// TestTasksAcrossReplicas: a task created through one replica is reached
// through another given the same MCPHOST_SESSION_KEYS (nothing is shared
// per task: the id carries its route), and not through one given others.
func TestTasksAcrossReplicas(t *testing.T) {
	t.Parallel()
	up, url := newTasksUpstream(t, newProtocol)
	keys := func(s string) *gateway.Options {
		k, err := sealbox.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return &gateway.Options{Keys: k}
	}
	const shared = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // (32 bytes, base64)
	const other = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
	server := []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}
	a := ptServe(t, ptOptions{servers: server, gopts: keys(shared)})
	b := ptServe(t, ptOptions{servers: server, gopts: keys(shared)})
	c := ptServe(t, ptOptions{servers: server, gopts: keys(other)})
	res := (&httpClient2026{url: a.url, caps: tasksExt}).call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"}})
	id, _ := res.Result["taskId"].(string)
	if !strings.HasPrefix(id, "mcpt-") {
		t.Fatalf("tools/call through a: %+v %+v", res.Result, res.Error)
	}
	if res := (&httpClient2026{url: b.url, caps: tasksExt}).call(t, "tasks/get", map[string]any{"taskId": id}); res.Error != nil || res.Result["taskId"] != id {
		t.Errorf("tasks/get through b: %+v %+v", res.Result, res.Error)
	}
	if res := (&httpClient2026{url: c.url, caps: tasksExt}).call(t, "tasks/get", map[string]any{"taskId": id}); res.code() != -32602 {
		t.Errorf("tasks/get through c (other keys): %+v %+v, want -32602", res.Result, res.Error)
	}
	if got := up.received(); len(got) != 1 || got[0] != "tasks/get up-1" {
		t.Errorf("the upstream received %q", got)
	}
}

// TestTaskAfterInputRound: a multi-round-trip call whose retry (the
// client's answers and the gateway's sealed request state) is answered
// with a task — the conformance scenario tasks-mrtr-composition — reaches
// the client as that task, under an id of the gateway's that tasks/get
// serves; on both fronts. The upstream is internal/tasksserver, the real
// peer the conformance suite scores directly. On the old code the retry
// went through the go-sdk client, whose CallToolResult has no place for a
// task: the client got resultType "complete", no taskId.
func TestTaskAfterInputRound(t *testing.T) {
	t.Parallel()
	caps := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{gateway.ExtensionTasks: map[string]any{}}}
	for _, tc := range []struct {
		name   string
		client func(t *testing.T, p *ptGateway) taskClient
	}{
		{"http", func(t *testing.T, p *ptGateway) taskClient { return &httpClient2026{url: p.url, caps: caps} }},
		{"stdio", func(t *testing.T, p *ptGateway) taskClient { return newStdioTaskClient(t, p.g, newProtocol, caps) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(tasksserver.New(tasksserver.Options{}))
			t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
			p := ptServe(t, ptOptions{servers: []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}})
			if len(p.problems) > 0 {
				t.Fatalf("sync: %v", p.problems)
			}
			c := tc.client(t, p)
			const tool = "mcp__t__test_tool_with_task"
			res := c.call(t, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
			reqs, _ := res.Result["inputRequests"].(map[string]any)
			state, _ := res.Result["requestState"].(string)
			if res.Result["resultType"] != "input_required" || len(reqs) != 1 || state == "" {
				t.Fatalf("round 1: %+v %+v, want input_required with one request and a state", res.Result, res.Error)
			}
			answers := map[string]any{}
			for k := range reqs {
				answers[k] = map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}
			}
			res = c.call(t, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}, "inputResponses": answers, "requestState": state})
			id, _ := res.Result["taskId"].(string)
			if res.Result["resultType"] != "task" || !strings.HasPrefix(id, "mcpt-") || res.Result["requestState"] != nil || res.Result["inputRequests"] != nil {
				t.Fatalf("round 2: %+v %+v, want a task under an id of the gateway's", res.Result, res.Error)
			}
			for _, k := range []string{"status", "createdAt", "lastUpdatedAt", "ttlMs"} {
				if _, ok := res.Result[k]; !ok {
					t.Errorf("round 2's task result %+v lacks %s", res.Result, k)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				res = c.call(t, "tasks/get", map[string]any{"taskId": id})
				if res.Error != nil || res.Result["taskId"] != id {
					t.Fatalf("tasks/get: %+v %+v", res.Result, res.Error)
				}
				if res.Result["status"] == "completed" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("tasks/get: %+v, still not completed", res.Result)
				}
				time.Sleep(50 * time.Millisecond) // (the upstream's task runs in real time)
			}
			b, _ := json.Marshal(res.Result["result"])
			if !strings.Contains(string(b), "Alice") {
				t.Errorf("the task's result %s does not carry the answer", b)
			}
		})
	}
}

// legacyTasksEra, as rawToolsChildEnv, makes the test binary's stdio
// upstream rawTasks2025.
const legacyTasksEra = "legacytasks"

// rawTasks2025 answers one JSON-RPC request of a 2025-11-25 server that
// declares capabilities.tasks at its initialize and answers a tools/call
// with a task parameter with a CreateTaskResult (task "up-1") and
// tasks/get of it; the rest as rawTools of 2025-11-25. Raw JSON-RPC: no
// go-sdk server can declare the tasks capability or create a task.
func rawTasks2025(line []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Task            json.RawMessage `json:"task"`
			TaskID          string          `json:"taskId"`
			Arguments       struct {
				Message string `json:"message"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
		return nil
	}
	task := map[string]any{"taskId": "up-1", "status": "working", "createdAt": "2026-11-28T12:00:00Z", "lastUpdatedAt": "2026-11-28T12:00:00Z", "ttl": 60000}
	var result any
	switch {
	case req.Method == "initialize":
		result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "serverInfo": map[string]any{"name": "raw", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}}
	case req.Method == "tools/call" && req.Params.Task != nil && req.Params.Arguments.Message == "early":
		// (The task's status first, before the CreateTaskResult:
		// tasknotes_test.go.)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"task": task}})
		return append(statusNotes("up-1"), b...)
	case req.Method == "tools/call" && req.Params.Task != nil:
		result = map[string]any{"task": task}
	case req.Method == "tasks/get" && req.Params.TaskID == "up-1":
		// (Its status notifications first: tasknotes_test.go.)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": task})
		return append(statusNotes("up-1"), b...)
	case req.Method == "tasks/get":
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "no such task"}})
		return b
	default:
		return rawTools(line, false)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	return b
}

// TestTasksOfAStdioUpstream2025: a stdio server that declares 2025-11-25's
// capabilities.tasks at its initialize (read by the stdio connection's
// wrapper: the go-sdk client does not decode it) makes the gateway declare
// the tasks capability to a 2025-11-25 client; its task comes back under an
// id of the gateway's, which tasks/get routes back to the upstream's.
func TestTasksOfAStdioUpstream2025(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	g := gatewayOf(t, []*config.Server{{Name: "t", Transport: config.TransportStdio, Command: exe,
		Env: map[string]string{rawToolsChildEnv: legacyTasksEra}, Approved: true, ConnectTimeout: 10 * time.Second}})
	c := newStdioTaskClient(t, g, oldProtocol, map[string]any{})
	caps, _ := c.init.Result["capabilities"].(map[string]any)
	if _, ok := caps["tasks"].(map[string]any); !ok {
		t.Errorf("the gateway's capabilities %v declare no tasks, over a stdio server that does", caps)
	}
	res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__job", "arguments": map[string]any{}, "task": map[string]any{"ttl": 60000}})
	task, _ := res.Result["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if !strings.HasPrefix(id, "mcpt-") {
		t.Fatalf("tools/call: %+v %+v, want a task under an id of the gateway's", res.Result, res.Error)
	}
	if res := c.call(t, "tasks/get", map[string]any{"taskId": id}); res.Error != nil || res.Result["taskId"] != id || res.Result["status"] != "working" {
		t.Errorf("tasks/get: %+v %+v, want the upstream's task under the client's id", res.Result, res.Error)
	}
}

// TestTasksListedAcrossReplicas: a 2025-11-25 task created through one
// replica is listed by tasks/list through another sharing its state and
// keys (the shared record, cluster.TasksKey), under the same id; a replica
// given other keys lists none of it. On the old code (ownership in memory
// per replica), b listed nothing.
func TestTasksListedAcrossReplicas(t *testing.T) {
	t.Parallel()
	_, url := newTasksUpstream(t, oldProtocol)
	opts := func(s string, st state.Backend) *gateway.Options {
		k, err := sealbox.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return &gateway.Options{Keys: k, State: st}
	}
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	const shared = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // (32 bytes, base64)
	const other = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
	server := []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}
	a := ptServe(t, ptOptions{servers: server, gopts: opts(shared, st)})
	b := ptServe(t, ptOptions{servers: server, gopts: opts(shared, st)})
	c := ptServe(t, ptOptions{servers: server, gopts: opts(other, st)})
	res := newHTTPClient2025(t, a.url).call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"}, "task": map[string]any{"ttl": 60000}})
	task, _ := res.Result["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if !strings.HasPrefix(id, "mcpt-") {
		t.Fatalf("tools/call through a: %+v %+v", res.Result, res.Error)
	}
	listed := func(url string) []any {
		res := newHTTPClient2025(t, url).call(t, "tasks/list", nil)
		if res.Error != nil {
			t.Fatalf("tasks/list: %+v", res.Error)
		}
		tasks, _ := res.Result["tasks"].([]any)
		return tasks
	}
	// (The record is written apart from the call: b may list it a moment
	// later.)
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasks := listed(b.url)
		if len(tasks) == 1 && tasks[0].(map[string]any)["taskId"] == id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks/list through b: %+v, want just %s", tasks, id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tasks := listed(c.url); len(tasks) != 0 {
		t.Errorf("tasks/list through c (other keys): %+v, want none", tasks)
	}
}

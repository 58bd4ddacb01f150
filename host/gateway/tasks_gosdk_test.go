package gateway_test

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/internal/testing/tasksserver"
)

// TestTaskResultOnTheGoSDKPath: a 2026-07-28 call that the relay does not
// take — a progress token or other metadata in its _meta, or a call the
// permission rules ask about (answered, then retried) — goes through the
// go-sdk server and the host's call; when the upstream answers it with a
// task, the client still gets the task, under an id of the gateway's that
// tasks/get resolves. On the old code the go-sdk client decoded the task
// result into a CallToolResult: no resultType "task", no taskId.
func TestTaskResultOnTheGoSDKPath(t *testing.T) {
	t.Parallel()
	caps := map[string]any{"elicitation": map[string]any{}, "extensions": tasksExt["extensions"]}
	const tool = "mcp__t__failing_job" // (task support required: always a task for a client with the extension)
	askJob := config.PermissionRule{Behavior: permissions.Ask, Pattern: tool, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	for _, front := range []struct {
		name   string
		client func(t *testing.T, p *ptGateway) taskClient
	}{
		{"http", func(t *testing.T, p *ptGateway) taskClient { return &httpClient2026{url: p.url, caps: caps} }},
		{"stdio", func(t *testing.T, p *ptGateway) taskClient { return newStdioTaskClient(t, p.g, newProtocol, caps) }},
	} {
		for _, tc := range []struct {
			name  string
			meta  map[string]any // the call's own _meta members
			rules []config.PermissionRule
		}{
			{name: "progress token", meta: map[string]any{"progressToken": "p1"}},
			{name: "other metadata", meta: map[string]any{"example.com/hint": 1}},
			{name: "asked, then approved", rules: []config.PermissionRule{askJob}},
		} {
			for _, upstream := range []string{"http", "stdio"} {
				t.Run(front.name+"/"+tc.name+"/"+upstream+" upstream", func(t *testing.T) {
					t.Parallel()
					p := ptServe(t, ptOptions{rules: tc.rules, servers: []*config.Server{tasksServer(t, upstream)}})
					if len(p.problems) > 0 {
						t.Fatalf("sync: %v", p.problems)
					}
					c := front.client(t, p)
					params := map[string]any{"name": tool, "arguments": map[string]any{}}
					if tc.meta != nil {
						meta := map[string]any{"io.modelcontextprotocol/protocolVersion": newProtocol, "io.modelcontextprotocol/clientCapabilities": caps}
						for k, v := range tc.meta {
							meta[k] = v
						}
						params["_meta"] = meta
					}
					res := c.call(t, "tools/call", params)
					if tc.rules != nil {
						state, _ := res.Result["requestState"].(string)
						if res.Result["resultType"] != "input_required" || state == "" {
							t.Fatalf("the asked call: %+v %+v, want the gateway's question", res.Result, res.Error)
						}
						params["inputResponses"] = map[string]any{"mcphost-permission": map[string]any{"action": "accept", "content": map[string]any{"decision": "allow"}}}
						params["requestState"] = state
						res = c.call(t, "tools/call", params)
					}
					gatewayTask2026(t, c, res)
				})
			}
		}
	}
}

// tasksServerEra, as rawToolsChildEnv, makes the test binary's stdio
// upstream internal/testing/tasksserver.
const tasksServerEra = "tasksserver"

// tasksServer is server "t", internal/testing/tasksserver over upstream:
// "http" (stateless 2026-07-28) or "stdio" (the test binary as a child).
func tasksServer(t *testing.T, upstream string) *config.Server {
	t.Helper()
	if upstream == "stdio" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return &config.Server{Name: "t", Transport: config.TransportStdio, Command: exe,
			Env: map[string]string{rawToolsChildEnv: tasksServerEra}, Approved: true, ConnectTimeout: 10 * time.Second}
	}
	hs := httptest.NewServer(tasksserver.New(tasksserver.Options{}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return &config.Server{Name: "t", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
}

// gatewayTask2026 checks that res, c's answer to a 2026-07-28 tools/call,
// is a task under an id of the gateway's, which tasks/get through c
// resolves.
func gatewayTask2026(t *testing.T, c taskClient, res rpcResponse) {
	t.Helper()
	id, _ := res.Result["taskId"].(string)
	if res.Result["resultType"] != "task" || !strings.HasPrefix(id, "mcpt-") {
		t.Fatalf("tools/call: %+v %+v, want a task under an id of the gateway's", res.Result, res.Error)
	}
	got := c.call(t, "tasks/get", map[string]any{"taskId": id})
	if got.Error != nil || got.Result["taskId"] != id || got.Result["status"] == nil {
		t.Fatalf("tasks/get %s: %+v %+v, want the task", id, got.Result, got.Error)
	}
}

// serveTasksAt serves, with o's other options, a gateway of one server
// "t" at url (a tasks upstream's), synced without problems.
func serveTasksAt(t *testing.T, url string, o ptOptions) *ptGateway {
	t.Helper()
	o.servers = []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}
	p := ptServe(t, o)
	if len(p.problems) > 0 {
		t.Fatalf("sync: %v", p.problems)
	}
	return p
}

// taskFront names a front and opens a task client of it on a gateway.
type taskFront struct {
	name   string
	client func(t *testing.T, p *ptGateway) taskClient
}

// fronts2025 are the 2025-11-25 task clients of the HTTP and stdio
// fronts, declaring no capabilities.
func fronts2025() []taskFront {
	return []taskFront{
		{"http", func(t *testing.T, p *ptGateway) taskClient { return newHTTPClient2025(t, p.url) }},
		{"stdio", func(t *testing.T, p *ptGateway) taskClient {
			return newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})
		}},
	}
}

// TestTask2025OnTheGoSDKPath: a 2025-11-25 task-augmented call that the
// relay does not take (a progress token or other metadata in its _meta)
// keeps its task parameter on the go-sdk path (the go-sdk's
// CallToolParams have no field for it), and the upstream's
// CreateTaskResult reaches the client under an id of the gateway's that
// tasks/get resolves. On the old code the task parameter was dropped: the
// call ran as a plain one, and the client got no task.
func TestTask2025OnTheGoSDKPath(t *testing.T) {
	t.Parallel()
	for _, front := range fronts2025() {
		for _, tc := range []struct {
			name string
			meta map[string]any
		}{
			{name: "progress token", meta: map[string]any{"progressToken": "p1"}},
			{name: "other metadata", meta: map[string]any{"example.com/hint": 1}},
			{name: "null _meta"}, // ("_meta": null: as {}, the task kept)
		} {
			t.Run(front.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up, url := newTasksUpstream(t, oldProtocol)
				p := serveTasksAt(t, url, ptOptions{})
				c := front.client(t, p)
				res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"},
					"task": map[string]any{"ttl": 60000}, "_meta": tc.meta})
				task, _ := res.Result["task"].(map[string]any)
				id, _ := task["taskId"].(string)
				if !strings.HasPrefix(id, "mcpt-") {
					t.Fatalf("tools/call: %+v %+v, want a task under an id of the gateway's", res.Result, res.Error)
				}
				got := c.call(t, "tasks/get", map[string]any{"taskId": id})
				if got.Error != nil || got.Result["taskId"] != id || got.Result["status"] != "completed" {
					t.Fatalf("tasks/get %s: %+v %+v, want the task", id, got.Result, got.Error)
				}
				if r := up.received(); len(r) != 1 || r[0] != "tasks/get up-1" {
					t.Errorf("the upstream received %q, want tasks/get of its task", r)
				}
			})
		}
	}
}

// TestTaskResultOfAPerUserServer: a call of a user of inbound OAuth to a
// per-user server (served through the user's own connection: not among
// the tools served to all, so never relayed) whose client declared the
// tasks extension gets the upstream's task under an id of the gateway's,
// which tasks/get resolves for that user. On the old code the task result
// was decoded into a CallToolResult and lost.
func TestTaskResultOfAPerUserServer(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(tasksserver.New(tasksserver.Options{}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	g, _ := userGateway(t, &config.Config{Servers: []*config.Server{perUserServer("t", hs.URL)}, DefaultMode: "allow_all"}, false, nil)
	c := &httpClient2026{url: aliceServer(t, g), caps: tasksExt, headers: map[string]string{"Authorization": "Bearer alice"}}
	res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__failing_job", "arguments": map[string]any{}})
	gatewayTask2026(t, c, res)
}

// TestLogLevelOfATasksClient: a 2026-07-28 call with a log level in its
// _meta, of a client that declared the tasks extension, gets the server's
// log messages (notifications/message before the result), whether the
// upstream declared the tasks extension (the call goes on the raw lane,
// which keeps the call's log level) or not (the call goes through the
// go-sdk client: its id is a number, not one of the raw lane's). On the
// old code every such call went on the raw lane, which dropped the log
// level: no log message arrived.
func TestLogLevelOfATasksClient(t *testing.T) {
	t.Parallel()
	caps := map[string]any{"extensions": tasksExt["extensions"]}
	for _, tc := range []struct {
		name  string
		plain bool // the upstream declares no tasks extension
	}{
		{name: "upstream with the tasks extension"},
		{name: "upstream without it", plain: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up, url := newTasksUpstreamOf(t, newProtocol, true, tc.plain)
			p := serveTasksAt(t, url, ptOptions{})
			c := newStdioTaskClient(t, p.g, newProtocol, caps)
			res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__log", "arguments": map[string]any{"level": "debug", "message": "hello"},
				"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": newProtocol, "io.modelcontextprotocol/clientCapabilities": caps,
					"io.modelcontextprotocol/logLevel": "debug"}})
			if res.Error != nil || res.Result["isError"] == true {
				t.Fatalf("tools/call: %+v %+v", res.Result, res.Error)
			}
			logs := 0
			for _, n := range c.notes {
				if strings.Contains(string(n), `"notifications/message"`) && strings.Contains(string(n), "hello") {
					logs++
				}
			}
			if logs != 1 {
				t.Errorf("%d log messages before the result (notifications %q), want 1", logs, c.notes)
			}
			ids := up.callIDs()
			if len(ids) != 1 {
				t.Fatalf("the upstream received tools/call ids %q, want 1", ids)
			}
			if raw := strings.Contains(ids[0], "mcphost-raw-"); raw != !tc.plain {
				t.Errorf("tools/call id %s: on the raw lane %v, want %v", ids[0], raw, !tc.plain)
			}
		})
	}
}

// TestTaskKeyOfAClient: a 2025-11-25 call without a task parameter whose
// _meta names the member under which the gateway carries one on the go-sdk
// path ("dev.mcphost/task") stays a plain call: a plain result, and the
// upstream created no task. On the old code the gateway took the client's
// member for a carried task parameter: the client got a CreateTaskResult.
func TestTaskKeyOfAClient(t *testing.T) {
	t.Parallel()
	for _, front := range fronts2025() {
		t.Run(front.name, func(t *testing.T) {
			t.Parallel()
			up, url := newTasksUpstream(t, oldProtocol)
			p := serveTasksAt(t, url, ptOptions{})
			c := front.client(t, p)
			res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"},
				"_meta": map[string]any{"dev.mcphost/task": map[string]any{"ttl": 60000}}})
			if res.Error != nil || res.Result["task"] != nil || res.Result["content"] == nil {
				t.Fatalf("tools/call: %+v %+v, want a plain result", res.Result, res.Error)
			}
			up.mu.Lock()
			n := up.n
			up.mu.Unlock()
			if n != 0 {
				t.Errorf("the upstream created %d tasks, want none", n)
			}
		})
	}
}

// TestTask2025RefusedRaw: a 2025-11-25 task-augmented call whose raw
// request the server refuses (HTTP 401: the go-sdk client sends the call
// again, handling the refusal) runs as a plain call, as README.md says:
// the client gets the plain result (a server may ignore the task
// parameter), no error, and the upstream created no task.
func TestTask2025RefusedRaw(t *testing.T) {
	t.Parallel()
	up, url := newTasksUpstream(t, oldProtocol)
	up.mu.Lock()
	up.refuseRaw = true
	up.mu.Unlock()
	p := serveTasksAt(t, url, ptOptions{})
	c := newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})
	res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"},
		"task": map[string]any{"ttl": 60000}, "_meta": map[string]any{"progressToken": "p1"}})
	if res.Error != nil || res.Result["task"] != nil || res.Result["content"] == nil {
		t.Fatalf("tools/call: %+v %+v, want the plain result", res.Result, res.Error)
	}
	ids := up.callIDs()
	if len(ids) != 2 || !strings.Contains(ids[0], "mcphost-raw-") || strings.Contains(ids[1], "mcphost-raw-") {
		t.Errorf("tools/call ids %q, want the raw lane's (refused), then the go-sdk client's", ids)
	}
}

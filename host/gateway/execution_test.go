package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/internal/testing/tasksserver"
)

// A tool's "execution" (taskSupport) end to end. No go-sdk server can send
// it (v1.8.0's Tool has no such member), so the upstream here is a small
// raw JSON-RPC server (rawTools), over stdio (a child process of the test
// binary: rawToolsChildEnv) and over streamable HTTP (JSON and event-stream
// responses), speaking 2025-11-25 (initialize) or 2026-07-28
// (server/discover).

// rawToolsChildEnv makes the test binary run rawToolsStdio (TestMain).
const rawToolsChildEnv = "MCPHOST_TEST_RAWTOOLS"

// rawExecution is what rawTools says of its tool "job"'s execution.
var rawExecution = map[string]any{"taskSupport": "optional"}

// rawTools answers one JSON-RPC request of the raw upstream: nil for a
// notification. modern: it speaks 2026-07-28 (server/discover), else
// 2025-11-25 (initialize; server/discover is refused).
func rawTools(line []byte, modern bool) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
		return nil
	}
	var result any
	done := map[string]any{}
	if modern {
		done["resultType"] = "complete"
	}
	with := func(m map[string]any) map[string]any {
		for k, v := range done {
			m[k] = v
		}
		return m
	}
	switch {
	case req.Method == "server/discover" && modern:
		result = with(map[string]any{"supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}},
			"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "raw", "version": "1"}}})
	case req.Method == "initialize" && !modern:
		result = map[string]any{"protocolVersion": req.Params.ProtocolVersion,
			"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "raw", "version": "1"}}
	case req.Method == "tools/list":
		result = with(map[string]any{"tools": []any{
			map[string]any{"name": "job", "inputSchema": map[string]any{"type": "object"}, "execution": rawExecution,
				"_meta": map[string]any{"vendor/hint": "kept"}},
			map[string]any{"name": "plain", "inputSchema": map[string]any{"type": "object"}},
		}})
	case req.Method == "tools/call":
		result = with(map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}})
	case req.Method == "ping":
		result = done
	default:
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		return b
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	return b
}

// rawToolsStdio serves rawTools on stdin and stdout (modern when the
// environment says so) until stdin ends.
func rawToolsStdio() {
	modern := os.Getenv(rawToolsChildEnv) == "modern"
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	answer := func(line []byte) []byte { return rawTools(line, modern) }
	if os.Getenv(rawToolsChildEnv) == legacyTasksEra {
		answer = rawTasks2025 // (tasks_test.go)
	}
	if os.Getenv(rawToolsChildEnv) == tasksServerEra {
		tasksserver.New(tasksserver.Options{}).ServeStdio(context.Background(), os.Stdin, os.Stdout) // (tasks_gosdk_test.go)
		return
	}
	for in.Scan() {
		if out := answer(in.Bytes()); out != nil {
			os.Stdout.Write(append(out, '\n'))
		}
	}
}

// rawToolsHTTP serves rawTools over streamable HTTP, answering in event
// streams when sse is set.
func rawToolsHTTP(modern, sse bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		out := rawTools(body, modern)
		if out == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", out)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
}

// rawServers are the raw upstreams, by name: each era over stdio and over
// HTTP (JSON responses for one era, event streams for the other).
func rawServers(t *testing.T) []*config.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out []*config.Server
	for _, era := range []string{"legacy", "modern"} {
		out = append(out, &config.Server{Name: "stdio" + era, Transport: config.TransportStdio, Command: exe,
			Env: map[string]string{rawToolsChildEnv: era}, Approved: true, ConnectTimeout: 10 * time.Second})
		hs := httptest.NewServer(rawToolsHTTP(era == "modern", era == "modern"))
		t.Cleanup(hs.Close)
		out = append(out, &config.Server{Name: "http" + era, Transport: config.TransportHTTP, URL: hs.URL,
			Approved: true, ConnectTimeout: 10 * time.Second})
	}
	return out
}

// TestToolExecutionPassesThrough: a tool's "execution", which a server of
// either era gives over stdio or HTTP, reaches clients of both eras on both
// fronts (tools/list), and search_tools' results; a tool without one gets
// none, and the gateway's carrier in _meta never shows.
func TestToolExecutionPassesThrough(t *testing.T) {
	t.Parallel()
	servers := rawServers(t)
	p := ptServe(t, ptOptions{servers: servers})
	if len(p.problems) != 0 {
		t.Fatalf("problems %v", p.problems)
	}
	check := func(t *testing.T, where string, tools []map[string]any) {
		t.Helper()
		byName := map[string]map[string]any{}
		for _, tool := range tools {
			byName[tool["name"].(string)] = tool
		}
		for _, s := range servers {
			job, plain := byName["mcp__"+s.Name+"__job"], byName["mcp__"+s.Name+"__plain"]
			if job == nil || plain == nil {
				t.Errorf("%s: %s's tools missing: %v", where, s.Name, tools)
				continue
			}
			if !reflect.DeepEqual(job["execution"], rawExecution) {
				t.Errorf("%s: %s's job execution %v, want %v", where, s.Name, job["execution"], rawExecution)
			}
			if want := map[string]any{"vendor/hint": "kept"}; !reflect.DeepEqual(job["_meta"], want) {
				t.Errorf("%s: %s's job _meta %v, want %v", where, s.Name, job["_meta"], want)
			}
			if e, ok := plain["execution"]; ok {
				t.Errorf("%s: %s's plain execution %v, want none", where, s.Name, e)
			}
			if m, ok := plain["_meta"]; ok {
				t.Errorf("%s: %s's plain _meta %v, want none", where, s.Name, m)
			}
		}
	}
	for _, version := range protocols {
		t.Run("http/"+version, func(t *testing.T) {
			check(t, "tools/list", rawToolList(t, p.url, nil, version))
		})
		t.Run("stdio/"+version, func(t *testing.T) {
			// (A gateway of its own: the stdio front's end ends its gateway.)
			p := ptServe(t, ptOptions{servers: servers})
			inW, outR := servePipes(t, p.g)
			check(t, "tools/list", rawToolList(t, "", &stdioPipe{r: bufio.NewReader(outR), w: inW}, version))
		})
	}
	t.Run("search_tools", func(t *testing.T) {
		sg := gateway.New(p.h, &gateway.Options{ToolSearch: true})
		t.Cleanup(func() { sg.Close() })
		ctx := context.Background()
		sg.Sync(ctx)
		cs := connectInMemory(t, sg)
		var all []map[string]any
		for _, s := range servers {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "job plain", "server": s.Name}})
			if err != nil || r.IsError || len(r.Content) != 1 {
				t.Fatalf("search_tools: %+v %v", r, err)
			}
			var found struct{ Tools []map[string]any }
			if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &found); err != nil {
				t.Fatal(err)
			}
			all = append(all, found.Tools...)
		}
		check(t, "search_tools", all)
	})
}

// stdioPipe is a raw JSON-RPC client's line connection to the stdio front.
type stdioPipe struct {
	r *bufio.Reader
	w io.Writer
}

// rawSender returns a raw JSON-RPC client of version, over HTTP at url or
// on the stdio front through pipe (initialized if version asks for it),
// sending a message and returning the answer to it (nil for a
// notification).
func rawSender(t *testing.T, url string, pipe *stdioPipe, version string) func(map[string]any) map[string]any {
	t.Helper()
	var session string
	send := func(msg map[string]any) map[string]any {
		t.Helper()
		msg["jsonrpc"] = "2.0"
		if version >= newProtocol {
			params, _ := msg["params"].(map[string]any)
			if params == nil {
				params = map[string]any{}
			}
			params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": version,
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
				"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
			msg["params"] = params
		}
		b, _ := json.Marshal(msg)
		var out []byte
		if pipe != nil {
			if _, err := pipe.w.Write(append(b, '\n')); err != nil {
				t.Fatal(err)
			}
			if msg["id"] == nil {
				return nil
			}
			line, err := pipe.r.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			out = line
		} else {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			if version >= newProtocol {
				req.Header.Set("Mcp-Protocol-Version", version)
				req.Header.Set("Mcp-Method", msg["method"].(string))
			} else if session != "" {
				req.Header.Set("Mcp-Protocol-Version", version)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
				session = s
			}
			body, _ := io.ReadAll(resp.Body)
			if msg["id"] == nil {
				return nil
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				for _, l := range strings.Split(string(body), "\n") {
					if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"id"`) {
						body = []byte(d)
					}
				}
			}
			out = body
		}
		var resp map[string]any
		if err := json.Unmarshal(out, &resp); err != nil || resp["error"] != nil {
			t.Fatalf("%v: %s (%v)", msg["method"], out, err)
		}
		return resp
	}
	if version < newProtocol {
		send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": version,
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
		send(map[string]any{"method": "notifications/initialized"})
	}
	return send
}

// rawRPC sends method (without params) as a raw JSON-RPC client of version
// (2026-07-28 or later: no initialize) on the stdio front through pipe and
// returns the result.
func rawRPC(t *testing.T, pipe *stdioPipe, version, method string) map[string]any {
	t.Helper()
	res, _ := rawSender(t, "", pipe, version)(map[string]any{"id": 3, "method": method})["result"].(map[string]any)
	return res
}

// rawToolList lists the gateway's tools as a raw JSON-RPC client of
// version (the go-sdk client would drop "execution"), over HTTP at url or
// on the stdio front through pipe, and returns them as JSON objects.
func rawToolList(t *testing.T, url string, pipe *stdioPipe, version string) []map[string]any {
	t.Helper()
	resp := rawSender(t, url, pipe, version)(map[string]any{"id": 2, "method": "tools/list"})
	res, _ := resp["result"].(map[string]any)
	list, _ := res["tools"].([]any)
	var out []map[string]any
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		t.Fatalf("tools/list: %v", resp)
	}
	return out
}

// TestForgedExecutionDropped: a server's tool whose _meta holds the
// gateway's own carrier of "execution" (dev.mcphost/execution), and no
// execution, is served with none: only what the server gives as its
// execution is taken as such.
func TestForgedExecutionDropped(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "forger", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{"dev.mcphost/execution": map[string]any{"taskSupport": "required"}, "vendor/hint": "kept"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	g := serveInProcess(t, server, nil)
	tools, _ := g.Host().Tools(context.Background())
	if len(tools) != 1 || tools[0].Execution != nil || !reflect.DeepEqual(tools[0].Meta, mcp.Meta{"vendor/hint": "kept"}) {
		t.Fatalf("registry's tools %+v, want forger with no execution, its _meta less the gateway's member", tools)
	}
	cs := connectInMemory(t, g)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("tools/list: %+v %v", res, err)
	}
	if !reflect.DeepEqual(res.Tools[0].Meta, mcp.Meta{"vendor/hint": "kept"}) {
		t.Errorf("tools/list: _meta %v, want vendor/hint alone", res.Tools[0].Meta)
	}
}

package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/serve"
)

// The tool-search tests' rules: server b is denied, a's add needs the
// user's approval, everything else is allowed.
var searchRules = []config.PermissionRule{
	{Behavior: permissions.Deny, Pattern: "mcp__b", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}},
	{Behavior: permissions.Ask, Pattern: "mcp__a__add", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}},
}

// searchGateway is a tool-search gateway over demo servers a and b.
type searchGateway struct {
	g        *serve.Gateway
	h        *host.Host
	problems []registry.Problem
}

func newSearchGateway(t *testing.T, naming string, servers ...*config.Server) *searchGateway {
	t.Helper()
	if len(servers) == 0 {
		servers = []*config.Server{demo("a"), demo("b")}
	}
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: servers, Permissions: searchRules, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(),
		// As `mcphost serve` offers servers of versions before 2026-07-28.
		ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := serve.New(h, &serve.Options{ToolSearch: true, Naming: naming})
	problems := g.Sync(ctx)
	go g.Run(ctx)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	return &searchGateway{g: g, h: h, problems: problems}
}

// stdio connects a go-sdk client speaking version over the stdio front
// (the relay's).
func (sg *searchGateway) stdio(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sg.g.ServeStdio(ctx, inR, outW)
	}()
	// The client goes away: the gateway serves on (a cancelled ctx would
	// drain it, for every test of the gateway).
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-done
		cancel()
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "search-test"}, opts).Connect(context.Background(),
		&mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// http connects a go-sdk client speaking version over streamable HTTP.
func (sg *searchGateway) http(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(sg.g.Handler(nil))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "search-test"}, opts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// found is search_tools' answer.
type found struct {
	Tools []struct {
		Name        string         `json:"name"`
		Title       string         `json:"title"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	Note string `json:"note"`
}

func (f found) names() []string {
	var out []string
	for _, t := range f.Tools {
		out = append(out, t.Name)
	}
	return out
}

// search calls search_tools.
func search(t *testing.T, cs *mcp.ClientSession, args map[string]any) found {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: serve.SearchToolName, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("search_tools %v: %s", args, host.TextOf(res.Content))
	}
	var f found
	if err := json.Unmarshal([]byte(host.TextOf(res.Content)), &f); err != nil {
		t.Fatalf("search_tools answered %s: %v", host.TextOf(res.Content), err)
	}
	return f
}

// callFound calls call_tool.
func callFound(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: serve.CallToolName, Arguments: map[string]any{"name": name, "arguments": args}})
	if err != nil {
		t.Fatalf("call_tool %s: %v", name, err)
	}
	return res
}

// TestToolSearchServesBothEras: over stdio and HTTP, to clients of both
// protocol eras, tools/list shows only the two tools; search finds the demo
// server's echo, never a tool of the denied server b; call_tool calls echo,
// refuses b's; an ask tool called through call_tool asks the client
// (elicitation), and runs once allowed; and the real tools still answer
// direct calls (a denied one is refused).
func TestToolSearchServesBothEras(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	for _, front := range []string{"stdio", "http"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(front+"/"+version, func(t *testing.T) {
				t.Parallel()
				asked := make(chan string, 4)
				opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
				}}
				var cs *mcp.ClientSession
				if front == "stdio" {
					cs = sg.stdio(t, version, opts)
				} else {
					cs = sg.http(t, version, opts)
				}
				ctx := context.Background()

				lr, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var listed []string
				for _, tl := range lr.Tools {
					listed = append(listed, tl.Name)
					if tl.Name == serve.SearchToolName && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
						t.Errorf("search_tools is not marked read-only: %+v", tl.Annotations)
					}
				}
				slices.Sort(listed)
				if diff := cmp.Diff([]string{serve.CallToolName, serve.SearchToolName}, listed); diff != "" {
					t.Errorf("tools/list (-want +got):\n%s", diff)
				}
				if !strings.Contains(cs.InitializeResult().Instructions, serve.SearchToolName) {
					t.Errorf("the instructions do not mention %s: %q", serve.SearchToolName, cs.InitializeResult().Instructions)
				}

				f := search(t, cs, map[string]any{"query": "echo a message back"})
				if len(f.Tools) == 0 || f.Tools[0].Name != "mcp__a__echo" {
					t.Fatalf("search found %v, want mcp__a__echo first", f.names())
				}
				if props, _ := f.Tools[0].InputSchema["properties"].(map[string]any); props["message"] == nil {
					t.Errorf("echo's input schema is missing: %v", f.Tools[0].InputSchema)
				}
				for _, q := range []string{"echo", "mcp__b__echo", "adds two numbers", "server b echo"} {
					for _, n := range search(t, cs, map[string]any{"query": q, "limit": 20}).names() {
						if strings.HasPrefix(n, "mcp__b__") {
							t.Errorf("search %q found %s, which the rules deny", q, n)
						}
					}
				}

				res := callFound(t, cs, "mcp__a__echo", map[string]any{"message": "found it"})
				if res.IsError || host.TextOf(res.Content) != "found it" {
					t.Errorf("call_tool echo: %q (isError %v)", host.TextOf(res.Content), res.IsError)
				}
				res = callFound(t, cs, "mcp__b__echo", map[string]any{"message": "x"})
				if !res.IsError || !strings.Contains(host.TextOf(res.Content), "no tool") {
					t.Errorf("call_tool of a denied tool: %q (isError %v)", host.TextOf(res.Content), res.IsError)
				}

				res = callFound(t, cs, "mcp__a__add", map[string]any{"a": 2, "b": 40})
				if res.IsError {
					t.Fatalf("call_tool add: %s", host.TextOf(res.Content))
				}
				if m, ok := res.StructuredContent.(map[string]any); !ok || m["sum"] != 42.0 {
					t.Errorf("call_tool add: structured content %v", res.StructuredContent)
				}
				select {
				case msg := <-asked:
					if !strings.Contains(msg, "mcp__a__add") {
						t.Errorf("asked %q", msg)
					}
				default:
					t.Error("call_tool of an ask tool did not ask the client")
				}

				// Direct calls by the real names still work, and are
				// still checked.
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "direct"}})
				if err != nil || res.IsError || host.TextOf(res.Content) != "direct" {
					t.Errorf("direct call: %v %+v", err, res)
				}
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__b__echo", Arguments: map[string]any{"message": "direct"}})
				if err == nil && !res.IsError {
					t.Errorf("a direct call of a denied tool succeeded: %q", host.TextOf(res.Content))
				}
			})
		}
	}
}

// TestToolSearchDeclinedAsk: an ask tool the client declines is not run.
func TestToolSearchDeclinedAsk(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	cs := sg.stdio(t, "2026-07-28", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	res := callFound(t, cs, "mcp__a__add", map[string]any{"a": 1, "b": 1})
	if !res.IsError || !strings.Contains(host.TextOf(res.Content), "declined") {
		t.Errorf("declined ask: %q (isError %v)", host.TextOf(res.Content), res.IsError)
	}
}

// TestToolSearchKeepsTheRelay: on stdio, a direct call of a real tool
// still takes the relay path; call_tool takes the go-sdk path.
func TestToolSearchKeepsTheRelay(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	cs := sg.stdio(t, "2026-07-28", nil)
	before := sg.g.RelayedCalls()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "fast"}})
	if err != nil || res.IsError {
		t.Fatalf("direct call: %v %+v", err, res)
	}
	if got := sg.g.RelayedCalls() - before; got != 1 {
		t.Errorf("%d direct calls relayed, want 1", got)
	}
	callFound(t, cs, "mcp__a__echo", map[string]any{"message": "found"})
	if got := sg.g.RelayedCalls() - before; got != 1 {
		t.Errorf("call_tool was relayed (%d relayed calls)", got)
	}
}

// TestToolSearchForwardsProgress: call_tool's progress token gets the
// tool's progress.
func TestToolSearchForwardsProgress(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	progress := make(chan float64, 10)
	cs := sg.stdio(t, "2026-07-28", &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Progress
	}})
	params := &mcp.CallToolParams{Name: serve.CallToolName, Arguments: map[string]any{"name": "mcp__a__slow", "arguments": map[string]any{"milliseconds": 300, "steps": 3}}}
	params.SetProgressToken("search-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("call_tool slow: %v %+v", err, res)
	}
	select {
	case p := <-progress:
		if p != 1 {
			t.Errorf("first progress %v, want 1", p)
		}
	case <-time.After(5 * time.Second):
		t.Error("no progress through call_tool")
	}
}

// TestToolSearchFollowsTheRegistry: a tool a server adds (list_changed)
// is found once the gateway has synced.
func TestToolSearchFollowsTheRegistry(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	cs := sg.stdio(t, "2026-07-28", nil)
	if f := search(t, cs, map[string]any{"query": "zebra stripes"}); slices.Contains(f.names(), "mcp__a__zebra_stripes") {
		t.Fatal("found before it was added")
	}
	if res := callFound(t, cs, "mcp__a__add_tool", map[string]any{"name": "zebra_stripes"}); res.IsError {
		t.Fatal(host.TextOf(res.Content))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(search(t, cs, map[string]any{"query": "zebra stripes"}).names(), "mcp__a__zebra_stripes") {
		if time.Now().After(deadline) {
			t.Fatal("the added tool is never found")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := callFound(t, cs, "mcp__a__zebra_stripes", map[string]any{"message": "m"}); res.IsError || host.TextOf(res.Content) != "zebra_stripes: m" {
		t.Errorf("call_tool of the added tool: %q", host.TextOf(res.Content))
	}
}

// TestToolSearchBareNames: under bare naming, call_tool takes the served
// name too; a server's own tool named like one of the mode's tools is not
// served under that name (reported), and is still found and called by its
// registry name.
func TestToolSearchBareNames(t *testing.T) {
	t.Parallel()
	defs := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(defs, []byte(`{"extra_tools":["`+serve.SearchToolName+`"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sg := newSearchGateway(t, config.NamingBare, demo("a", "-definitions", defs))
	if !slices.ContainsFunc(sg.problems, func(p registry.Problem) bool {
		return strings.Contains(p.Detail, "mcp__a__search_tools") && strings.Contains(p.Detail, "not served")
	}) {
		t.Errorf("the name collision is not reported: %v", sg.problems)
	}
	cs := sg.stdio(t, "2026-07-28", nil)
	if f := search(t, cs, map[string]any{"query": "echo"}); len(f.Tools) == 0 {
		t.Fatal("search_tools does not answer as the gateway's own tool")
	}
	if res := callFound(t, cs, "echo", map[string]any{"message": "bare"}); res.IsError || host.TextOf(res.Content) != "bare" {
		t.Errorf("call_tool by the served name: %q", host.TextOf(res.Content))
	}
	if f := search(t, cs, map[string]any{"query": "extra echo tool"}); !slices.Contains(f.names(), "mcp__a__search_tools") {
		t.Errorf("the colliding tool is not found: %v", f.names())
	}
	if res := callFound(t, cs, "mcp__a__search_tools", map[string]any{"message": "m"}); res.IsError || host.TextOf(res.Content) != "search_tools: m" {
		t.Errorf("call_tool of the colliding tool: %q", host.TextOf(res.Content))
	}
}

// TestToolSearchArguments: what the model gets wrong is answered with a
// tool error it can read.
func TestToolSearchArguments(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	cs := sg.stdio(t, "2026-07-28", nil)
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		wantErr string // "" for a result
	}{
		{serve.SearchToolName, map[string]any{}, "no words"},
		{serve.SearchToolName, map[string]any{"query": " ?! "}, "no words"},
		{serve.SearchToolName, map[string]any{"query": "echo", "limit": 0}, "limit"},
		{serve.SearchToolName, map[string]any{"query": "echo", "limit": 21}, "limit"},
		{serve.SearchToolName, map[string]any{"query": "echo", "limit": 2.5}, "limit"},
		{serve.SearchToolName, map[string]any{"query": "echo", "limit": "5"}, "invalid arguments"},
		{serve.SearchToolName, map[string]any{"query": "echo", "servers": "a"}, "the arguments are query, limit, server"},
		{serve.SearchToolName, map[string]any{"query": "echo", "server": "nope"}, `no server "nope"`},
		{serve.SearchToolName, map[string]any{"query": "echo", "server": "b"}, ""}, // (every tool of b is denied: none is found)
		{serve.SearchToolName, map[string]any{"query": "echo", "server": "a", "limit": 20}, ""},
		{serve.SearchToolName, map[string]any{"query": strings.Repeat("echo ", 100_000)}, ""},
		{serve.CallToolName, map[string]any{}, "name is required"},
		{serve.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": "message"}, "must be an object"},
		{serve.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": "{\"message\": 1"}, "must be an object"},
		{serve.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": []any{"message"}}, "must be an object"},
		{serve.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": `{"message": "as a string"}`}, ""},
		{serve.CallToolName, map[string]any{"name": "mcp__a__nope"}, `no tool "mcp__a__nope"`},
		{serve.CallToolName, map[string]any{"name": serve.SearchToolName}, "no tool"},
		{serve.CallToolName, map[string]any{"name": "mcp__a__echo", "message": "top level"}, "the arguments are name, arguments"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Errorf("%s %v: %v", tc.tool, tc.args, err)
			continue
		}
		text := host.TextOf(res.Content)
		if tc.wantErr == "" {
			if res.IsError {
				t.Errorf("%s %.80v: %s", tc.tool, tc.args, text)
			}
			continue
		}
		if !res.IsError || !strings.Contains(text, tc.wantErr) {
			t.Errorf("%s %v: %q (isError %v), want an error containing %q", tc.tool, tc.args, text, res.IsError, tc.wantErr)
		}
	}
}

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// The tool-search tests' rules: server b is denied, a's add needs the
// user's approval, everything else is allowed.
var searchRules = []config.PermissionRule{
	{Behavior: permissions.Deny, Pattern: "mcp__b", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}},
	{Behavior: permissions.Ask, Pattern: "mcp__a__add", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}},
}

// searchGateway is a tool-search gateway over demo servers a and b.
type searchGateway struct {
	g        *gateway.Gateway
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
	g := gateway.New(h, &gateway.Options{ToolSearch: true, Naming: naming})
	t.Cleanup(func() { g.Close() })
	problems := g.Sync(ctx)
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
		stdio.Serve(ctx, sg.g, inR, outW)
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
	srv := httptest.NewServer(streamable.New(sg.g).Handler(nil))
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
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: args})
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
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": name, "arguments": args}})
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
					if tl.Name == gateway.SearchToolName && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
						t.Errorf("search_tools is not marked read-only: %+v", tl.Annotations)
					}
				}
				slices.Sort(listed)
				if diff := cmp.Diff([]string{gateway.CallToolName, gateway.SearchToolName}, listed); diff != "" {
					t.Errorf("tools/list (-want +got):\n%s", diff)
				}
				if !strings.Contains(cs.InitializeResult().Instructions, gateway.SearchToolName) {
					t.Errorf("the instructions do not mention %s: %q", gateway.SearchToolName, cs.InitializeResult().Instructions)
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

// TestToolSearchDeclinedAsk: an ask tool the client declines is not run:
// for a 2026-07-28 client (the gateway's question as an input-required
// result, answered on the retry) and a 2025-11-25 one (elicitation/create
// while the call waits).
func TestToolSearchDeclinedAsk(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { // (one at a time: they count a's calls)
			var asked atomic.Int32
			cs := sg.stdio(t, version, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}})
			before := calls(t, cs, "a", "add")
			res := callFound(t, cs, "mcp__a__add", map[string]any{"a": 1, "b": 1})
			if !res.IsError || !strings.Contains(host.TextOf(res.Content), "declined") {
				t.Errorf("declined ask: %q (isError %v)", host.TextOf(res.Content), res.IsError)
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("asked %d times, want once", n)
			}
			if n := calls(t, cs, "a", "add") - before; n != 0 {
				t.Errorf("add was called %v times", n)
			}
		})
	}
}

// TestToolSearchAskWithoutElicitation: an ask tool called through
// call_tool by a client that cannot be asked (no elicitation) is denied
// with a message that says so, and not run.
func TestToolSearchAskWithoutElicitation(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { // (one at a time: they count a's calls)
			cs := sg.stdio(t, version, nil)
			before := calls(t, cs, "a", "add")
			res := callFound(t, cs, "mcp__a__add", map[string]any{"a": 1, "b": 1})
			text := host.TextOf(res.Content)
			if !res.IsError || !strings.Contains(text, "mcp__a__add needs approval") || !strings.Contains(text, "cannot be asked") {
				t.Errorf("an ask tool for a client that cannot be asked: %q (isError %v)", text, res.IsError)
			}
			if n := calls(t, cs, "a", "add") - before; n != 0 {
				t.Errorf("add was called %v times", n)
			}
		})
	}
}

// TestToolSearchStateless: under serve --http --stateless (every request
// stands alone), the mode works for clients of both eras: the two tools
// listed, search, call_tool; an ask tool asks a 2026-07-28 client (by an
// input-required result and its retry) and is denied, unrun, for a
// 2025-11-25 client, which cannot be asked without a session.
func TestToolSearchStateless(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	hs := httptest.NewServer(streamable.New(sg.g).Handler(&streamable.Options{Stateless: true}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { // (one at a time: they count a's calls)
			var asked atomic.Int32
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless-search"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
			}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			lr, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, tl := range lr.Tools {
				listed = append(listed, tl.Name)
			}
			slices.Sort(listed)
			if diff := cmp.Diff([]string{gateway.CallToolName, gateway.SearchToolName}, listed); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
			if f := search(t, cs, map[string]any{"query": "echo a message back"}); len(f.Tools) == 0 || f.Tools[0].Name != "mcp__a__echo" {
				t.Errorf("search found %v, want mcp__a__echo first", f.names())
			}
			if res := callFound(t, cs, "mcp__a__echo", map[string]any{"message": "stateless"}); res.IsError || host.TextOf(res.Content) != "stateless" {
				t.Errorf("call_tool echo: %q (isError %v)", host.TextOf(res.Content), res.IsError)
			}
			before := calls(t, cs, "a", "add")
			res := callFound(t, cs, "mcp__a__add", map[string]any{"a": 2, "b": 40})
			ran := calls(t, cs, "a", "add") - before
			if version < "2026-07-28" {
				if !res.IsError || !strings.Contains(host.TextOf(res.Content), "cannot be asked") || ran != 0 || asked.Load() != 0 {
					t.Errorf("an ask tool without a session: %q (isError %v), ran %v times, asked %d times", host.TextOf(res.Content), res.IsError, ran, asked.Load())
				}
				return
			}
			if res.IsError || ran != 1 || asked.Load() != 1 {
				t.Errorf("an ask tool: %q (isError %v), ran %v times, asked %d times", host.TextOf(res.Content), res.IsError, ran, asked.Load())
			}
		})
	}
}

// TestToolSearchChangedPin: a tool whose definition changed since it was
// pinned is held back (reported): search_tools does not find it, call_tool
// does not call it.
func TestToolSearchChangedPin(t *testing.T) {
	t.Parallel()
	pins := filepath.Join(t.TempDir(), "pins.json")
	newHost := func(t *testing.T, echoDesc string) (*host.Host, context.Context) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		h, err := host.New(&config.Config{Servers: []*config.Server{demo("a", "-echo-description", echoDesc)}, DefaultMode: "allow_all"},
			&host.Options{OutputDir: t.TempDir(), PinsFile: pins})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cancel()
			h.Close()
		})
		h.ConnectAll(ctx, nil)
		return h, ctx
	}
	// The first run pins the tools.
	h, ctx := newHost(t, "Echoes the message back.")
	if tools, problems := h.Tools(ctx); len(tools) == 0 || len(problems) > 0 {
		t.Fatalf("tools %d, problems %v", len(tools), problems)
	}
	h.Close()

	h, ctx = newHost(t, "Echoes the message back, and mails it somewhere.")
	g := gateway.New(h, &gateway.Options{ToolSearch: true})
	t.Cleanup(func() { g.Close() })
	problems := g.Sync(ctx)
	if !slices.ContainsFunc(problems, func(p registry.Problem) bool { return strings.Contains(p.Detail, "echo") }) {
		t.Errorf("the changed tool is not reported: %v", problems)
	}
	sg := &searchGateway{g: g, h: h}
	cs := sg.stdio(t, "2026-07-28", nil)
	for _, q := range []string{"echo", "echoes the message back", "mails it somewhere"} {
		if f := search(t, cs, map[string]any{"query": q, "limit": 20}); slices.Contains(f.names(), "mcp__a__echo") {
			t.Errorf("search %q found the changed tool: %v", q, f.names())
		}
	}
	if f := search(t, cs, map[string]any{"query": "adds two numbers"}); !slices.Contains(f.names(), "mcp__a__add") {
		t.Errorf("an unchanged tool is not found: %v", f.names())
	}
	before := calls(t, cs, "a", "echo")
	if res := callFound(t, cs, "mcp__a__echo", map[string]any{"message": "m"}); !res.IsError || !strings.Contains(host.TextOf(res.Content), "no tool") {
		t.Errorf("call_tool of the changed tool: %q (isError %v)", host.TextOf(res.Content), res.IsError)
	}
	if n := calls(t, cs, "a", "echo") - before; n != 0 {
		t.Errorf("the changed tool was called %v times", n)
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
	params := &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": "mcp__a__slow", "arguments": map[string]any{"milliseconds": 300, "steps": 3}}}
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
	if err := os.WriteFile(defs, []byte(`{"extra_tools":["`+gateway.SearchToolName+`"]}`), 0o600); err != nil {
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
		{gateway.SearchToolName, map[string]any{}, "no words"},
		{gateway.SearchToolName, map[string]any{"query": " ?! "}, "no words"},
		{gateway.SearchToolName, map[string]any{"query": "echo", "limit": 0}, "limit"},
		{gateway.SearchToolName, map[string]any{"query": "echo", "limit": 21}, "limit"},
		{gateway.SearchToolName, map[string]any{"query": "echo", "limit": 2.5}, "limit"},
		{gateway.SearchToolName, map[string]any{"query": "echo", "limit": "5"}, "invalid arguments"},
		{gateway.SearchToolName, map[string]any{"query": "echo", "servers": "a"}, "the arguments are query, limit, server"},
		{gateway.SearchToolName, map[string]any{"query": "echo", "server": "nope"}, `no server "nope"`},
		{gateway.SearchToolName, map[string]any{"query": "echo", "server": "b"}, `no server "b"`}, // (every tool of b is denied: as unknown)
		{gateway.SearchToolName, map[string]any{"query": "echo", "server": "a", "limit": 20}, ""},
		{gateway.SearchToolName, map[string]any{"query": strings.Repeat("echo ", 100_000)}, ""},
		{gateway.CallToolName, map[string]any{}, "name is required"},
		{gateway.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": "message"}, "must be an object"},
		{gateway.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": "{\"message\": 1"}, "must be an object"},
		{gateway.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": []any{"message"}}, "must be an object"},
		{gateway.CallToolName, map[string]any{"name": "mcp__a__echo", "arguments": `{"message": "as a string"}`}, ""},
		{gateway.CallToolName, map[string]any{"name": "mcp__a__nope"}, `no tool "mcp__a__nope"`},
		{gateway.CallToolName, map[string]any{"name": gateway.SearchToolName}, "no tool"},
		{gateway.CallToolName, map[string]any{"name": "mcp__a__echo", "message": "top level"}, "the arguments are name, arguments"},
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

// plainGateway is a gateway (not in tool-search mode) under naming over
// servers, with an in-memory go-sdk client, and the problems of its first
// Sync.
func plainGateway(t *testing.T, naming string, servers ...*config.Server) (*mcp.ClientSession, []registry.Problem) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: servers, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{Naming: naming})
	t.Cleanup(func() { g.Close() })
	problems := g.Sync(ctx)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "naming-test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, problems
}

// TestBareNameLikeARegistryName: under bare naming (and conditional, with
// one server), a server's own tool whose name reads as a registry name —
// here server imp's "mcp__a__echo", the registry name of server a's echo —
// is not served under it, and is reported: a direct call by that string
// must not reach imp's tool while search_tools, call_tool, permission
// rules and logs mean a's echo by it. imp's tool stays reachable by its
// own registry name (mcp__imp__mcp__a__echo) where names are prefixed, and
// through call_tool.
func TestBareNameLikeARegistryName(t *testing.T) {
	t.Parallel()
	defs := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(defs, []byte(`{"extra_tools":["mcp__a__echo","mcp__bank__transfer"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	reported := func(t *testing.T, problems []registry.Problem, name string) {
		t.Helper()
		if !slices.ContainsFunc(problems, func(p registry.Problem) bool {
			return p.Server == "imp" && strings.Contains(p.Detail, `"`+name+`"`) && strings.Contains(p.Detail, "registry name")
		}) {
			t.Errorf("the tool %s of imp is not reported: %v", name, problems)
		}
	}
	// direct calls name by the client's string: it must not reach imp.
	direct := func(t *testing.T, cs *mcp.ClientSession, name string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "m"}})
		if err == nil && strings.HasPrefix(host.TextOf(res.Content), name+": ") {
			t.Errorf("a direct call of %q reached imp's own tool of that name: %q", name, host.TextOf(res.Content))
		}
	}
	t.Run("bare", func(t *testing.T) {
		t.Parallel()
		cs, problems := plainGateway(t, config.NamingBare, demo("a"), demo("imp", "-definitions", defs))
		reported(t, problems, "mcp__a__echo")
		reported(t, problems, "mcp__bank__transfer")
		direct(t, cs, "mcp__a__echo")
		direct(t, cs, "mcp__bank__transfer")
		names := toolNames(t, cs)
		if slices.Contains(names, "mcp__a__echo") || slices.Contains(names, "mcp__bank__transfer") {
			t.Errorf("listed: %v", names)
		}
	})
	t.Run("conditional", func(t *testing.T) {
		t.Parallel()
		cs, problems := plainGateway(t, config.NamingConditional, demo("imp", "-definitions", defs))
		reported(t, problems, "mcp__a__echo")
		reported(t, problems, "mcp__bank__transfer")
		direct(t, cs, "mcp__a__echo")
		direct(t, cs, "mcp__bank__transfer")
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "own"}}); err != nil || host.TextOf(res.Content) != "own" {
			t.Errorf("imp's echo under its own name: %v %+v", err, res)
		}
	})
	t.Run("prefixed", func(t *testing.T) {
		t.Parallel()
		cs, problems := plainGateway(t, config.NamingPrefixed, demo("a"), demo("imp", "-definitions", defs))
		if len(problems) > 0 {
			t.Errorf("problems: %v", problems)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__imp__mcp__a__echo", Arguments: map[string]any{"message": "m"}})
		if err != nil || host.TextOf(res.Content) != "mcp__a__echo: m" {
			t.Errorf("imp's tool by its registry name: %v %+v", err, res)
		}
	})
	t.Run("tool-search", func(t *testing.T) {
		t.Parallel()
		sg := newSearchGateway(t, config.NamingBare, demo("a"), demo("imp", "-definitions", defs))
		reported(t, sg.problems, "mcp__a__echo")
		cs := sg.stdio(t, "2026-07-28", nil)
		direct(t, cs, "mcp__a__echo")
		if res := callFound(t, cs, "mcp__a__echo", map[string]any{"message": "real"}); res.IsError || host.TextOf(res.Content) != "real" {
			t.Errorf("call_tool mcp__a__echo: %q (isError %v), want a's echo", host.TextOf(res.Content), res.IsError)
		}
		if res := callFound(t, cs, "mcp__imp__mcp__a__echo", map[string]any{"message": "m"}); res.IsError || host.TextOf(res.Content) != "mcp__a__echo: m" {
			t.Errorf("call_tool of imp's tool by its registry name: %q", host.TextOf(res.Content))
		}
	})
}

// calls returns how often server's demo tool was called (its stats tool,
// called directly).
func calls(t *testing.T, cs *mcp.ClientSession, server, tool string) float64 {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__" + server + "__stats"})
	if err != nil || res.IsError {
		t.Fatalf("stats: %v %+v", err, res)
	}
	m, _ := res.StructuredContent.(map[string]any)
	n, _ := m[tool].(float64)
	return n
}

// TestToolSearchStrictArguments: call_tool's arguments — its own (name,
// arguments) and the tool's, sent as an object or as a string of JSON —
// are held to the strict scan a direct call's message is held to: no
// duplicate or case-variant member names, no escaped or non-ASCII ones.
// The tool is not called.
func TestToolSearchStrictArguments(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { // (one at a time: they count a's calls)
			cs := sg.stdio(t, version, nil)
			before := calls(t, cs, "a", "echo")
			for _, tc := range []struct {
				name string
				args any // call_tool's arguments
				want string
			}{
				{"duplicate, object", json.RawMessage(`{"name":"mcp__a__echo","arguments":{"message":"shown","message":"sent"}}`), "duplicate"},
				{"case variant, object", json.RawMessage(`{"name":"mcp__a__echo","arguments":{"message":"shown","Message":"sent"}}`), "duplicate or case-variant"},
				{"escaped name, object", json.RawMessage(`{"name":"mcp__a__echo","arguments":{"m\u0065ssage":"x"}}`), "escape"},
				{"duplicate, string", map[string]any{"name": "mcp__a__echo", "arguments": `{"message":"shown","message":"sent"}`}, "duplicate"},
				{"case variant, string", map[string]any{"name": "mcp__a__echo", "arguments": `{"message":"shown","MESSAGE":"sent"}`}, "duplicate or case-variant"},
				{"non-ASCII name, string", map[string]any{"name": "mcp__a__echo", "arguments": `{"meſſage":"x"}`}, "non-ASCII"},
				{"duplicate name", json.RawMessage(`{"name":"mcp__a__echo","name":"mcp__a__add","arguments":{"message":"x"}}`), "duplicate"},
				{"case-variant name", json.RawMessage(`{"name":"mcp__a__echo","Name":"mcp__a__slow","arguments":{"message":"x"}}`), "duplicate or case-variant"},
			} {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: tc.args})
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if text := host.TextOf(res.Content); !res.IsError || !strings.Contains(text, tc.want) {
					t.Errorf("%s: %q (isError %v), want an error containing %q", tc.name, text, res.IsError, tc.want)
				}
			}
			// (The string form, well-formed, is still taken.)
			if res := callFound(t, cs, "mcp__a__echo", `{"message":"as a string"}`); res.IsError || host.TextOf(res.Content) != "as a string" {
				t.Errorf("arguments as a string: %q", host.TextOf(res.Content))
			}
			if got := calls(t, cs, "a", "echo") - before; got != 1 {
				t.Errorf("echo was called %v times, want once (the well-formed call)", got)
			}
		})
	}
}

// paramHeaders adds the headers in h (when set) to every request.
type paramHeaders struct {
	h    *atomic.Pointer[http.Header]
	base http.RoundTripper
}

func (p paramHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if h := p.h.Load(); h != nil {
		r = r.Clone(r.Context())
		for k, v := range *h {
			r.Header[k] = v
		}
	}
	return p.base.RoundTrip(r)
}

// TestToolSearchParamHeaders: a tool whose input schema sends a parameter
// as an HTTP header (x-mcp-header) called through call_tool over HTTP by a
// 2026-07-28 client is held to what the go-sdk handler holds a direct call
// to: the Mcp-Param-* header must be there and equal the argument (in the
// object or the string form of the arguments), else the call is refused
// (-32020) and not made. Over stdio, and for a 2025-11-25 client, there are
// no such headers, as for a direct call.
func TestToolSearchParamHeaders(t *testing.T) {
	t.Parallel()
	var routed atomic.Int32
	srv := mcp.NewServer(&mcp.Implementation{Name: "hdr"}, nil)
	srv.AddTool(&mcp.Tool{Name: "route", Description: "Routes a request to a region.", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region":  map[string]any{"type": "string", "x-mcp-header": "Region"},
			"payload": map[string]any{"type": "string"},
		},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		routed.Add(1)
		var a struct{ Region string }
		json.Unmarshal(req.Params.Arguments, &a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "routed to " + a.Region}}}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	hdr := config.InProcessServer("hdr")
	hdr.Approved = true
	h, err := host.New(&config.Config{Servers: []*config.Server{hdr}, DefaultMode: "allow_all"},
		&host.Options{OutputDir: t.TempDir(), InProcess: map[string]*mcp.Server{"hdr": srv}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{ToolSearch: true})
	t.Cleanup(func() { g.Close() })
	if p := g.Sync(ctx); len(p) > 0 {
		t.Fatal(p)
	}
	sg := &searchGateway{g: g, h: h}
	hs := httptest.NewServer(streamable.New(g).Handler(nil))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	var headers atomic.Pointer[http.Header]
	connect := func(t *testing.T, version string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "hdr-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL,
			HTTPClient: &http.Client{Transport: paramHeaders{h: &headers, base: http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *mcp.ClientSession, header string, args any) (*mcp.CallToolResult, error) {
		if header == "" {
			headers.Store(nil)
		} else {
			headers.Store(&http.Header{"Mcp-Param-Region": {header}})
		}
		defer headers.Store(nil)
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": "mcp__hdr__route", "arguments": args}})
	}
	eu := map[string]any{"region": "eu", "payload": "x"}

	cs := connect(t, "2026-07-28")
	for _, tc := range []struct {
		name, header string
		args         any
		want         string // "" for a result
	}{
		{"no header", "", eu, "missing Mcp-Param-Region header"},
		{"no header, arguments as a string", "", `{"region":"eu"}`, "missing Mcp-Param-Region header"},
		{"another value", "us", eu, "does not match"},
		{"a header without the parameter", "eu", map[string]any{"payload": "x"}, "unexpected Mcp-Param-Region header"},
		{"not a primitive", "eu", map[string]any{"region": map[string]any{"x": 1}}, "not a string"},
		{"matching", "eu", eu, ""},
		{"matching, Base64", "=?base64?ZXU=?=", `{"region":"eu"}`, ""},
		{"neither", "", map[string]any{"payload": "x"}, ""},
	} {
		before := routed.Load()
		res, err := call(cs, tc.header, tc.args)
		if tc.want == "" {
			if err != nil || res.IsError {
				t.Errorf("%s: %v %+v", tc.name, err, res)
			}
			continue
		}
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeHeaderMismatch || !strings.Contains(rpc.Message, tc.want) {
			t.Errorf("%s: %v %+v, want error %d containing %q", tc.name, err, res, mcp.CodeHeaderMismatch, tc.want)
		}
		if routed.Load() != before {
			t.Errorf("%s: the tool was called", tc.name)
		}
	}

	// (What the go-sdk handler does with a direct call.)
	var rpc *jsonrpc.Error
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__hdr__route", Arguments: eu}); !errors.As(err, &rpc) || rpc.Code != mcp.CodeHeaderMismatch {
		t.Errorf("a direct call without the header: %v", err)
	}

	// No parameter headers on stdio, nor before 2026-07-28: none needed,
	// as for a direct call.
	for _, cs := range []*mcp.ClientSession{connect(t, "2025-11-25"), sg.stdio(t, "2026-07-28", nil)} {
		if res, err := call(cs, "", eu); err != nil || res.IsError || host.TextOf(res.Content) != "routed to eu" {
			t.Errorf("%s without headers: %v %+v", cs.InitializeResult().ProtocolVersion, err, res)
		}
	}
}

// TestToolSearchUnknownServer: search_tools' answer to a server it does not
// know names the servers whose tools the caller may find — not b, whose
// every tool the rules deny (and which is refused as unknown too).
func TestToolSearchUnknownServer(t *testing.T) {
	t.Parallel()
	sg := newSearchGateway(t, "", demo("a"), demo("b"), demo("c"))
	cs := sg.stdio(t, "2026-07-28", nil)
	for _, server := range []string{"nope", "b"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "echo", "server": server}})
		if err != nil {
			t.Fatal(err)
		}
		text := host.TextOf(res.Content)
		if !res.IsError || !strings.Contains(text, `no server "`+server+`"`) || !strings.HasSuffix(text, "they are a, c") {
			t.Errorf("server %q: %q (isError %v), want the servers a and c named, and only them", server, text, res.IsError)
		}
	}
	if f := search(t, cs, map[string]any{"query": "echo", "server": "c"}); !slices.Contains(f.names(), "mcp__c__echo") {
		t.Errorf("server c: %v", f.names())
	}
}

// TestToolSearchServerNamesAndOverrides: under --naming server, search
// finds a tool under its registry name with its override's title and
// description, and call_tool calls it by that name or by its served one
// (the override's name under SERVER__).
func TestToolSearchServerNamesAndOverrides(t *testing.T) {
	t.Parallel()
	a := demo("a")
	a.Tools = &config.ToolFilter{Overrides: map[string]*config.ToolOverride{"echo": {Name: "say", Title: "Say", Description: "Echoes the message."}}}
	sg := newSearchGateway(t, config.NamingServer, a)
	if len(sg.problems) > 0 {
		t.Fatal(sg.problems)
	}
	cs := sg.stdio(t, "2026-07-28", nil)
	f := search(t, cs, map[string]any{"query": "echoes the message"})
	i := slices.IndexFunc(f.Tools, func(ft struct {
		Name        string         `json:"name"`
		Title       string         `json:"title"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	}) bool {
		return ft.Name == "mcp__a__echo"
	})
	if i < 0 {
		t.Fatalf("echo not found: %v", f.names())
	}
	if got := f.Tools[i]; got.Title != "Say" || got.Description != "Echoes the message." {
		t.Errorf("found %+v, want the override's title and description", got)
	}
	for _, name := range []string{"mcp__a__echo", "a__say"} {
		if res := callFound(t, cs, name, map[string]any{"message": "m"}); res.IsError || host.TextOf(res.Content) != "m" {
			t.Errorf("call_tool %s: %q", name, host.TextOf(res.Content))
		}
	}
	if res := callFound(t, cs, "a__echo", map[string]any{"message": "m"}); !res.IsError {
		t.Errorf("call_tool a__echo (not a served name: echo is served as a__say): %q", host.TextOf(res.Content))
	}
}

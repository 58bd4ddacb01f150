package gateway_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

func TestMain(m *testing.M) {
	demoserver.RunIfChild()
	if os.Getenv(rawToolsChildEnv) != "" {
		rawToolsStdio()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var demo = demotest.Server

// connectInMemory is a go-sdk client of g, in memory.
func connectInMemory(t testing.TB, g *gateway.Gateway) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// inProcessHost is a host of servers, in process under their names (in
// the configuration in name order), closed at the test's end.
func inProcessHost(t testing.TB, servers map[string]*mcp.Server) *host.Host {
	t.Helper()
	var dyn []*config.Server
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		dyn = append(dyn, config.InProcessServer(name))
	}
	cfg, diags := config.Load(&config.LoadOptions{Dynamic: dyn, WorkDir: t.TempDir(), LookupEnv: func(string) (string, bool) { return "", false }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), InProcess: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// newGateway is a gateway with opts over h, closed at the test's end, not
// yet synced, and a context that ends with the test.
func newGateway(t testing.TB, h *host.Host, opts *gateway.Options) (*gateway.Gateway, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g := gateway.New(h, opts)
	t.Cleanup(func() { g.Close() })
	return g, ctx
}

// syncedGateway is newGateway's gateway, synced with no problem.
func syncedGateway(t testing.TB, h *host.Host, opts *gateway.Options) (*gateway.Gateway, context.Context) {
	t.Helper()
	g, ctx := newGateway(t, h, opts)
	if p := g.Sync(ctx); len(p) != 0 {
		t.Fatalf("problems %v", p)
	}
	return g, ctx
}

// connect starts a gateway over two demo servers and connects a go-sdk client to it.
func connect(t *testing.T, opts *mcp.ClientOptions) (*mcp.ClientSession, *host.Host) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a"), demo("b")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, nil)
	t.Cleanup(func() { g.Close() })
	if p := g.Sync(ctx); len(p) > 0 {
		t.Fatal(p)
	}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, h
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

func TestGatewayListsAndCalls(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, nil)
	ctx := context.Background()
	names := toolNames(t, cs)
	var want []string
	for _, s := range []string{"a", "b"} {
		for _, tl := range []string{"add", "add_tool", "crash", "echo", "fail", "large", "slow", "stats"} {
			want = append(want, "mcp__"+s+"__"+tl)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__b__echo", Arguments: map[string]any{"message": "via gateway"}})
	if err != nil || res.IsError || host.TextOf(res.Content) != "via gateway" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__add", Arguments: map[string]any{"a": 2, "b": 40}})
	if err != nil || res.IsError {
		t.Fatalf("add: %+v %v", res, err)
	}
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["sum"] != 42.0 {
		t.Errorf("structured content %v", res.StructuredContent)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__fail", Arguments: map[string]any{"message": "nope"}})
	if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), "nope") {
		t.Fatalf("fail: %+v %v", res, err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__missing"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
}

func TestGatewayForwardsProgress(t *testing.T) {
	t.Parallel()
	progress := make(chan float64, 10)
	cs, _ := connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Progress
	}})
	params := &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: map[string]any{"milliseconds": 300, "steps": 3}}
	params.SetProgressToken("tok-1")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	// The server sends its last notification just before its result; the
	// go-sdk client may deliver the result first (notifications are handled
	// on a queue, responses are not), and progress after a result is dropped.
	// So all but the last must arrive, in order.
	var got []float64
	for len(got) < 2 {
		select {
		case p := <-progress:
			got = append(got, p)
		case <-time.After(3 * time.Second):
			t.Fatalf("progress so far: %v", got)
		}
	}
	if got[0] != 1 || got[1] != 2 {
		t.Errorf("progress %v, want 1, 2 (, 3)", got)
	}
}

func TestGatewayFollowsUpstreamListChanges(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 10)
	cs, _ := connect(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__add_tool", Arguments: map[string]any{"name": "late"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the gateway never listed mcp__a__late")
		}
		if strings.Contains(strings.Join(toolNames(t, cs), " "), "mcp__a__late") {
			break
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__late", Arguments: map[string]any{"message": "m"}})
	if err != nil || host.TextOf(res.Content) != "late: m" {
		t.Fatalf("late: %+v %v", res, err)
	}
}

func TestObjectSchema(t *testing.T) {
	t.Parallel()
	empty := map[string]any{"type": "object"}
	obj := map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}
	for _, tc := range []struct {
		in   any
		want any
	}{
		{nil, empty},
		{"string", empty},
		{map[string]any{"type": "array"}, empty},
		{obj, obj},
	} {
		if diff := cmp.Diff(tc.want, gateway.ObjectSchema(tc.in)); diff != "" {
			t.Errorf("ObjectSchema(%v) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestSyncReportsAFailedServerOnce: a server that cannot connect fails each
// of its lists (tools, prompts, resources, templates) with the same error;
// the gateway reports it once.
func TestSyncReportsAFailedServerOnce(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{
		{Name: "down", Transport: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp", Approved: true, ConnectTimeout: 2 * time.Second}}})
	n := 0
	for _, pr := range p.problems {
		if pr.Server == "down" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d problems for the server that cannot connect, want 1: %v", n, p.problems)
	}
}

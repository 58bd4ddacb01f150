package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// endpointHost is a host over demo servers a and b (with the pass-through
// features: prompts, resources, templates) whose configuration has
// endpoint "dev": server a, without its add tool, naming server.
func endpointHost(t *testing.T, dev *config.Endpoint) *host.Host {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if dev == nil {
		dev = &config.Endpoint{Name: "dev", Servers: []string{"a"}, Naming: config.NamingServer,
			Tools: &config.EndpointTools{Exclude: []string{"mcp__a__add"}}}
	}
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a", "-passthrough"), demo("b", "-passthrough")}, DefaultMode: "allow_all",
		Endpoints: []*config.Endpoint{dev}}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	return h
}

// connectFront connects a go-sdk client speaking version to g over front
// ("http" or "stdio").
func connectFront(t *testing.T, g *gateway.Gateway, front, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport
	switch front {
	case "http":
		srv := httptest.NewServer(streamable.New(g).Handler(nil))
		t.Cleanup(func() {
			srv.CloseClientConnections()
			srv.Close()
		})
		tr = &mcp.StreamableClientTransport{Endpoint: srv.URL}
	default:
		ctx, cancel := context.WithCancel(context.Background())
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			stdio.Serve(ctx, g, inR, outW)
		}()
		t.Cleanup(func() {
			inW.Close()
			outR.Close()
			<-done
			cancel()
		})
		tr = &mcp.IOTransport{Reader: outR, Writer: inW}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "endpoint-test"}, opts).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestEndpointServes: a gateway of endpoint "dev" (server a, its add tool
// excluded, naming server) serves, over HTTP and stdio to clients of both
// eras, a's tools but add under SERVER__TOOL, a's prompts, resources and
// templates (a's demo://readme unqualified: b's is not served to collide
// with), and nothing of b's; a call, prompt or read of anything else —
// b's tool by any name, a's excluded add, b's resource by its qualified URI
// — is refused as unknown, on the relay's path and the go-sdk server's; the
// audit lines name the endpoint and the canonical tool. The whole gateway
// of the same host still serves everything. (Before, there was no
// endpoint: every gateway served every server.)
func TestEndpointServes(t *testing.T) {
	t.Parallel()
	for _, front := range []string{"http", "stdio"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(front+" "+version, func(t *testing.T) {
				t.Parallel()
				h := endpointHost(t, nil)
				var buf syncbuf.Buffer
				log := audit.New(&buf, nil)
				g := gateway.New(h, &gateway.Options{Endpoint: "dev", Audit: log})
				t.Cleanup(func() { g.Close() })
				if p := g.Sync(context.Background()); len(p) > 0 {
					t.Fatal(p)
				}
				whole := gateway.New(h, nil)
				t.Cleanup(func() { whole.Close() })
				whole.Sync(context.Background())
				cs := connectFront(t, g, front, version, nil)
				ctx := context.Background()
				if ins := cs.InitializeResult().Instructions; !strings.HasPrefix(ins, "mcphost gateway (endpoint dev): ") || !strings.Contains(ins, "named SERVER__NAME") {
					t.Errorf("instructions %q: want the endpoint's, of its naming", ins)
				}
				tools := toolNames(t, cs)
				if !slices.Contains(tools, "a__echo") || slices.ContainsFunc(tools, func(n string) bool {
					return n == "a__add" || strings.HasPrefix(n, "b__") || strings.HasPrefix(n, "mcp__")
				}) {
					t.Errorf("tools %v: want a's but add, as SERVER__TOOL, and none of b's", tools)
				}
				prompts, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range prompts.Prompts {
					if !strings.HasPrefix(p.Name, "a__") {
						t.Errorf("prompt %s served", p.Name)
					}
				}
				res, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				if !slices.Contains(uris, "demo://readme") || slices.ContainsFunc(uris, func(u string) bool { return strings.HasPrefix(u, "mcphost://") }) {
					t.Errorf("resources %v: want a's, unqualified", uris)
				}
				templates, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(templates.ResourceTemplates) != 1 || strings.HasPrefix(templates.ResourceTemplates[0].URITemplate, "mcphost://") {
					t.Errorf("templates %+v: want a's one, unqualified", templates.ResourceTemplates)
				}
				// Calls: the relay's path (no progress token) and the go-sdk
				// server's (one).
				for _, meta := range []mcp.Meta{nil, {"progressToken": "p"}} {
					r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "in"}, Meta: meta})
					if err != nil || r.IsError || textOf(r) != "in" {
						t.Errorf("call a__echo (meta %v): %v %s", meta, err, textOf(r))
					}
					for _, name := range []string{"b__echo", "mcp__b__echo", "a__add", "mcp__a__add", "mcp__a__echo", "echo"} {
						_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "out"}, Meta: meta})
						if err == nil || !strings.Contains(err.Error(), "unknown tool") {
							t.Errorf("call %s (meta %v): %v, want unknown tool", name, meta, err)
						}
					}
				}
				if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "b__greet", Arguments: map[string]string{"name": "x"}}); err == nil {
					t.Error("prompt b__greet got")
				}
				for _, uri := range []string{"mcphost://b/demo://readme", "mcphost://b/demo://items/x"} {
					if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
						t.Errorf("read %s: served", uri)
					}
				}
				if version == "2025-11-25" {
					if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mcphost://b/demo://readme"}); err == nil {
						t.Error("subscribed to b's readme")
					}
				}
				// The whole gateway serves b's.
				wcs := connectFront(t, whole, front, version, nil)
				if names := toolNames(t, wcs); !slices.Contains(names, "mcp__b__echo") || !slices.Contains(names, "mcp__a__add") {
					t.Errorf("the whole gateway's tools %v", names)
				}
				cs.Close()
				var lines []string
				for _, r := range allRecords(t, log, &buf) {
					if r.Event == audit.EventToolCall {
						lines = append(lines, r.Endpoint+" "+r.Tool+" "+r.Outcome)
					}
				}
				if len(lines) < 2 || lines[0] != "dev mcp__a__echo ok" {
					t.Errorf("audit lines %q: want the first \"dev mcp__a__echo ok\"", lines)
				}
				for _, l := range lines {
					if !strings.HasPrefix(l, "dev ") {
						t.Errorf("audit line %q without the endpoint", l)
					}
				}
			})
		}
	}
}

// TestEndpointReload: a reload that changes an endpoint's servers and tools
// block changes what its gateway serves at its next Sync (Resync), and its
// clients are told (tools/list_changed).
func TestEndpointReload(t *testing.T) {
	t.Parallel()
	h := endpointHost(t, &config.Endpoint{Name: "dev", Servers: []string{"a"}, Tools: &config.EndpointTools{Include: []string{"mcp__a__echo"}}})
	g := gateway.New(h, &gateway.Options{Endpoint: "dev"})
	t.Cleanup(func() { g.Close() })
	g.Sync(context.Background())
	changed := make(chan struct{}, 10)
	cs := connectFront(t, g, "http", "2025-11-25", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if names := toolNames(t, cs); !slices.Equal(names, []string{"mcp__a__echo"}) {
		t.Fatalf("tools %v", names)
	}
	cfg := *h.Config()
	cfg.Endpoints = []*config.Endpoint{{Name: "dev", Servers: []string{"a", "b"}, Tools: &config.EndpointTools{Include: []string{"mcp__b__echo", "mcp__a__add"}}}}
	if _, err := h.Reload(context.Background(), &cfg, time.Second); err != nil {
		t.Fatal(err)
	}
	g.Resync()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed")
	}
	if names := toolNames(t, cs); !slices.Equal(names, []string{"mcp__a__add", "mcp__b__echo"}) {
		t.Errorf("tools after the reload %v", names)
	}
}

// TestEndpointSharesAuthRulesAndLimits: an endpoint served with /mcp's
// front options is held to what /mcp is: inbound OAuth (401 without a
// token), the permission rules for the caller (alice's denied echo is
// neither listed nor callable: unknown, as elsewhere), and the one rate
// limit per principal, whose budget /mcp and the endpoint share.
func TestEndpointSharesAuthRulesAndLimits(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	deny := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a__echo",
		For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a"), demo("b")}, DefaultMode: "allow_all", Permissions: []config.PermissionRule{deny},
		Endpoints: []*config.Endpoint{{Name: "dev", Servers: []string{"a"}}}}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	st, _ := state.NewLocal(nil, "")
	const burst = 6
	opts := &streamable.Options{
		OAuth:     &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice"), Resource: "http://gateway.example/mcp"},
		RateLimit: st.RateLimiter("gateway", ratelimit.Options{Rate: 0.001, Burst: burst}),
	}
	serve := func(o *gateway.Options) string {
		g := gateway.New(h, o)
		t.Cleanup(func() { g.Close() })
		g.Sync(ctx)
		srv := httptest.NewServer(streamable.New(g).Handler(opts))
		t.Cleanup(func() {
			srv.CloseClientConnections()
			srv.Close()
		})
		return srv.URL
	}
	keys := sealbox.Random() // (as serve gives every gateway its keys: they key the principals' buckets)
	whole, dev := serve(&gateway.Options{Keys: keys, State: st}), serve(&gateway.Options{Endpoint: "dev", Keys: keys, State: st})
	ask := func(url, method, name, body, token string) (int, string) {
		t.Helper()
		hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
		if name != "" {
			hdr["Mcp-Name"] = name
		}
		if token != "" {
			hdr["Authorization"] = "Bearer " + token
		}
		resp, answer := post(t, url, body, hdr)
		return resp.StatusCode, answerOf(answer)
	}
	const newMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` + newMeta + `}}}`
	if code, _ := ask(dev, "tools/list", "", list, ""); code != http.StatusUnauthorized {
		t.Errorf("dev without a token: %d, want 401", code)
	}
	code, body := ask(dev, "tools/list", "", list, "alice") // (1 of the burst)
	if code != http.StatusOK || !strings.Contains(body, `"mcp__a__add"`) || strings.Contains(body, `"mcp__a__echo"`) || strings.Contains(body, `"mcp__b__`) {
		t.Errorf("alice's tools at dev: %d %s; want a's but echo (denied her)", code, body)
	}
	for _, name := range []string{"mcp__a__echo", "mcp__b__echo"} { // (2, 3)
		if code, body := ask(dev, "tools/call", name, callBody(2, name, newMeta), "alice"); !strings.Contains(body, "unknown tool") {
			t.Errorf("alice's call of %s at dev: %d %s, want unknown tool", name, code, body)
		}
	}
	for range 3 { // (4, 5, 6: the burst spent, across /mcp and dev)
		ask(whole, "tools/list", "", list, "alice")
	}
	if code, _ := ask(dev, "tools/list", "", list, "alice"); code != http.StatusTooManyRequests {
		t.Errorf("alice at dev past the burst spent on /mcp and dev: %d, want 429", code)
	}
}

// TestEndpointConnectsItsServers: an endpoint's gateway (serve --endpoint
// on stdio) starts its own servers only: the others, which its clients
// cannot use, are never started.
func TestEndpointConnectsItsServers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a"), demo("b")}, DefaultMode: "allow_all",
		Endpoints: []*config.Endpoint{{Name: "dev", Servers: []string{"a"}}}}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.New(h, &gateway.Options{Endpoint: "dev"})
	t.Cleanup(func() {
		g.Close()
		cancel()
		h.Close()
	})
	<-g.ConnectAll(ctx, nil)
	states := map[string]conn.State{}
	for _, st := range h.Connections().Status() {
		states[st.Name] = st.State
	}
	if states["a"] != conn.StateConnected || states["b"] != conn.StatePending {
		t.Errorf("states %v: want a connected, b never started", states)
	}
}

// TestEndpointNamingReload: an endpoint's naming changed by a reload is
// published with the lists named so: while the Sync reads the registry,
// the old naming is still served, with the old lists, and a call by an old
// name succeeds; after it, the new. An endpoint that drops its naming
// returns to the --naming flag's (Options.Naming) when given, else to the
// settings' naming of the running configuration (settings.naming needs a
// restart). (Before, the new naming was served from the Sync's start.)
func TestEndpointNamingReload(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		flag      string   // Options.Naming
		reloaded  string   // the endpoint's naming after the reload
		settings  string   // the settings' naming after the reload
		want      string   // the naming served after it
		wantTools []string // the endpoint's tools after it
	}{
		{"a naming of its own", "", config.NamingBare, "", config.NamingBare, []string{"echo"}},
		// (settings.naming needs a restart: a reload keeps the running one)
		{"none: the running settings'", "", "", config.NamingBare, "", []string{"mcp__a__echo"}},
		{"none: the flag's", config.NamingPrefixed, "", config.NamingBare, config.NamingPrefixed, []string{"mcp__a__echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := endpointHost(t, &config.Endpoint{Name: "dev", Servers: []string{"a"}, Naming: config.NamingServer,
				Tools: &config.EndpointTools{Include: []string{"mcp__a__echo"}}})
			g := gateway.New(h, &gateway.Options{Endpoint: "dev", Naming: tc.flag})
			t.Cleanup(func() { g.Close() })
			ctx := context.Background()
			g.Sync(ctx)
			cs := connectFront(t, g, "http", "2025-11-25", nil)
			if names := toolNames(t, cs); !slices.Equal(names, []string{"a__echo"}) {
				t.Fatalf("tools %v", names)
			}
			cfg := *h.Config()
			cfg.Settings.Naming = tc.settings
			cfg.Endpoints = []*config.Endpoint{{Name: "dev", Servers: []string{"a"}, Naming: tc.reloaded,
				Tools: &config.EndpointTools{Include: []string{"mcp__a__echo"}}}}
			if _, err := h.Reload(ctx, &cfg, time.Second); err != nil {
				t.Fatal(err)
			}
			g.Sync(gateway.WithSyncTrace(ctx, func(point string) {
				if point != "read" {
					return
				}
				// (mid-Sync: the registry read, the lists not yet swapped)
				if got := g.NamingMode(); got != config.NamingServer {
					t.Errorf("mid-Sync the naming served is %q, want the old %q", got, config.NamingServer)
				}
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "mid"}})
				if err != nil || r.IsError || textOf(r) != "mid" {
					t.Errorf("mid-Sync call a__echo: %v %s", err, textOf(r))
				}
			}))
			if got := g.NamingMode(); got != tc.want {
				t.Errorf("after the Sync the naming served is %q, want %q", got, tc.want)
			}
			if names := toolNames(t, cs); !slices.Equal(names, tc.wantTools) {
				t.Errorf("tools after the reload %v, want %v", names, tc.wantTools)
			}
		})
	}
}

// TestEndpointNamingReloadPerUser: while a Sync after an endpoint's naming
// changed (server to prefixed) has not yet swapped the lists, alice's
// per-user tool is still called by the name she was listed (pu__show).
// (Before, the new naming was served from the Sync's start: unknown tool.)
func TestEndpointNamingReloadPerUser(t *testing.T) {
	t.Parallel()
	pu := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return showServer() }, nil))
	t.Cleanup(pu.Close)
	ctx, cancel := context.WithCancel(context.Background())
	dev := func(naming string) []*config.Endpoint {
		return []*config.Endpoint{{Name: "dev", Servers: []string{"a", "pu"}, Naming: naming}}
	}
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a"), perUserServer("pu", pu.URL)}, DefaultMode: "allow_all",
		Endpoints: dev(config.NamingServer)}, &host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{Endpoint: "dev"})
	g.Sync(ctx)
	t.Cleanup(func() {
		g.Close()
		cancel()
		h.Close()
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: aliceServer(t, g), HTTPClient: &http.Client{Transport: bearer{"alice", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if names := toolNames(t, cs); !slices.Contains(names, "pu__show") {
		t.Fatalf("alice's tools %v", names)
	}
	cfg := *h.Config()
	cfg.Endpoints = dev(config.NamingPrefixed)
	if _, err := h.Reload(ctx, &cfg, time.Second); err != nil {
		t.Fatal(err)
	}
	g.Sync(gateway.WithSyncTrace(ctx, func(point string) {
		if point != "read" {
			return
		}
		if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pu__show", Arguments: map[string]any{}}); err != nil || r.IsError {
			t.Errorf("mid-Sync call pu__show: %v %+v", err, r)
		}
	}))
	if names := toolNames(t, cs); !slices.Contains(names, "mcp__pu__show") || !slices.Contains(names, "mcp__a__echo") {
		t.Errorf("alice's tools after the Sync %v", names)
	}
}

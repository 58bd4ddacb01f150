package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/telemetry"
)

// TestTelemetryMadeUpToolNames: tool names a client makes up (or names of
// tools hidden from it) never become gen_ai.tool.name values, of metrics
// or of the requests' SERVER spans: 5,000 made-up names are one series,
// "_unknown", and the real tools' series are there beside it.
func TestTelemetryMadeUpToolNames(t *testing.T) {
	t.Parallel()
	const madeUp = 5000
	// Hidden from alice (a gateway user): her calls of it are answered as
	// for an unknown tool, and measured as one.
	deny := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a__crash",
		For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	for _, tc := range []struct {
		name      string
		transport string
		version   string
		n         int
	}{
		{"stdio", "stdio", "", madeUp},
		{"http 2025-11-25", "http", oldProtocol, 200},
		{"http 2026-07-28", "http", newProtocol, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newTelRecorder(t)
			g := telGateway(t, rec.tel, deny)
			var cs *mcp.ClientSession
			hidden := tc.transport == "http" // (stdio has no gateway users)
			if tc.transport == "stdio" {
				cs = telStdio(t, g)
			} else {
				srv := httptest.NewServer(streamable.New(g).Handler(&streamable.Options{OAuth: &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice"), Resource: "http://gateway.example/mcp"}}))
				t.Cleanup(func() {
					srv.CloseClientConnections()
					srv.Close()
				})
				var err error
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "tel-http"}, nil).Connect(context.Background(),
					&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{"alice", http.DefaultTransport}}},
					&mcp.ClientSessionOptions{ProtocolVersion: tc.version})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
			}
			ctx := context.Background()
			for i := range tc.n {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: fmt.Sprintf("mcp__a__made_up_%d", i)}); err == nil {
					t.Fatal("a made-up tool was called")
				}
			}
			unknown := uint64(tc.n)
			if hidden {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__crash"}); err == nil {
					t.Fatal("a hidden tool was called")
				}
				unknown++
			}
			for _, real := range []string{"mcp__a__echo", "mcp__a__add"} {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: real, Arguments: map[string]any{"message": "x", "a": 1, "b": 2}}); err != nil {
					t.Fatal(err)
				}
			}
			rec.waitServer(t, "tools/call mcp__a__add")
			values := map[string]uint64{}
			for _, p := range rec.durations(t) {
				if v, ok := p.Attributes.Value("gen_ai.tool.name"); ok {
					values[v.Emit()] += p.Count
				}
			}
			want := map[string]uint64{"mcp__a__echo": 1, "mcp__a__add": 1, telemetry.TargetUnknown: unknown}
			if len(values) != len(want) {
				t.Errorf("%d gen_ai.tool.name values, want %d", len(values), len(want))
			}
			for k, n := range want {
				if values[k] != n {
					t.Errorf("gen_ai.tool.name=%q counted %d requests, want %d", k, values[k], n)
				}
			}
			names := map[string]bool{}
			for _, s := range rec.ended(t) {
				if s.SpanKind != trace.SpanKindServer {
					continue // (the host's own spans of a hidden tool's call name the real tool)
				}
				names[s.Name] = true
				for _, kv := range s.Attributes {
					if kv.Key == "gen_ai.tool.name" && (kv.Value.Emit() == "mcp__a__crash" || len(kv.Value.Emit()) > len("mcp__a__made_up") && kv.Value.Emit()[:len("mcp__a__made_up")] == "mcp__a__made_up") {
						t.Fatalf("span %q has gen_ai.tool.name %q", s.Name, kv.Value.Emit())
					}
				}
			}
			if !names["tools/call "+telemetry.TargetUnknown] || names["tools/call mcp__a__made_up_0"] || names["tools/call mcp__a__crash"] {
				t.Errorf("span names: %d distinct, want the made-up and hidden names as %q", len(names), "tools/call "+telemetry.TargetUnknown)
			}
		})
	}
}

// TestTelemetryToolSearchNames: under --tool-search, calls of the mode's
// own tools (search_tools, call_tool) keep their names as gen_ai.tool.name
// and span target; a made-up name is still "_unknown".
func TestTelemetryToolSearchNames(t *testing.T) {
	t.Parallel()
	rec := newTelRecorder(t)
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"},
		&host.Options{OutputDir: t.TempDir(), Telemetry: rec.tel})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{Telemetry: rec.tel, ToolSearch: true})
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	cs := telStdio(t, g)
	for _, c := range []*mcp.CallToolParams{
		{Name: gateway.SearchToolName, Arguments: map[string]any{"query": "echo"}},
		{Name: gateway.CallToolName, Arguments: map[string]any{"name": "mcp__a__echo", "arguments": map[string]any{"message": "x"}}},
		{Name: gateway.CallToolName, Arguments: map[string]any{"name": "mcp__a__add", "arguments": map[string]any{"a": 1, "b": 2}}},
	} {
		if res, err := cs.CallTool(ctx, c); err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.Name, res, err)
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__made_up"}); err == nil {
		t.Fatal("a made-up tool was called")
	}
	rec.waitServer(t, "tools/call "+telemetry.TargetUnknown)
	values := map[string]uint64{}
	for _, p := range rec.durations(t) {
		if v, ok := p.Attributes.Value("gen_ai.tool.name"); ok {
			values[v.Emit()] += p.Count
		}
	}
	want := map[string]uint64{gateway.SearchToolName: 1, gateway.CallToolName: 2, telemetry.TargetUnknown: 1}
	if len(values) != len(want) {
		t.Errorf("gen_ai.tool.name values %v, want %v", values, want)
	}
	for k, n := range want {
		if values[k] != n {
			t.Errorf("gen_ai.tool.name=%q counted %d requests, want %d", k, values[k], n)
		}
	}
	for _, name := range []string{"tools/call " + gateway.SearchToolName, "tools/call " + gateway.CallToolName} {
		if len(rec.servers(t, name)) == 0 {
			t.Errorf("no SERVER span %q", name)
		}
	}
}

package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestHandedOverCallChecksOnce: with telemetry off, a tools/call the relay
// tries and hands to the go-sdk path (a PreToolUse hook that asks; a
// request interceptor that refuses) runs its checks once, on both fronts:
// the relay's decision goes with the call (its DecisionNote), as it does
// with telemetry on. The hook is a real sh process that logs each run.
func TestHandedOverCallChecksOnce(t *testing.T) {
	t.Parallel()
	for _, front := range []string{"stdio", "http"} {
		for _, kind := range []string{"hook", "interceptor"} {
			t.Run(front+" "+kind, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				runs := filepath.Join(t.TempDir(), "runs")
				cfg := &config.Config{Servers: []*config.Server{demo("a", "-passthrough")}, DefaultMode: "allow_all"}
				k := &gwChecker{decide: func(c *intercept.Call, p intercept.Phase) intercept.Verdict {
					return intercept.Verdict{Action: intercept.Deny, Reason: "no"}
				}}
				if kind == "hook" {
					cfg.Hooks = []*config.Hook{{Event: "PreToolUse", Matcher: "mcp__a__echo", Shell: "sh", Timeout: 30 * time.Second,
						Command: `echo run >> "$RUNS"; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check"}}'`,
						Env:     map[string]string{"RUNS": runs}, Dir: t.TempDir(), Approved: true,
						Origin: config.Origin{Scope: config.ScopeUser, File: "/test/config.hcl"}}}
				}
				h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				if kind == "interceptor" {
					e, err := intercept.InterceptorEntry(&config.Interceptor{Name: "guard", Builtin: "test", Events: []string{intercept.EventToolsCall}, Phases: []string{"request"}}, intercept.KindBuiltin, k)
					if err != nil {
						t.Fatal(err)
					}
					h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
				}
				if !h.Serving().HasChecks() {
					t.Fatal("no checks configured")
				}
				h.ConnectAll(ctx, nil)
				g := gateway.New(h, &gateway.Options{})
				if p := g.Sync(ctx); len(p) > 0 {
					t.Fatal(p)
				}
				var tr mcp.Transport
				if front == "stdio" {
					w, r := servePipes(t, g)
					tr = &mcp.IOTransport{Reader: r, Writer: w}
				} else {
					srv := httptest.NewServer(streamable.New(g).Handler(nil))
					defer srv.Close()
					defer srv.CloseClientConnections()
					tr = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{}}
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "handover"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				// (The client cannot be asked: the call is refused either way.)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "hi"}})
				if err == nil && !res.IsError {
					t.Fatalf("result %q: the call was not refused", textOf(res))
				}
				n := len(k.calls())
				if kind == "hook" {
					b, err := os.ReadFile(runs)
					if err != nil {
						t.Fatal(err)
					}
					n = strings.Count(string(b), "run")
				}
				if n != 1 {
					t.Errorf("the %s ran %d times for one call, want 1", kind, n)
				}
			})
		}
	}
}

package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// What a call pays for the checks' call info (the session, endpoint and
// front the fronts tell them: host.CallContext), and what a check is told.

// infoGateway is a gateway of the demo server "a" at the endpoint "dev",
// with an audit log if audited, and, for a non-nil k, the interceptor
// "guard" (in process) of event at phase run by k.
func infoGateway(t testing.TB, audited bool, k intercept.Checker, event, phase string) (*gateway.Gateway, *audit.Log, *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := &config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all",
		Endpoints: []*config.Endpoint{{Name: "dev", Servers: []string{"a"}}}}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if k != nil {
		e, err := intercept.InterceptorEntry(&config.Interceptor{Name: "guard", Builtin: "test", Events: []string{event}, Phases: []string{phase}}, intercept.KindBuiltin, k)
		if err != nil {
			t.Fatal(err)
		}
		h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
	}
	var buf syncbuf.Buffer
	log := audit.New(&buf, nil)
	h.ConnectAll(ctx, nil)
	o := &gateway.Options{Endpoint: "dev"}
	if audited {
		o.Audit = log
	}
	g := gateway.New(h, o)
	t.Cleanup(func() {
		g.Close()
		cancel()
		h.Close()
		log.Close(context.Background())
	})
	if p := g.Sync(ctx); len(p) > 0 {
		t.Fatal(p)
	}
	return g, log, &buf
}

// TestRelayUncheckedCallAllocs: a relayed call that no check matches
// allocates no more when a check is configured (here a tools/list
// interceptor) than with none (was: the call info's session reference,
// its boxing and a context value, on every call).
func TestRelayUncheckedCallAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("measures relayed calls")
	}
	// (The least of 3 runs: a run may count a stray allocation of the
	// runtime or of another test's goroutines.)
	allocs := func(k intercept.Checker) int64 {
		least := int64(-1)
		for range 3 {
			g, _, _ := infoGateway(t, false, k, intercept.EventToolsList, "response")
			w, r := servePipes(t, g)
			if n := testing.Benchmark(func(b *testing.B) { relayRawCalls(b, g, w, r) }).AllocsPerOp(); least < 0 || n < least {
				least = n
			}
		}
		return least
	}
	allow := &gwChecker{decide: func(*intercept.Call, intercept.Phase) intercept.Verdict { return intercept.Verdict{} }}
	none, unmatched := allocs(nil), allocs(allow)
	t.Logf("allocs per relayed call: %d without checks, %d with an unmatched check", none, unmatched)
	if none <= 0 || unmatched > none {
		t.Errorf("allocs per relayed call: %d with an unmatched check, want at most %d (none configured)", unmatched, none)
	}
	if n := len(allow.calls()); n != 0 {
		t.Errorf("the tools/list check ran %d times for calls", n)
	}
}

// TestCheckedCallInfo: a check of a tools/call is told the call's
// session (the audit line's reference to it; none on stdio), the
// gateway's endpoint and the front, on both fronts, relayed or not.
func TestCheckedCallInfo(t *testing.T) {
	t.Parallel()
	for _, front := range []string{"stdio", "http"} {
		t.Run(front, func(t *testing.T) {
			t.Parallel()
			k := &gwChecker{decide: func(*intercept.Call, intercept.Phase) intercept.Verdict { return intercept.Verdict{} }}
			g, log, buf := infoGateway(t, true, k, intercept.EventToolsCall, "request")
			ctx := context.Background()
			var tr mcp.Transport
			if front == "stdio" {
				var w io.WriteCloser
				var r io.ReadCloser
				w, r = servePipes(t, g)
				tr = &mcp.IOTransport{Reader: r, Writer: w}
			} else {
				srv := httptest.NewServer(streamable.New(g).Handler(nil))
				t.Cleanup(func() {
					srv.CloseClientConnections()
					srv.Close()
				})
				tr = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{}}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "info"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			before := g.RelayedCalls()
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "hi"}}); err != nil || res.IsError {
				t.Fatal(res, err)
			}
			if g.RelayedCalls() == before {
				t.Error("the call did not take the relay path")
			}
			cs.Close()
			var line *audit.Record
			for _, r := range allRecords(t, log, buf) {
				if r.Event == audit.EventToolCall {
					line = &r
				}
			}
			if line == nil {
				t.Fatal("no audit line of the call")
			}
			if front == "http" && len(line.Session) != 16 {
				t.Errorf("audit line's session %q, want a reference", line.Session)
			}
			seen := k.calls()
			if len(seen) == 0 {
				t.Fatal("the check did not run")
			}
			for _, c := range seen {
				if c.Event != intercept.EventToolsCall || c.Front != front || c.Endpoint != "dev" || c.Session != line.Session {
					t.Errorf("call %s on front %q, endpoint %q, session %q; want tools/call on %q, \"dev\", %q", c.Event, c.Front, c.Endpoint, c.Session, front, line.Session)
				}
			}
		})
	}
}

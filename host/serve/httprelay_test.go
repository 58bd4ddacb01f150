package serve_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/serve"
)

// TestHTTPRelay: over `serve --http`, a tools/call of either protocol era
// to a server whose session is 2026-07-28 takes the relay path (answered
// with the upstream's raw response), with the same result as the go-sdk
// path; a call whose session set a log level does not (its messages go to
// the call's stream).
func TestHTTPRelay(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}})
	ctx := context.Background()
	echo := func(cs *mcp.ClientSession, msg string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": msg}})
		if err != nil || res.IsError || textOf(res) != msg || len(res.Meta) > 0 {
			t.Fatalf("echo %q: %v %+v", msg, err, res)
		}
	}
	for _, version := range protocols {
		cs := p.dial(t, version, nil)
		before := p.g.RelayedCalls()
		echo(cs, "one "+version)
		echo(cs, `two "quoted" \ é`)
		if got := p.g.RelayedCalls() - before; got != 2 {
			t.Errorf("%s: %d calls relayed, want 2", version, got)
		}
	}
	cs := p.dial(t, oldProtocol, nil)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	before := p.g.RelayedCalls()
	echo(cs, "logged")
	if got := p.g.RelayedCalls() - before; got != 0 {
		t.Errorf("a session with a log level: %d calls relayed, want 0", got)
	}
}

// TestHTTPRelayKeepsSessions: the go-sdk handler's idle timer sees only
// what it serves, so a session whose calls are relayed still has one served
// by it in every half of the idle timeout: a busy session is never closed
// as idle. A session the client ended is not served by the relay.
func TestHTTPRelayKeepsSessions(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}, http: &serve.HTTPOptions{SessionIdleTimeout: idle}})
	ctx := context.Background()
	// Without the standalone event stream, during which the go-sdk
	// handler does not count a session as idle.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "busy"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: p.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.ID()
	for end := time.Now().Add(3 * idle); time.Now().Before(end); time.Sleep(idle / 10) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "busy"}})
		if err != nil || res.IsError {
			t.Fatalf("a busy session's call failed: %v %+v", err, res)
		}
	}
	if p.g.RelayedCalls() == 0 {
		t.Fatal("no call was relayed")
	}
	// What the go-sdk handler serves finds the session still open.
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("the busy session was closed as idle: %v", err)
	}
	cs.Close() // DELETE
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", oldProtocol)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a call on an ended session: HTTP %d, want 404", resp.StatusCode)
	}
}

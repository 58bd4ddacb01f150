package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// gatewayServer serves a gateway over one demo server on a real loopback
// HTTP server and returns it with its URL.
func gatewayServer(t *testing.T, gopts *gateway.Options, opts *streamable.Options) (*gateway.Gateway, string) {
	t.Helper()
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	g := gateway.New(h, gopts)
	t.Cleanup(func() { g.Close() })
	g.Sync(context.Background())
	srv := httptest.NewServer(streamable.New(g).Handler(opts))
	t.Cleanup(srv.Close)
	return g, srv.URL
}

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestHTTPStrictJSON (SECURITY B17): every POST body is held to the strict
// scan before the go-sdk decodes it, each element of a batch too.
func TestHTTPStrictJSON(t *testing.T) {
	t.Parallel()
	g, url := gatewayServer(t, nil, nil)
	init := func() string {
		resp, _ := post(t, url, initialize, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %s", resp.Status)
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	sid := init()
	tests := []struct{ name, body, want string }{
		{"duplicate key", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo","name":"mcp__a__crash"}}`, `-32600`},
		{"case-variant key", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo","Name":"mcp__a__crash"}}`, `-32600`},
		{"case-folding ſ", `{"jsonrpc":"2.0","id":2,"method":"tools/call","paramſ":{"name":"mcp__a__crash"}}`, `-32600`},
		{"escaped key", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"n\u0061me":"mcp__a__crash"}}`, `-32600`},
		{"duplicate id", `{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}`, `-32600`},
		{"duplicate method", `{"jsonrpc":"2.0","id":2,"method":"ping","method":"tools/call"}`, `-32600`},
		{"concatenated", `{"jsonrpc":"2.0","id":2,"method":"ping"}{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__a__crash"}}`, `-32700`},
		{"batch element", `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","Name":"y"}}]`, `-32600`},
	}
	for _, tc := range tests {
		resp, body := post(t, url, tc.body, map[string]string{"Mcp-Session-Id": sid})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %s %s, want 400 with %s", tc.name, resp.Status, body, tc.want)
		}
	}
	if g.RelayedCalls() != 0 {
		t.Error("a refused body was relayed")
	}
	// A well-formed request in the same session is still served.
	resp, body := post(t, url, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":9`) {
		t.Errorf("ping after refusals: %s %s", resp.Status, body)
	}
}

// TestHTTPSessionLimits: abandoned sessions expire after the idle timeout,
// and a new session over the cap is refused with a clear error.
func TestHTTPSessionLimits(t *testing.T) {
	t.Parallel()
	g, url := gatewayServer(t, nil, &streamable.Options{MaxSessions: 3, SessionIdleTimeout: 2 * time.Second})
	var sids []string
	for i := 0; i < 3; i++ {
		resp, _ := post(t, url, initialize, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("session %d: %s", i, resp.Status)
		}
		sids = append(sids, resp.Header.Get("Mcp-Session-Id"))
	}
	for _, init := range []string{initialize, strings.Replace(initialize, `"initialize"`, `"\u0069nitialize"`, 1)} {
		resp, body := post(t, url, init, nil)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions") || !strings.Contains(body, "max_sessions") {
			t.Fatalf("fourth session (%s): %s %s", init, resp.Status, body)
		}
	}
	// Abandoned: no request for longer than the idle timeout.
	deadline := time.Now().Add(10 * time.Second)
	for countSessions(g) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d abandoned sessions never expired", countSessions(g))
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, _ := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sids[0]})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("expired session: %s, want 404", resp.Status)
	}
	if resp, _ := post(t, url, initialize, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("new session after expiry: %s", resp.Status)
	}
}

func countSessions(g *gateway.Gateway) int {
	n := 0
	for range g.Server().Sessions() {
		n++
	}
	return n
}

// TestHTTPSlowBody: an authenticated client that trickles a body does not
// hold its connection beyond the body timeout.
func TestHTTPSlowBody(t *testing.T) {
	t.Parallel()
	_, url := gatewayServer(t, nil, &streamable.Options{Token: "t0k", BodyTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(url, "http://")
	const n = 20
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer t0k\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
		conns[i] = c
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("conn %d: still held: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("conn %d: %s, want 400", i, resp.Status)
		}
	}
}

// TestDrainAnswersCallsInFlight: on shutdown a call still running at the
// drain deadline gets a JSON-RPC error (not a cut stream), and a new request
// is refused.
func TestDrainAnswersCallsInFlight(t *testing.T) {
	t.Parallel()
	g, url := gatewayServer(t, &gateway.Options{DrainTimeout: 300 * time.Millisecond}, nil)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "drain"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: map[string]any{"milliseconds": 30000}})
		errc <- err
	}()
	waitInFlight(t, g)
	g.Drain(context.Background())
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("call in flight: %v, want a shutting-down error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight got no answer")
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "late"}}); err == nil || !strings.Contains(err.Error(), "no new requests") {
		t.Errorf("a request during the drain: %v", err)
	}
}

// waitInFlight waits until the gateway has a request in flight.
func waitInFlight(t *testing.T, g *gateway.Gateway) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.InFlight() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no request in flight")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStdioDrain: on stdio too, a call running at the drain deadline is
// answered with an error and stdio.Serve returns.
func TestStdioDrain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	g := gateway.New(h, &gateway.Options{DrainTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- stdio.Serve(ctx, g, inR, outW) }()
	c := &rawClient{t: t, w: inW, br: bufio.NewReader(outR)}
	for _, version := range []string{"2025-11-25"} {
		initRaw(c, version)
	}
	// One relayed call (2026 era id form) and one through the go-sdk (progress token).
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__a__slow","arguments":{"milliseconds":30000},"_meta":{"progressToken":"p"}}}`)
	waitInFlight(t, g)
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-deadline:
			t.Fatal("no answer for the call in flight")
		default:
		}
		m := c.recv()
		if m["id"] != float64(7) {
			continue // progress
		}
		b, _ := json.Marshal(m)
		if !strings.Contains(string(b), "shutting down") || m["error"] == nil {
			t.Fatalf("answer: %s", b)
		}
		break
	}
	go io.Copy(io.Discard, outR)
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("stdio.Serve did not return after the drain")
	}
}

package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestHTTPRelay: over `serve --http`, a tools/call of either protocol era
// to a server whose session is 2026-07-28 — over stdio or streamable HTTP —
// takes the relay path (answered with the upstream's raw response), with
// the same result as the go-sdk path; a call whose session set a log level
// does not (its messages go to the call's stream).
func TestHTTPRelay(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demoserver.New(&demoserver.Options{Name: "w"}) }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough"),
		{Name: "w", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}})
	ctx := context.Background()
	echoOn := func(cs *mcp.ClientSession, server, msg string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + server + "__echo", Arguments: map[string]any{"message": msg}})
		if err != nil || res.IsError || textOf(res) != msg || len(res.Meta) > 0 {
			t.Fatalf("echo %q on %s: %v %+v", msg, server, err, res)
		}
	}
	echo := func(cs *mcp.ClientSession, msg string) { t.Helper(); echoOn(cs, "a", msg) }
	for _, version := range protocols {
		cs := p.dial(t, version, nil)
		for _, server := range []string{"a", "w"} {
			before := p.g.RelayedCalls()
			echoOn(cs, server, "one "+version)
			echoOn(cs, server, `two "quoted" \ é`)
			if got := p.g.RelayedCalls() - before; got != 2 {
				t.Errorf("%s, server %s: %d calls relayed, want 2", version, server, got)
			}
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

// TestHTTPRelayKeepsSessions: a session's idle timer counts the relayed
// requests too, so a busy session whose calls are all relayed is never
// closed as idle; an idle one is closed, and a call on a session that ended
// (idle, or ended by the client) is not relayed: the go-sdk handler answers
// 404.
func TestHTTPRelayKeepsSessions(t *testing.T) {
	t.Parallel()
	const idle = time.Second // (the gaps between calls are a tenth: far below it even on a loaded machine)
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}, http: &streamable.Options{SessionIdleTimeout: idle}})
	ctx := context.Background()
	connect := func() *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "busy"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: p.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cs := connect()
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
	call := func(sid string) int {
		t.Helper()
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
		return resp.StatusCode
	}
	sid := cs.ID()
	cs.Close() // DELETE
	if got := call(sid); got != http.StatusNotFound {
		t.Errorf("a call on a session the client ended: HTTP %d, want 404", got)
	}
	idler := connect()
	time.Sleep(3 * idle)
	if got := call(idler.ID()); got != http.StatusNotFound {
		t.Errorf("a call on a session closed as idle: HTTP %d, want 404", got)
	}
}

// TestHTTPRelayDNSRebinding: a relayable call that reaches the loopback
// listener under another site's Host (DNS rebinding) is refused, as the
// go-sdk handler refuses any request so addressed, before it runs.
func TestHTTPRelayDNSRebinding(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	req.Host = "evil.example:80"
	req.Header.Set("Origin", "http://evil.example:80")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", newProtocol)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "mcp__a__echo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || p.g.RelayedCalls() != 0 {
		t.Fatalf("HTTP %d, %d calls relayed; want 403 and none", resp.StatusCode, p.g.RelayedCalls())
	}
}

// TestHTTPRelayCancel: a client of a session that cancels a relayed call
// by notifications/cancelled (a request of its own, the call's request left
// open) cancels it upstream.
func TestHTTPRelayCancel(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}})
	cs := p.dial(t, oldProtocol, nil)
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", oldProtocol)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	done := make(chan int, 1)
	go func() {
		done <- post(`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"mcp__a__slow","arguments":{"milliseconds":20000}}}`)
	}()
	time.Sleep(300 * time.Millisecond) // (the call is under way)
	post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1"}}`)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call's request did not end")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__stats", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("stats: %v %+v", err, res)
		}
		if n, _ := res.StructuredContent.(map[string]any)["slow_cancelled"].(float64); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream call was not cancelled (%v)", res.StructuredContent)
		}
	}
	if p.g.RelayedCalls() == 0 {
		t.Error("the slow call was not relayed")
	}
}

// TestHTTPRelayStateless: under serve --http --stateless, the calls of a
// client before 2026-07-28 (whose requests then stand alone too) are
// relayed as well.
func TestHTTPRelayStateless(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}, http: &streamable.Options{Stateless: true}})
	for _, version := range protocols {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless-" + version}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: p.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		before := p.g.RelayedCalls()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": version}})
		if err != nil || res.IsError || textOf(res) != version {
			t.Fatalf("%s: %v %+v", version, err, res)
		}
		if got := p.g.RelayedCalls() - before; got != 1 {
			t.Errorf("%s: %d calls relayed, want 1", version, got)
		}
		cs.Close()
	}
}

// TestHTTPRelayRefuses: what the go-sdk handler refuses is not relayed (it
// answers 400): a session's request with a 2026-07-28 version in _meta, a
// POST with Last-Event-ID, a 2026-07-28 request whose clientInfo is not an
// object; and a relayed call's id used again while it is in flight.
func TestHTTPRelayRefuses(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}})
	cs := p.dial(t, oldProtocol, nil)
	post := func(body string, header map[string]string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	session := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": oldProtocol}
	for _, tc := range []struct {
		name, body string
		header     map[string]string
	}{
		{"version in _meta on a session", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, session},
		{"Last-Event-ID", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"}}}`,
			map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": oldProtocol, "Last-Event-ID": "1"}},
		{"clientInfo not an object", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":5}}}`,
			map[string]string{"Mcp-Protocol-Version": newProtocol, "Mcp-Method": "tools/call", "Mcp-Name": "mcp__a__echo"}},
	} {
		if got := post(tc.body, tc.header); got != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", tc.name, got)
		}
	}
	if n := p.g.RelayedCalls(); n != 0 {
		t.Fatalf("%d refused calls were relayed", n)
	}
	done := make(chan int, 1)
	go func() {
		done <- post(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"mcp__a__slow","arguments":{"milliseconds":1500}}}`, session)
	}()
	time.Sleep(300 * time.Millisecond) // (the first is under way)
	if got := post(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"}}}`, session); got != http.StatusBadRequest {
		t.Errorf("an id in flight used again: HTTP %d, want 400", got)
	}
	if got := <-done; got != http.StatusOK {
		t.Errorf("the first call: HTTP %d", got)
	}
}

// TestHTTPRelayAsksOnTheCallStream: over `serve --http`, a call of a
// 2025-11-25 client with a session to a 2025-11-25 server is relayed too:
// what the server asks during the call (elicitation, roots) reaches that
// client on the call's own stream — answered as an event stream — and its
// answer, POSTed on its session, goes back to the server. The server's log
// messages during the call reach no other session; an answer to a request
// that was never put, or on another session, is not taken.
func TestHTTPRelayAsksOnTheCallStream(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("o", "-passthrough", "-protocol", "2025-11-25")}})
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "asked"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "to " + req.Params.Message}}, nil
		}})
	client.AddRoots(&mcp.Root{URI: "file:///relayed", Name: "r"})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	other := make(chan string, 10)
	cs2 := p.dial(t, oldProtocol, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
		other <- fmt.Sprint(req.Params.Data)
	}})
	if err := cs2.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	before := p.g.RelayedCalls()
	q := map[string]any{"question": "q?"}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ask", q, "answer: to q?"},
		{"ask_old", q, "answer: to q?"},
		{"roots_old", map[string]any{}, "roots: file:///relayed"},
		{"log", map[string]any{"message": "only for the caller"}, "logged"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__" + tc.tool, Arguments: tc.args})
		if err != nil || res.IsError || !strings.HasPrefix(textOf(res), tc.want) {
			t.Fatalf("%s: %v %q", tc.tool, err, textOf(res))
		}
	}
	if got := p.g.RelayedCalls() - before; got != 4 {
		t.Errorf("%d calls relayed, want 4", got)
	}
	select {
	case msg := <-other:
		t.Errorf("another session got the relayed call's log message %q", msg)
	case <-time.After(200 * time.Millisecond):
	}
	// A response no relayed call waits for goes to the go-sdk handler.
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(`{"jsonrpc":"2.0","id":"mcphost-ask-999","result":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", oldProtocol)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__echo", Arguments: map[string]any{"message": "still"}}); err != nil || textOf(res) != "still" {
		t.Fatalf("after a stray answer: %v %+v", err, res)
	}
}

// TestStatelessGoSDKPathCannotAsk: under serve --http --stateless, a
// 2025-11-25 client's call that takes the go-sdk path (a progress token)
// stays on the server's first session, as a relayed one does: the client
// has no session the server's requests could reach, so no second session
// is opened for it. (Before, the go-sdk path did not set CannotAsk and the
// call opened one.) A client with a session opens it.
func TestStatelessGoSDKPathCannotAsk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stateless bool
		want      int // second sessions open after the call
	}{
		{"stateless", true, 0},
		{"session", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}, http: &streamable.Options{Stateless: tc.stateless}})
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}}).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: p.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			before := p.g.RelayedCalls()
			params := &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "hi"}}
			params.SetProgressToken("p") // (not relayed: the go-sdk path)
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError || textOf(res) != "hi" {
				t.Fatalf("%v %+v", err, res)
			}
			if p.g.RelayedCalls() != before {
				t.Fatal("the call was relayed; want the go-sdk path")
			}
			if n := p.h.Connections().SecondSessions(context.Background(), "a"); n != tc.want {
				t.Fatalf("%d second sessions open, want %d", n, tc.want)
			}
		})
	}
}

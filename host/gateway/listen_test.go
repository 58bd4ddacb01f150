package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// listenBody is a 2026-07-28 client's subscriptions/listen request (id)
// for tools/list_changed: a stream that stays open.
func listenBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id)
}

// listenStream is a subscriptions/listen request's open response.
type listenStream struct {
	resp *http.Response
	br   *bufio.Reader
}

// openListen POSTs a listen request (id) as user token ("" for none) and
// returns its response: on 200 its first event (the acknowledgement) is
// read, the stream left open (closed with the test); else the body is
// read whole, into body.
func openListen(t *testing.T, url, token string, id int) (ls *listenStream, status int, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(listenBody(id)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, string(b)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ls = &listenStream{resp: resp, br: bufio.NewReader(resp.Body)}
	if m, err := ls.next(); m == nil || m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen %d: first message %v (%v), want the acknowledgement", id, m, err)
	}
	return ls, resp.StatusCode, ""
}

// next returns the stream's next message, or nil at its end.
func (ls *listenStream) next() (map[string]any, error) {
	for {
		line, err := ls.br.ReadString('\n')
		if err != nil {
			return nil, nil
		}
		data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			return nil, fmt.Errorf("listen stream: %q: %w", data, err)
		}
		return m, nil
	}
}

// answer returns the stream's answer to its listen request (its last
// message), or an error if the stream ends without one or goes on after it.
func (ls *listenStream) answer() (map[string]any, error) {
	for {
		m, err := ls.next()
		switch {
		case err != nil:
			return nil, err
		case m == nil:
			return nil, errors.New("the listen stream ended without an answer")
		}
		if _, ok := m["id"]; ok {
			if more, _ := ls.next(); more != nil {
				return m, fmt.Errorf("the listen stream goes on after its answer: %v", more)
			}
			return m, nil
		}
	}
}

// TestListenStreamsBounded (issue 33 item 1): one principal opening many
// subscriptions/listen streams keeps its share of them (a tenth of the
// gateway's): each one over it ends that principal's quietest stream with
// a JSON-RPC error (so a client that reconnects is never locked out by
// streams it left); it takes no session slot, and another principal still
// initializes a session and listens.
func TestListenStreamsBounded(t *testing.T) {
	t.Parallel()
	g, url := gatewayServer(t, nil, &streamable.Options{MaxSessions: 20,
		OAuth: &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice", "bob"), Resource: "http://gateway.example/mcp"}})
	before := runtime.NumGoroutine()
	const flood = 25 // more than max_sessions
	var streams []*listenStream
	for i := range flood {
		ls, status, body := openListen(t, url, "alice", i+1)
		if status != http.StatusOK {
			t.Fatalf("listen %d: %d %s, want it open (replacing alice's quietest)", i+1, status, body)
		}
		streams = append(streams, ls)
	}
	for i, ls := range streams[:flood-2] {
		m, err := ls.answer()
		if e, _ := m["error"].(map[string]any); err != nil || e == nil || e["code"] != float64(gateway.CodeTooManySessions) || !strings.Contains(fmt.Sprint(e["message"]), "replaced") || m["id"] != float64(i+1) {
			t.Errorf("listen %d's answer: %v (%v), want a -32000 error: replaced", i+1, m, err)
		}
	}
	t.Logf("%d listen streams opened: 2 left open; goroutines %d -> %d", flood, before, runtime.NumGoroutine())

	// Another principal is not locked out, of sessions or of streams.
	resp, body := post(t, url, initialize, map[string]string{"Authorization": "Bearer bob"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("bob's initialize: %s %s", resp.Status, body)
	}
	if _, status, body := openListen(t, url, "bob", 1); status != http.StatusOK {
		t.Errorf("bob's listen: %d %s", status, body)
	}
	// alice's last two streams are still open: neither was answered.
	if n := countSessions(g); n < 1+2+1 {
		t.Errorf("%d go-sdk sessions open, want bob's session, alice's two streams and bob's", n)
	}
}

// TestStatelessRequestsTakeNoSessionSlots (issue 33 item 1): 2026-07-28
// requests (here listen streams, each a go-sdk session while it lasts) do
// not count toward max_sessions, which bounds the sessions of earlier
// clients only.
func TestStatelessRequestsTakeNoSessionSlots(t *testing.T) {
	t.Parallel()
	_, url := gatewayServer(t, nil, &streamable.Options{MaxSessions: 2, MaxListenStreams: 5})
	for i := range 5 {
		if _, status, body := openListen(t, url, "", i+1); status != http.StatusOK {
			t.Fatalf("listen %d: %d %s", i+1, status, body)
		}
	}
	if _, status, body := openListen(t, url, "", 6); status != http.StatusServiceUnavailable || !strings.Contains(body, "at most 5 subscriptions/listen streams") {
		t.Errorf("listen over max_listen: %d %s", status, body)
	}
	for i := range 2 {
		if resp, body := post(t, url, initialize, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d with 5 listen streams open: %s %s", i, resp.Status, body)
		}
	}
	if resp, body := post(t, url, initialize, nil); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions") {
		t.Errorf("third initialize: %s %s, want 503 naming max_sessions", resp.Status, body)
	}
}

// TestListenStreamClientGone (issue 33 item 1, review): a listen stream is
// not ended for being quiet, but one whose client went away (closed its
// connection) ends: the request's context is cancelled, and the listen
// handler returns.
func TestListenStreamClientGone(t *testing.T) {
	t.Parallel()
	g, url := gatewayServer(t, nil, &streamable.Options{SessionIdleTimeout: time.Millisecond})
	type handled struct {
		ctx      context.Context
		returned chan struct{}
	}
	listens := make(chan handled, 1)
	g.Server().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "subscriptions/listen" {
				return next(ctx, method, req)
			}
			h := handled{ctx, make(chan struct{})}
			listens <- h
			defer close(h.returned)
			return next(ctx, method, req)
		}
	})
	ls, status, body := openListen(t, url, "", 7)
	if status != http.StatusOK {
		t.Fatalf("listen: %d %s", status, body)
	}
	h := <-listens
	// Quiet far past the session idle timeout, it is still open.
	if _, status, body := openListen(t, url, "", 8); status != http.StatusOK {
		t.Fatalf("second listen: %d %s", status, body)
	}
	h2 := <-listens
	select {
	case <-h.returned:
		t.Fatal("a quiet listen stream was ended")
	default:
	}
	ls.resp.Body.Close() // the client goes away
	select {
	case <-h.returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the listen stream of a client gone away never ended")
	}
	if h.ctx.Err() == nil || h2.ctx.Err() != nil {
		t.Errorf("after the first client left: its stream's context %v, the other's %v; want cancelled and not", h.ctx.Err(), h2.ctx.Err())
	}
}

// TestDrainEndsStreams (issue 33 item 18): a shutdown ends the listen
// streams at once (with a shutting-down error), while a call in flight is
// still drained to its end; the drain returns once the call is answered,
// well before its timeout; closing the sessions then ends the standalone
// streams of earlier clients.
func TestDrainEndsStreams(t *testing.T) {
	t.Parallel()
	const drainTimeout = time.Minute
	// An upstream whose tool runs until the test releases it.
	started, release := make(chan struct{}, 1), make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "blocking"}, nil)
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	p := ptServe(t, ptOptions{servers: []*config.Server{{Name: "u", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}},
		gopts: &gateway.Options{DrainTimeout: drainTimeout}})
	g, url := p.g, p.url
	// A call in flight, to be drained (not cut).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "drain"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	called := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__u__block"})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", textOf(res))
		}
		called <- err
	}()
	<-started // (before the streams open: the call is in flight)

	ls, status, body := openListen(t, url, "", 1)
	if status != http.StatusOK {
		t.Fatalf("listen: %d %s", status, body)
	}
	// A client before 2026-07-28, with its standalone stream (GET) open.
	resp, body := post(t, url, initialize, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid})
	greq, _ := http.NewRequest(http.MethodGet, url, nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", sid)
	get, err := http.DefaultClient.Do(greq)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("standalone stream: %v %v", err, get)
	}
	defer get.Body.Close()
	drained := make(chan struct{})
	go func() { g.Drain(context.Background()); close(drained) }()
	// The stream ends while the call is still held by the test.
	m, err := ls.answer()
	if e, _ := m["error"].(map[string]any); err != nil || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "shutting down") {
		t.Errorf("the listen stream's answer on shutdown: %v (%v), want a shutting-down error", m, err)
	}
	select {
	case err := <-called:
		t.Fatalf("the call in flight ended (%v) before it was released", err)
	case <-drained:
		t.Fatal("the drain returned with a call in flight")
	default:
	}
	close(release)
	if err := <-called; err != nil {
		t.Errorf("the call in flight was not drained to its end: %v", err)
	}
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		t.Fatal("the drain waited out its timeout")
	}
	g.CloseSessions()
	if _, err := io.Copy(io.Discard, get.Body); err != nil {
		t.Errorf("standalone stream: %v", err)
	}
}

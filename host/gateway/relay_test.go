package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// stdioGateway serves a gateway over two demo servers on in-process pipes,
// as `mcphost serve` does on its stdin/stdout, and returns the client's ends.
func stdioGateway(t testing.TB, rules ...config.PermissionRule) (*gateway.Gateway, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	return stdioGatewayOf(t, []*config.Server{demo("a"), demo("b")}, rules...)
}

// stdioGatewayOf is stdioGateway over the given servers.
func stdioGatewayOf(t testing.TB, servers []*config.Server, rules ...config.PermissionRule) (*gateway.Gateway, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	g := gatewayOf(t, servers, rules...)
	w, r := servePipes(t, g)
	return g, w, r
}

// gatewayOf is a gateway over servers, synced, not yet serving.
func gatewayOf(t testing.TB, servers []*config.Server, rules ...config.PermissionRule) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: servers, Permissions: rules, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(),
		// As `mcphost serve` offers servers of versions before 2026-07-28.
		ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, nil)
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	return g
}

// servePipes serves g on in-process pipes, as `mcphost serve` does on its
// stdin/stdout, and returns the client's ends; the test's cleanup closes
// them and waits for stdio.Serve to return.
func servePipes(t testing.TB, g *gateway.Gateway) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdio.Serve(ctx, g, inR, outW)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	return inW, outR
}

func stdioClient(t *testing.T, opts *mcp.ClientOptions, rules ...config.PermissionRule) (*gateway.Gateway, *mcp.ClientSession) {
	t.Helper()
	g, w, r := stdioGateway(t, rules...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "relay-test"}, opts).Connect(context.Background(), &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return g, cs
}

// TestRelayConcurrentCalls sends many concurrent calls with distinct,
// awkward arguments through the relay path; every answer must be its own.
func TestRelayConcurrentCalls(t *testing.T) {
	t.Parallel()
	g, cs := stdioClient(t, nil)
	ctx := context.Background()
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				msg := fmt.Sprintf("worker %d call %d \"quoted\" \\ é 😀 %s", w, i, strings.Repeat("x", (w*each+i)%3000))
				server := []string{"a", "b"}[i%2]
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + server + "__echo", Arguments: map[string]any{"message": msg}})
				if err != nil {
					errs <- err
					return
				}
				if got := host.TextOf(res.Content); got != msg || res.IsError {
					errs <- fmt.Errorf("sent %.40q, got %.40q (isError %v)", msg, got, res.IsError)
					return
				}
				if len(res.Meta) > 0 {
					errs <- fmt.Errorf("upstream _meta leaked: %v", res.Meta)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := g.RelayedCalls(); got != workers*each {
		t.Errorf("%d calls relayed, want %d", got, workers*each)
	}
}

// TestRelayKeepsBehaviour: results that need the host's processing, tool
// errors, unknown tools and progress all behave as on the go-sdk path.
func TestRelayKeepsBehaviour(t *testing.T) {
	t.Parallel()
	progress := make(chan float64, 10)
	g, cs := stdioClient(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Progress
	}})
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__large", Arguments: map[string]any{"chars": 300000}})
	if err != nil || !strings.Contains(host.TextOf(res.Content), "Output too large (300000 characters)") {
		t.Errorf("large: %v %.200s", err, host.TextOf(res.Content))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__fail", Arguments: map[string]any{"message": "relayed failure"}})
	if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), "relayed failure") {
		t.Errorf("fail: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__b__add", Arguments: map[string]any{"a": 1, "b": 2}})
	if m, ok := res.StructuredContent.(map[string]any); err != nil || !ok || m["sum"] != 3.0 {
		t.Errorf("add: %v %+v", err, res)
	}
	relayed := g.RelayedCalls()
	if relayed != 3 {
		t.Errorf("%d calls relayed, want 3", relayed)
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__missing"}); err == nil {
		t.Error("an unknown tool succeeded")
	}
	params := &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: map[string]any{"milliseconds": 200, "steps": 2}}
	params.SetProgressToken("p1")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	select {
	case <-progress:
	case <-time.After(3 * time.Second):
		t.Error("no progress through the gateway")
	}
	if got := g.RelayedCalls(); got != relayed {
		t.Errorf("unknown tool or progress call was relayed (%d -> %d); they need the go-sdk path", relayed, got)
	}
}

// TestRelayRejectsAmbiguousJSON: a message with duplicate or case-variant
// member names is refused before anything is routed or forwarded.
func TestRelayRejectsAmbiguousJSON(t *testing.T) {
	t.Parallel()
	g, w, r := stdioGateway(t)
	br := bufio.NewReader(r)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__a__echo","Name":"mcp__a__crash"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo"},"params":{"name":"mcp__a__crash"}}`,
	} {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(resp, `"code":-32600`) || !strings.Contains(resp, "duplicate or case-variant") {
			t.Errorf("response to %s: %s", line, resp)
		}
	}
	if g.RelayedCalls() != 0 {
		t.Error("an ambiguous request was relayed")
	}
}

func TestRelayCancellation(t *testing.T) {
	t.Parallel()
	_, cs := stdioClient(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: map[string]any{"milliseconds": 10000}})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled call: %v after %s", err, time.Since(start))
	}
	// The connection is fine afterwards.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "after"}})
	if err != nil || host.TextOf(res.Content) != "after" {
		t.Fatalf("after cancel: %v %+v", err, res)
	}
}

// TestDeniedCallsNeverReachTheServer: through the gateway (relay path and
// go-sdk path alike) a denied or unanswerable call is a tool error naming the
// rule, and the upstream never counts it.
func TestDeniedCallsNeverReachTheServer(t *testing.T) {
	t.Parallel()
	_, cs := stdioClient(t, nil,
		config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a__echo", Origin: config.Origin{Scope: config.ScopeManaged, File: "/etc/m.hcl"}},
		config.PermissionRule{Behavior: permissions.Ask, Pattern: "mcp__a__add"})
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "x"}})
	if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), `permission denied: mcp__a__echo is deny by rule "mcp__a__echo" (managed scope, /etc/m.hcl:0)`) {
		t.Errorf("denied call: %v %s", err, host.TextOf(res.Content))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), "needs approval") {
		t.Errorf("ask call without anyone to ask: %v %s", err, host.TextOf(res.Content))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__stats", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("stats: %v %v", err, res)
	}
	if m, _ := res.StructuredContent.(map[string]any); m["echo"] != nil || m["add"] != nil {
		t.Errorf("the upstream saw a call that was not allowed: %v", m)
	}
}

// TestRelayOlderClients: a 2025-11-25 client's tools/call to a server whose
// session is 2026-07-28 takes the relay path too; its result is as that
// client reads it (no resultType), byte for byte otherwise. A call whose
// first round needs input (input_required, which such a client cannot read)
// is made again on the go-sdk path, where the client is asked by a request
// and the call completes.
func TestRelayOlderClients(t *testing.T) {
	t.Parallel()
	// (On the server's first session, of 2026-07-28: legacy_session =
	// false; TestRelayOlderClientsSecondSession is the default.)
	g, w, r := stdioGatewayOf(t, []*config.Server{withoutLegacy(demo("p", "-passthrough"))})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "older"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "relayed " + req.Params.Message}}, nil
		}}).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__p__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError || host.TextOf(res.Content) != "hi" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), "resultType") {
		t.Errorf("a 2026-07-28 resultType reached a 2025-11-25 client: %s", b)
	}
	if got := g.RelayedCalls(); got != 1 {
		t.Fatalf("%d calls relayed, want 1", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__p__ask", Arguments: map[string]any{"question": "q?"}})
	if err != nil || res.IsError || host.TextOf(res.Content) != "answer: relayed q?" {
		t.Fatalf("ask: %v %+v", err, res)
	}
	if got := g.RelayedCalls(); got != 1 {
		t.Errorf("%d calls relayed, want 1 (ask needs the go-sdk path)", got)
	}
}

// TestRelayOlderUpstream: on stdio, a call to a server of 2025-11-25 is
// relayed too: the server's own requests during it (elicitation) reach the
// client. A client that set a log level gets the server's messages (by the
// go-sdk path).
func TestRelayOlderUpstream(t *testing.T) {
	t.Parallel()
	g, w, r := stdioGatewayOf(t, []*config.Server{demo("o", "-passthrough", "-protocol", "2025-11-25")})
	ctx := context.Background()
	logs := make(chan string, 10)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "older"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "to " + req.Params.Message}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- fmt.Sprint(req.Params.Data)
		}}).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__ask", Arguments: map[string]any{"question": "q?"}})
	if err != nil || res.IsError || host.TextOf(res.Content) != "answer: to q?" {
		t.Fatalf("ask: %v %+v", err, res)
	}
	if got := g.RelayedCalls(); got != 1 {
		t.Fatalf("%d calls relayed, want 1", got)
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__log", Arguments: map[string]any{"message": "during the call"}})
	if err != nil || res.IsError {
		t.Fatalf("log: %v %+v", err, res)
	}
	// (The go-sdk client runs notification handlers apart from delivering
	// results: wait for it.)
	select {
	case got := <-logs:
		if got != "during the call" {
			t.Errorf("log message %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the log message did not arrive")
	}
	if got := g.RelayedCalls(); got != 1 {
		t.Errorf("%d calls relayed, want 1 (a client with a log level takes the go-sdk path)", got)
	}
}

// TestRelayOlderHTTPUpstream: a 2025-11-25 client's call to a 2025-11-25
// server over streamable HTTP is relayed too: the server's elicitation on
// the call's event stream reaches that client, whose answer goes back to
// the server on the session.
func TestRelayOlderHTTPUpstream(t *testing.T) {
	t.Parallel()
	srv := demoserver.New(&demoserver.Options{Name: "o", Passthrough: true})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	g, w, r := stdioGatewayOf(t, []*config.Server{{Name: "o", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "older"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "to " + req.Params.Message}}, nil
		}}).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for _, tool := range []string{"ask", "ask_old"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__o__" + tool, Arguments: map[string]any{"question": "q?"}})
		if err != nil || res.IsError || !strings.HasPrefix(host.TextOf(res.Content), "answer: to q?") {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	if got := g.RelayedCalls(); got != 2 {
		t.Fatalf("%d calls relayed, want 2", got)
	}
}

// withoutLegacy is s with legacy_session = false: a 2025-11-25 client's
// calls go to the server's first session.
func withoutLegacy(s *config.Server) *config.Server {
	s.LegacySession = new(false)
	return s
}

// TestRelayOlderClientsSecondSession: by default a 2025-11-25 client's
// calls to a server of 2026-07-28 go to its second session, of
// 2025-11-25, on the relay from the first call on (the relay opens it):
// a tool that asks by a request of its own (ask_old) and one that asks by
// an input-required result on 2026-07-28 (ask, which asks by a request on
// 2025-11-25) are both relayed, the client asked by a request.
func TestRelayOlderClientsSecondSession(t *testing.T) {
	t.Parallel()
	g, w, r := stdioGatewayOf(t, []*config.Server{demo("p", "-passthrough")})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "older"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "relayed " + req.Params.Message}}, nil
		}}).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for i, tc := range []struct{ tool, arg, want string }{
		{"ask_old", "question", "answer: relayed q? (mood: calm)"},
		{"ask", "question", "answer: relayed q?"},
		{"echo", "message", "q?"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__p__" + tc.tool, Arguments: map[string]any{tc.arg: "q?"}})
		if err != nil || res.IsError || host.TextOf(res.Content) != tc.want {
			t.Fatalf("%s: %v %q", tc.tool, err, textOf(res))
		}
		if got := g.RelayedCalls(); got != uint64(i+1) {
			t.Fatalf("after %s: %d calls relayed, want %d", tc.tool, got, i+1)
		}
	}
}

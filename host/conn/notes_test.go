package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
)

// namedRequester is a caller of its own (the identity the routing keys on);
// it answers nothing.
type namedRequester struct{ name string }

func (namedRequester) Capabilities() *mcp.ClientCapabilities { return nil }
func (namedRequester) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, errors.New("no")
}
func (namedRequester) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, errors.New("no")
}
func (namedRequester) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errors.New("no")
}

// notesServer is a real go-sdk server whose tools send notifications and
// return at once: "log" logs its message, "steps" sends n progress
// notifications.
func notesServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, a struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: a.Message})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, err
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, a struct {
		N int `json:"n"`
	}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= a.N; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: float64(a.N)})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	return srv
}

// notesServers are the transports the routing is tested over: a real
// server process on stdio (the demo server's tools), and a go-sdk server
// over streamable HTTP and over SSE on loopback.
func notesServers(t *testing.T) []struct {
	name      string
	cfg       *config.Server
	log, prog func(string) *mcp.CallToolParams
} {
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return notesServer() }, nil))
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return notesServer() }, nil))
	t.Cleanup(func() {
		for _, s := range []*httptest.Server{streamable, sse} {
			s.CloseClientConnections()
			s.Close()
		}
	})
	level := mcp.Meta{mcp.MetaKeyLogLevel: "debug"} // 2026-07-28: the request's level
	goLog := func(m string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "log", Meta: level, Arguments: map[string]any{"message": m}}
	}
	goSteps := func(string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{"n": 5}}
	}
	return []struct {
		name      string
		cfg       *config.Server
		log, prog func(string) *mcp.CallToolParams
	}{
		{"stdio", demo("d", "-passthrough"),
			func(m string) *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: "log", Meta: level, Arguments: map[string]any{"message": m}}
			},
			func(string) *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"milliseconds": 5, "steps": 5}}
			}},
		{"streamable HTTP", &config.Server{Name: "h", Transport: config.TransportHTTP, URL: streamable.URL, Approved: true, ConnectTimeout: 5 * time.Second}, goLog, goSteps},
		{"SSE", &config.Server{Name: "s", Transport: config.TransportSSE, URL: sse.URL, Approved: true, ConnectTimeout: 5 * time.Second}, goLog, goSteps},
	}
}

// TestNotificationsReachTheirCall: a server that sends notifications and
// returns at once. Every progress notification reaches the call's
// OnProgress before Call returns (the last one used to be lost), and each
// caller's log message reaches that caller — never nobody (which sent it to
// every client), never another — also with two callers' calls in flight in
// turn.
func TestNotificationsReachTheirCall(t *testing.T) {
	t.Parallel()
	const rounds = 30
	for _, tc := range notesServers(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			type logged struct {
				r    Requester
				data string
			}
			logs := make(chan logged, 2*rounds)
			m := NewManager([]*config.Server{tc.cfg}, &Options{OnLog: func(_ string, p *mcp.LoggingMessageParams, r Requester) {
				logs <- logged{r, fmt.Sprint(p.Data)}
			}})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			for i := range rounds {
				var n int
				_, err := m.Call(ctx, tc.cfg.Name, tc.prog(""), &CallOptions{OnProgress: func(*mcp.ProgressNotificationParams) { n++ }})
				if err != nil {
					t.Fatal(err)
				}
				if n != 5 {
					t.Fatalf("round %d: %d of 5 progress notifications arrived before the result", i, n)
				}
			}
			// Sessions before 2026-07-28 log at the session's level.
			if err := m.Do(ctx, tc.cfg.Name, func(ctx context.Context, cs *mcp.ClientSession) error {
				if cs.InitializeResult().ProtocolVersion >= NewProtocol {
					return nil
				}
				return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
			}); err != nil {
				t.Fatal(err)
			}
			alice, bob := namedRequester{"alice"}, namedRequester{"bob"}
			for i := range rounds {
				r := Requester(alice)
				if i%2 == 1 {
					r = bob
				}
				msg := fmt.Sprintf("%s %d", r.(namedRequester).name, i)
				if _, err := m.Call(ctx, tc.cfg.Name, tc.log(msg), &CallOptions{Requester: r}); err != nil {
					t.Fatal(err)
				}
				select {
				case got := <-logs:
					if got.data != msg || got.r != r {
						t.Fatalf("round %d: message %q went to %v; want %q to %v", i, got.data, got.r, msg, r)
					}
				default:
					select {
					case got := <-logs:
						t.Fatalf("round %d: the call returned before its log message was handled (later: %+v)", i, got)
					case <-time.After(2 * time.Second):
						t.Fatalf("round %d: no log", i)
					}
				}
			}
		})
	}
}

// TestRouteForgedByServer: a route a server writes into a notification's
// _meta is removed, never looked up.
func TestRouteForgedByServer(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		tag          uint64
		want         string // "": unchanged
		ok           bool
	}{
		{"no _meta, no route", `{"level":"info","data":"x"}`, 0, "", true},
		{"route added", `{"level":"info","data":"x"}`, 7, `{"_meta":{"dev.mcphost/route":"7"},"data":"x","level":"info"}`, true},
		{"forged route removed", `{"_meta":{"dev.mcphost/route":"1"},"data":"x"}`, 0, `{"data":"x"}`, true},
		{"forged route replaced, other members kept", `{"_meta":{"dev.mcphost/route":"1","k":2},"data":"x"}`, 9, `{"_meta":{"dev.mcphost/route":"9","k":2},"data":"x"}`, true},
		{"duplicate _meta: one, without the route", `{"_meta":{"dev.mcphost/route":"1"},"_meta":{"dev.mcphost/route":"2"}}`, 0, `{}`, true},
		{"forged route in a first, duplicate _meta", `{"_meta":{"dev.mcphost/route":"1"},"_meta":{}}`, 0, `{}`, true},
		{"not an object", `[1]`, 3, "", false},
		{"_meta not an object", `{"_meta":1}`, 3, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := withRoute(json.RawMessage(tc.params), tc.tag)
			if ok != tc.ok {
				t.Fatalf("ok = %v", ok)
			}
			want := tc.want
			if want == "" && ok {
				want = tc.params
			}
			if ok && string(got) != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
	var rs routes
	fc := newCall("s", nil, nil)
	tag := rs.add(route{call: fc})
	if _, ok := rs.take(mcp.Meta{routeKey: fmt.Sprint(tag + 1)}); ok {
		t.Error("an unknown tag was routed")
	}
	if _, ok := rs.take(mcp.Meta{routeKey: float64(tag)}); ok {
		t.Error("a tag that is not a string was routed")
	}
	meta := mcp.Meta{routeKey: fmt.Sprint(tag), "k": 1}
	if rt, ok := rs.take(meta); !ok || rt.call != fc {
		t.Errorf("take = %+v %v", rt, ok)
	}
	if _, ok := meta[routeKey]; ok || meta["k"] != 1 {
		t.Errorf("meta after take: %v", meta)
	}
	if _, ok := rs.take(mcp.Meta{routeKey: fmt.Sprint(tag)}); ok {
		t.Error("a route was taken twice")
	}
}

// TestSSERouter: events pass byte for byte unless route rewrites their data;
// a rewritten event keeps its other fields.
func TestSSERouter(t *testing.T) {
	upper := func(data []byte) []byte {
		if bytes.HasPrefix(data, []byte("x")) {
			return bytes.ToUpper(data)
		}
		return nil
	}
	for _, tc := range []struct {
		name, in, want string
		max            int
	}{
		{"kept", "event: message\ndata: {\"a\":1}\n\n", "", 0},
		{"rewritten", "id: 1\nevent: message\ndata: xy\n\n", "id: 1\nevent: message\ndata: XY\n\n", 0},
		{"CRLF kept", "id: 1\r\ndata: ab\r\n\r\n", "", 0},
		{"CRLF rewritten", "id: 1\r\ndata: xy\r\n\r\n", "id: 1\r\ndata: XY\n\r\n", 0},
		{"multi-line data joined", "data: x1\ndata: 2\n\n", "data: X1\n2\n\n", 0},
		{"several events", "data: a\n\ndata: xb\n\n: comment\n\ndata: c\n\n", "data: a\n\ndata: XB\n\n: comment\n\ndata: c\n\n", 0},
		{"priming event without data", "id: 0\n\n", "", 0},
		{"end inside an event", "data: a\ndata: b", "", 0},
		{"end inside a routed event", "data: xy\n", "", 0},
		{"a line longer than the read buffer is routed", "data: x" + strings.Repeat("z", 100<<10) + "\n\n", "data: X" + strings.Repeat("Z", 100<<10) + "\n\n", 0},
		{"too large: passed as it is", "data: x" + strings.Repeat("z", 100) + "\n\ndata: xq\n\n", "data: x" + strings.Repeat("z", 100) + "\n\ndata: XQ\n\n", 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.in
			}
			r := newSSERouter(io.NopCloser(iotestOneByte(strings.NewReader(tc.in))), tc.max, upper)
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// iotestOneByte reads one byte at a time (the router must not depend on
// how the body arrives).
func iotestOneByte(r io.Reader) io.Reader { return &oneByte{r} }

type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// FuzzSSERouter: a stream no event of which is rewritten comes out as it
// went in, whatever its bytes.
func FuzzSSERouter(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "id: 1\r\ndata: b\r\n\r\n", "data: a\ndata: b", ":c\n\nevent: x\n", strings.Repeat("d", 70000) + "\n\n"} {
		f.Add([]byte(s), 16)
	}
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		r := newSSERouter(io.NopCloser(bytes.NewReader(in)), max%1024, func([]byte) []byte { return nil })
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, in) {
			t.Fatalf("got %q, want %q", got, in)
		}
	})
}

// TestProgressOfAnotherServersCall: progress tokens name the Manager's
// calls; a server that reports progress with the token of a call to
// another server (they are easy to guess) does not reach that call.
func TestProgressOfAnotherServersCall(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	tokens := make(chan any, 1)
	victim := mcp.NewServer(&mcp.Implementation{Name: "victim"}, nil)
	mcp.AddTool(victim, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		tokens <- req.Params.GetProgressToken()
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "own"})
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	spoofer := mcp.NewServer(&mcp.Implementation{Name: "spoofer"}, nil)
	mcp.AddTool(spoofer, &mcp.Tool{Name: "spoof"}, func(ctx context.Context, req *mcp.CallToolRequest, a struct {
		Token string `json:"token"`
	}) (*mcp.CallToolResult, any, error) {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: a.Token, Progress: 99, Message: "forged"})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil, err
	})
	var servers []*config.Server
	for name, srv := range map[string]*mcp.Server{"v": victim, "s": spoofer} {
		hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
		servers = append(servers, &config.Server{Name: name, Transport: config.TransportSSE, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second})
	}
	m := NewManager(servers, nil)
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "v", &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}, &CallOptions{OnProgress: func(p *mcp.ProgressNotificationParams) {
			got <- p.Message
		}})
		done <- err
	}()
	token := fmt.Sprint(<-tokens)
	if msg := <-got; msg != "own" {
		t.Fatalf("first progress %q", msg)
	}
	if _, err := m.Call(ctx, "s", &mcp.CallToolParams{Name: "spoof", Arguments: map[string]any{"token": token}}, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(got)
	for msg := range got {
		t.Errorf("the call got progress %q from another server", msg)
	}
}

// TestEscapedMethodRouted: a server's message on one call's response
// stream whose method is written with escapes ("roots\/list",
// "\u0072oots/list") is routed like one written as is: a route the server
// put in its _meta (another call's, guessed) is replaced by that of the
// call whose stream it came on (before, such an event was passed on
// unread, and its forged route sent the request to the other call's
// client).
func TestEscapedMethodRouted(t *testing.T) {
	c := &Conn{cfg: &config.Server{Name: "s", Transport: config.TransportHTTP}}
	alice, bob := newCall("s", nil, nil), newCall("s", nil, nil)
	for _, tc := range []struct{ name, method string }{
		{"as is", `roots/list`},
		{"slash escaped", `roots\/list`},
		{"letter escaped", `\u0072oots/list`},
		{"elicitation, escaped", `elicitation\/create`},
		{"sampling, escaped", `sampling\u002FcreateMessage`},
		{"log message, escaped", `notifications\/message`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := c.routes.add(route{call: bob}) // bob's call awaits a route of its own
			defer c.routes.take(mcp.Meta{routeKey: fmt.Sprint(forged)})
			id := `"id":1,`
			if strings.Contains(tc.name, "log") {
				id = ""
			}
			data := []byte(`{"jsonrpc":"2.0",` + id + `"method":"` + tc.method + `","params":{"_meta":{"dev.mcphost/route":"` + fmt.Sprint(forged) + `"},"level":"info","data":"x","mode":"form","message":"m","requestedSchema":{"type":"object"}}}`)
			out := c.routeEvent(data, alice)
			if out == nil {
				out = data
			}
			var msg struct {
				Params struct {
					Meta mcp.Meta `json:"_meta"`
				} `json:"params"`
			}
			if err := json.Unmarshal(out, &msg); err != nil {
				t.Fatal(err)
			}
			rt, ok := c.routes.take(msg.Params.Meta)
			if !ok || rt.call != alice {
				t.Errorf("routed to bob %v, alice %v; want alice's call (the stream's)", rt.call == bob, rt.call == alice)
			}
		})
	}
}

// FuzzMayRoute: every message that decodes to a method routeNote routes
// passes mayRoute's filter, however its method is escaped.
func FuzzMayRoute(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"roots\/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"\u0072oots/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, err := jsonrpcmsg.Decode(b)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return
		}
		switch {
		case req.Method == "elicitation/create", req.Method == "sampling/createMessage", req.Method == "roots/list",
			strings.HasPrefix(req.Method, "notifications/"):
			if !mayRoute(b) {
				t.Fatalf("%q (method %q) not routed", b, req.Method)
			}
		}
	})
}

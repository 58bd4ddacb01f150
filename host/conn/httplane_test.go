package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// rawPost is a POST the server got on the raw lane.
type rawPost struct {
	header http.Header
	body   string
}

// recordingDemo serves the demo server (with -passthrough) over streamable
// HTTP on loopback — statefully (2025-11-25 sessions) or statelessly (the
// go-sdk serves 2026-07-28 over HTTP only so) — and records the POSTs whose
// body names a raw-lane id or notifications/cancelled. restart replaces
// the handler, ending every session.
func recordingDemo(t *testing.T, stateless bool) (cfg *config.Server, posts func() []rawPost, restart func(), conns *atomic.Int64) {
	conns = new(atomic.Int64) // connections the server accepted
	srv := demoserver.New(&demoserver.Options{Name: "h", Passthrough: true})
	newHandler := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	}
	var mu sync.Mutex
	var got []rawPost
	h := newHandler()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if bytes.Contains(b, []byte(rawIDPrefix)) {
				mu.Lock()
				got = append(got, rawPost{r.Header.Clone(), string(b)})
				mu.Unlock()
			}
		}
		mu.Lock()
		cur := h
		mu.Unlock()
		cur.ServeHTTP(w, r)
	}))
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	cfg = &config.Server{Name: "h", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
	posts = func() []rawPost {
		mu.Lock()
		defer mu.Unlock()
		return append([]rawPost(nil), got...)
	}
	restart = func() {
		mu.Lock()
		h = newHandler()
		mu.Unlock()
	}
	return cfg, posts, restart, conns
}

// TestHTTPLane: over streamable HTTP a raw call is a POST of its own on the
// session, with the go-sdk client's headers, and its response comes back
// undecoded — at 2026-07-28 and at 2025-11-25, where the server's log
// messages and its own requests on the call's stream reach the call's
// Requester before the result does. A tool whose parameters go in headers
// (2026-07-28), an expired session and a cancelled call are handled.
func TestHTTPLane(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string
	}{
		{"2026-07-28", true, NewProtocol},
		{"2025-11-25", false, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, posts, restart, conns := recordingDemo(t, tc.stateless)
			a := newAnswerer("a", "yes")
			var logMu sync.Mutex
			var logs []string
			m := NewManager([]*config.Server{cfg}, &Options{
				Capabilities: gatewayCaps,
				OnLog: func(_ string, p *mcp.LoggingMessageParams, r Requester) {
					logMu.Lock()
					defer logMu.Unlock()
					if r == Requester(a) {
						logs = append(logs, p.Data.(string))
					}
				},
			})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			cs := listedSession(t, m, cfg.Name)
			if v := cs.InitializeResult().ProtocolVersion; v != tc.version {
				t.Fatalf("session at %s, want %s", v, tc.version)
			}
			call := func(ctx context.Context, tool, args string, headerParams bool) ([]byte, bool, error) {
				return m.CallRaw(ctx, cfg.Name, RawCall{Tool: tool, Args: []byte(args), ProtocolVersion: tc.version,
					Gen: m.Generation(context.Background(), cfg.Name), Requester: a, Asks: true, HeaderParams: headerParams})
			}

			resp, handled, err := call(ctx, "echo", `{"message":"hi"}`, false)
			if err != nil || !handled || !strings.Contains(string(resp), `"text":"hi"`) || !strings.Contains(string(resp), `"id":"`+rawIDPrefix) {
				t.Fatalf("echo: %s %v %v", resp, handled, err)
			}
			ps := posts()
			if len(ps) != 1 {
				t.Fatalf("%d raw POSTs, want 1", len(ps))
			}
			h := ps[0].header
			if h.Get("Mcp-Protocol-Version") != tc.version || (cs.ID() != "" && h.Get("Mcp-Session-Id") != cs.ID()) {
				t.Errorf("raw POST headers: %v", h)
			}
			if tc.version >= NewProtocol && (h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "echo") {
				t.Errorf("raw POST at %s without Mcp-Method/Mcp-Name: %v", tc.version, h)
			}
			// Each call's stream is read to its end: its connection serves
			// a later call. (The end is read in the background, so a call
			// may start before its predecessor's connection is free again
			// on a loaded machine: a few new connections are allowed, one
			// per call is what the fault looked like.)
			before := conns.Load()
			for i := 0; i < 10; i++ {
				if _, handled, err := call(ctx, "echo", `{"message":"again"}`, false); err != nil || !handled {
					t.Fatalf("echo %d: %v %v", i, handled, err)
				}
			}
			if n := conns.Load() - before; n > 3 {
				t.Errorf("10 sequential raw calls opened %d connections (want their connection reused)", n)
			}

			if tc.version < NewProtocol {
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatal(err)
				}
				resp, handled, err = call(ctx, "log", `{"message":"from the call","after_ms":0}`, false)
				logMu.Lock()
				got := strings.Join(logs, "|")
				logMu.Unlock()
				if err != nil || !handled || !strings.Contains(string(resp), "logged") || got != "from the call" {
					t.Fatalf("log: %s %v %v; the caller's log messages before the result: %q", resp, handled, err, got)
				}
				resp, handled, err = call(ctx, "ask_old", `{"question":"ok?"}`, false)
				if err != nil || !handled || !strings.Contains(string(resp), "answer: yes") {
					t.Fatalf("ask_old: %s %v %v", resp, handled, err)
				}
				if p := <-a.asked; p.Message != "ok?" {
					t.Errorf("asked %q", p.Message)
				}
			} else {
				n := len(posts())
				if _, handled, err := call(ctx, "echo", `{"message":"h"}`, true); handled || err != nil {
					t.Errorf("a tool with header parameters was relayed at %s: %v %v", tc.version, handled, err)
				}
				if len(posts()) != n {
					t.Error("a tool with header parameters was sent on the raw lane")
				}
			}

			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			if _, handled, err := call(cctx, "slow", `{"milliseconds":2000}`, false); !handled || !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v %v", handled, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(lastBody(posts()), `"notifications/cancelled"`) {
				if time.Now().After(deadline) {
					t.Fatal("the server was not sent notifications/cancelled")
				}
				time.Sleep(20 * time.Millisecond)
			}

			if !tc.stateless {
				restart() // every session is gone: the raw POST gets 404
				n := len(posts())
				if _, handled, err := call(ctx, "echo", `{"message":"x"}`, false); handled || err != nil {
					t.Fatalf("on an expired session: handled %v, %v (want the go-sdk path)", handled, err)
				}
				if len(posts()) != n+1 {
					t.Fatal("no raw POST on the expired session")
				}
				res, err := m.CallTool(ctx, cfg.Name, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "again"}}, nil)
				if err != nil || text(res) != "again" {
					t.Fatalf("the go-sdk path after expiry: %v %v", res, err)
				}
			}
		})
	}
}

// listedSession connects the server and lists its tools: the go-sdk
// client's first request after initialize, from which the raw lane takes
// its _meta.
func listedSession(t *testing.T, m *Manager, name string) *mcp.ClientSession {
	t.Helper()
	cs, err := m.Session(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return cs
}

func lastBody(ps []rawPost) string {
	if len(ps) == 0 {
		return ""
	}
	return ps[len(ps)-1].body
}

// TestHTTPLaneResumes: a 2025-11-25 server may close a call's event stream
// before the response (SEP-1699); the raw lane resumes it after the last
// event, as the go-sdk client does, and gets the response.
func TestHTTPLaneResumes(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "polling"}, nil)
	srv.AddTool(&mcp.Tool{Name: "polled", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done after the stream closed"}}}, nil
	})
	var gets sync.Map
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			gets.Store(r.Header.Get("Last-Event-ID"), true)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	cfg := &config.Server{Name: "p", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
	m := NewManager([]*config.Server{cfg}, nil)
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	cs := listedSession(t, m, cfg.Name)
	v := cs.InitializeResult().ProtocolVersion
	resp, handled, err := m.CallRaw(ctx, cfg.Name, RawCall{Tool: "polled", Args: []byte(`{}`), ProtocolVersion: v, Gen: m.Generation(context.Background(), cfg.Name), Requester: newAnswerer("a", ""), Asks: true})
	if err != nil || !handled || !strings.Contains(string(resp), "done after the stream closed") {
		t.Fatalf("polled (%s): %s %v %v", v, resp, handled, err)
	}
	n := 0
	gets.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Error("the stream was not resumed with Last-Event-ID")
	}
}

// hookedDemo is the demo server over streamable HTTP (2026-07-28,
// stateless) behind hook, which sees each POST first and answers it itself
// by returning true. The URL carries a credential in its query.
func hookedDemo(t *testing.T, hook func(w http.ResponseWriter, r *http.Request, body []byte) bool) *config.Server {
	srv := demoserver.New(&demoserver.Options{Name: "k"})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if hook(w, r, b) {
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return &config.Server{Name: "k", Transport: config.TransportHTTP, URL: hs.URL + "/?api_key=SECRET123", Approved: true, ConnectTimeout: 5 * time.Second}
}

// rawIDOf returns the raw-lane id of a POSTed tools/call ("" if none).
func rawIDOf(body []byte) string {
	var p struct {
		ID any `json:"id"`
	}
	json.Unmarshal(body, &p)
	if s, ok := p.ID.(string); ok && strings.HasPrefix(s, rawIDPrefix) {
		return s
	}
	return ""
}

// TestHTTPLaneFailures: what goes wrong on a raw call's POST fails that
// call only, as the go-sdk client fails only the call: a stream that ends
// before the response with nothing to resume, an event over the size cap, a
// connection closed without an answer (whose error does not quote the URL's
// credential); the session lives on. A stream the server keeps open after
// the response does not hold the call, an event of another type than
// "message" is not read as the response, and a cancelled call returns
// without waiting for the server to take its notifications/cancelled.
func TestHTTPLaneFailures(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	cfg := hookedDemo(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		id := rawIDOf(body)
		switch {
		case bytes.Contains(body, []byte(`"notifications/cancelled"`)) && bytes.Contains(body, []byte(rawIDPrefix)):
			<-release // (a server slow to take a raw call's)
			return false
		case id == "":
			return false
		case bytes.Contains(body, []byte(`"cut"`)):
			sse(w) // and ends the stream: no response, no event id
		case bytes.Contains(body, []byte(`"huge"`)):
			sse(w)
			fmt.Fprintf(w, "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%q,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", id, strings.Repeat("x", 8<<10))
		case bytes.Contains(body, []byte(`"hangup"`)):
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		case bytes.Contains(body, []byte(`"open"`)):
			sse(w)
			fmt.Fprintf(w, "event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":%q,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"not this one\"}]}}\n\n", id)
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%q,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"this one\"}]}}\n\n", id)
			w.(http.Flusher).Flush()
			<-release // the stream stays open
		default:
			return false
		}
		return true
	})
	t.Cleanup(func() { close(release) }) // (before the server's Close, which waits for its handlers)
	m := NewManager([]*config.Server{cfg}, &Options{MaxMessageBytes: 4 << 10})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	cs := listedSession(t, m, cfg.Name)
	call := func(ctx context.Context, tool string) ([]byte, bool, error) {
		return m.CallRaw(ctx, cfg.Name, RawCall{Tool: tool, Args: []byte(`{}`), ProtocolVersion: NewProtocol, Gen: m.Generation(context.Background(), cfg.Name)})
	}
	for _, tool := range []string{"cut", "huge", "hangup"} {
		resp, handled, err := call(ctx, tool)
		if !handled || err == nil {
			t.Fatalf("%s: %s %v %v (want the call failed)", tool, resp, handled, err)
		}
		if strings.Contains(err.Error(), "SECRET123") {
			t.Errorf("%s: the error quotes the URL's credential: %v", tool, err)
		}
		if m.Current(ctx, cfg.Name) != cs {
			t.Fatalf("%s: the session was dropped (%v)", tool, err)
		}
	}
	resp, handled, err := call(ctx, "open")
	if err != nil || !handled || !strings.Contains(string(resp), `"this one"`) {
		t.Fatalf("a stream kept open after the response: %s %v %v", resp, handled, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, handled, err := call(cctx, "slow"); !handled || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v %v", handled, err)
	}
	if resp, handled, err := call(ctx, "echo"); err != nil || !handled || !strings.Contains(string(resp), `"text"`) {
		t.Fatalf("after the failures: %s %v %v", resp, handled, err)
	}
}

package conn

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// A streamable HTTP server that refuses one request with an HTTP error the
// go-sdk client cannot decode as that request's JSON-RPC error (plain text,
// the TypeScript SDK's error with "id": null, an HTML page) fails that
// request alone, with the server's words (scrubbed): the session, which
// every user of the server shares, stays up, and the calls in flight and
// after it succeed on it. A refused notification is logged and the session
// stays up too.
func TestRejectedRequestKeepsTheSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		want              string // in the complete's error ("": it succeeds)
		refused           string // the method refused ("": completion/complete)
		logged            string
	}{
		{"plain text 400", "text/plain", "Bad Request: unsupported protocol version 2026-07-28\n", 400, "HTTP 400 Bad Request: Bad Request: unsupported protocol version", "", ""},
		{"TypeScript SDK", "application/json", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version (supported versions: 2025-11-25)"},"id":null}`, 400, "Unsupported protocol version", "", ""},
		{"HTML 422 with a secret", "text/html", "<html><body>Unprocessable: token=hunter2hunter2 " + strings.Repeat("x", 500) + "</body></html>", 422, "HTTP 422", "", ""},
		{"JSON-RPC error of the request", "", "", 400, "refused by the server", "", ""}, // (the body is made below)
		{"notification", "text/plain", "Bad Request\n", 400, "", "notifications/initialized", "the server refused a notification: method=notifications/initialized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := demoserver.New(&demoserver.Options{Name: "o", ProtocolVersions: []string{"2025-11-25"}, Passthrough: true})
			sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
			var initializes atomic.Int32
			// The 20 calls of other users are held at the server until all
			// are in and the refusal is sent, so that they are in flight
			// when it comes.
			var arrived atomic.Int32
			allIn, refused := make(chan struct{}), make(chan struct{})
			var refusedOnce sync.Once
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(strings.NewReader(string(body)))
					var msg struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					json.Unmarshal(body, &msg)
					switch msg.Method {
					case "initialize":
						initializes.Add(1)
					case "tools/call":
						if strings.Contains(string(body), "during ") {
							if arrived.Add(1) == 20 {
								close(allIn)
							}
							<-refused
						}
					case cmp.Or(tc.refused, "completion/complete"):
						if tc.refused == "" {
							<-allIn
						}
						defer refusedOnce.Do(func() { close(refused) })
						b := tc.body
						if b == "" {
							b = `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32602,"message":"refused by the server"}}`
						}
						if tc.ctype != "" {
							w.Header().Set("Content-Type", tc.ctype)
						}
						w.WriteHeader(tc.status)
						io.WriteString(w, b)
						return
					}
				}
				sdk.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
			t.Cleanup(func() { refusedOnce.Do(func() { close(refused) }) }) // (a failed test leaves no call held)
			logs := &syncbuf.Buffer{}
			m := NewManager([]*config.Server{{Name: "o", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}},
				&Options{Logger: hclog.New(&hclog.LoggerOptions{Output: logs})})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()
			echo := func(msg string) error {
				res, err := m.CallTool(ctx, "o", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}}, nil)
				if err == nil && (res.IsError || res.Content[0].(*mcp.TextContent).Text != msg) {
					err = errors.New("wrong result")
				}
				return err
			}
			if err := echo("before"); err != nil {
				t.Fatal(err)
			}
			// Calls of other users in flight meanwhile (held at the server
			// until the refusal).
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for i := range 20 {
				wg.Go(func() { errs <- echo("during " + string(rune('a'+i))) })
			}
			err := m.Do(ctx, "o", func(ctx context.Context, cs *mcp.ClientSession) error {
				_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "introduce"},
					Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}})
				return err
			})
			var je *jsonrpc.Error
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("complete: %v", err)
			case tc.want != "" && (!errors.As(err, &je) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("complete: %v; want the server's JSON-RPC error with %q", err, tc.want)
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("logs lack %q:\n%s", tc.logged, logs)
			}
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), strings.Repeat("x", 300))) {
				t.Errorf("the error shows the server's body unscrubbed or uncut: %v", err)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("a call in flight: %v", err)
				}
			}
			if err := echo("after"); err != nil {
				t.Errorf("a call after: %v", err)
			}
			if n := initializes.Load(); n != 1 {
				t.Errorf("the server was initialized %d times, want once: the refusal ended the session", n)
			}
		})
	}
}

// FuzzRejection: whatever error body a server sends, the JSON-RPC error
// made of it is bounded, valid UTF-8 on one line, and encodes.
func FuzzRejection(f *testing.F) {
	for _, s := range []string{
		"Bad Request\n",
		`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version"},"id":null}`,
		`{"error":{"code":1,"message":"` + strings.Repeat("é", 300) + `"}}`,
		"\x00\xff{}", `{"error":{"message":"a","message":"b"}}`, "token=secret123456789 \r\n x",
	} {
		f.Add(400, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := rejection(status, body)
		if n := len(e.Message); n > rejectionShown+200 {
			t.Fatalf("message of %d bytes", n)
		}
		if !utf8.ValidString(e.Message) || strings.ContainsAny(e.Message, "\r\n") {
			t.Fatalf("message %q", e.Message)
		}
		id, _ := jsonrpc.MakeID(float64(1))
		if _, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: e}); err != nil {
			t.Fatal(err)
		}
	})
}

// A streamable HTTP server that restarted answers every request of the old
// session with the TypeScript SDK's 400 {"id": null, "No valid session ID
// provided"}: the ping after the first refused call is refused too, so that
// session ends and the next call makes a new one — while a one-off refusal
// on a live session (TestRejectedRequestKeepsTheSession) does not end it.
func TestRestartedServerSessionIsRemade(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// waitStream: the restart cut the connections, and the call comes
		// after the session's stream of server messages was asked for
		// again and refused (the go-sdk does so after a delay); else the
		// connections stay (a proxy in front) and the call comes at once.
		waitStream bool
	}{{"call at once", false}, {"call after the stream was refused", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRestartedServer(t, tc.waitStream)
		})
	}
}

func testRestartedServer(t *testing.T, waitStream bool) {
	var mu sync.Mutex
	var sdk http.Handler
	known := map[string]bool{}
	var initializes atomic.Int32
	var streamRefused sync.Once
	refusedStream := make(chan struct{})
	restart := func() {
		mu.Lock()
		defer mu.Unlock()
		srv := demoserver.New(&demoserver.Options{Name: "o", ProtocolVersions: []string{"2025-11-25"}})
		sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		clear(known)
	}
	restart()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h, ok := sdk, known[r.Header.Get("Mcp-Session-Id")]
		mu.Unlock()
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && !ok {
			// The TypeScript SDK's example server's answer to a session
			// it does not know.
			if r.Method == http.MethodGet {
				streamRefused.Do(func() { close(refusedStream) })
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"method":"initialize"`)) {
				initializes.Add(1)
			}
		}
		h.ServeHTTP(&sessionNoter{ResponseWriter: w, note: func(id string) {
			mu.Lock()
			known[id] = true
			mu.Unlock()
		}}, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	logs := &syncbuf.Buffer{}
	m := NewManager([]*config.Server{{Name: "o", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}},
		&Options{Logger: hclog.New(&hclog.LoggerOptions{Output: logs})})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	echo := func(msg string) error {
		res, err := m.CallTool(ctx, "o", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}}, nil)
		if err == nil && (res.IsError || res.Content[0].(*mcp.TextContent).Text != msg) {
			err = errors.New("wrong result")
		}
		return err
	}
	if err := echo("before"); err != nil {
		t.Fatal(err)
	}
	restart()
	if waitStream {
		// The restart cut the stream; the go-sdk asks for it again.
		hs.CloseClientConnections()
		<-refusedStream
	}
	// The first call is refused on the old session, which is then found
	// gone; the call is sent again on a new one.
	for i := range 6 {
		if err := echo("after " + string(rune('a'+i))); err != nil {
			t.Errorf("call %d after the restart: %v", i+1, err)
		}
	}
	if n := initializes.Load(); n != 2 {
		t.Errorf("the server was initialized %d times, want twice", n)
	}
	if t.Failed() {
		t.Logf("logs:\n%s", logs)
	}
}

// sessionNoter notes the session id a response gives before it is sent (a
// client may use it before the handler returns).
type sessionNoter struct {
	http.ResponseWriter
	note  func(id string)
	noted bool
}

func (w *sessionNoter) noteOnce() {
	if id := w.Header().Get("Mcp-Session-Id"); id != "" && !w.noted {
		w.noted = true
		w.note(id)
	}
}

func (w *sessionNoter) WriteHeader(code int) {
	w.noteOnce()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionNoter) Write(b []byte) (int, error) {
	w.noteOnce()
	return w.ResponseWriter.Write(b)
}

func (w *sessionNoter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *sessionNoter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A server's JSON-RPC error code reaches the client only if it is one of
// JSON-RPC's or in its range for servers' own errors; else it is internal
// error.
func TestRejectionCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code, want int64
	}{
		{-32700, -32700}, {-32600, -32600}, {-32601, -32601}, {-32602, -32602}, {-32603, -32603},
		{-32000, -32000}, {-32002, -32002}, {-32099, -32099},
		{-32100, -32603}, {-32604, -32603}, {-31999, -32603}, {0, -32603}, {1, -32603}, {400, -32603}, {-1 << 62, -32603},
	} {
		body := `{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.FormatInt(tc.code, 10) + `,"message":"no"}}`
		if got := rejection(400, []byte(body)).Code; got != tc.want {
			t.Errorf("code %d: got %d, want %d", tc.code, got, tc.want)
		}
	}
}

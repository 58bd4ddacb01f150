package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fuzzMaxEvent is the event cap the fuzz target configures, as
// max_message_bytes would (its smallest allowed value is 1024).
const fuzzMaxEvent = 4096

// FuzzSSEEvents feeds arbitrary bytes, as the SSE stream of a remote server,
// to the go-sdk client transports configured as the host configures them
// (streamable HTTP and SSE with MaxEventSize). Invariants: no panic; the
// connect returns (no hang); an event that never ends is refused after about
// the cap, so the bytes read stay bounded whatever the server sends; and the
// client still works against a well-behaved server afterwards.
func FuzzSSEEvents(f *testing.F) {
	for _, seed := range []string{
		"data: {}", // data without a newline
		"data: " + strings.Repeat("x", 2*fuzzMaxEvent) + "\n\n", // an event over the cap
		"\x00\xff{}",
		"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n",
		"event: message\rdata: {}\r\r",
		strings.Repeat("event: message\n", 500) + "data: {}\n\n",
		strings.Repeat("data: {\n", 300) + "\n",
		": comment\n\nid: 1\nretry: 10\nevent: endpoint\ndata: /messages?session=1\n\n",
		"event: endpoint\ndata: http://127.0.0.1:1/elsewhere\n\n",
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"no\"}}\n\n",
		"data:" + strings.Repeat(" ", fuzzMaxEvent-5) + "\n\n",
		"\n\n\n\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, kind := range []string{"http", "sse"} {
			// The stream as given, then the same stream followed by an event
			// that never ends: the client must give up on it near the cap.
			for _, endless := range []bool{false, true} {
				rt := &fuzzServer{body: body, endless: endless, stopped: make(chan struct{})}
				err := fuzzConnect(kind, rt)
				if errors.Is(err, context.DeadlineExceeded) && endless {
					t.Fatalf("%s: an endless event was not refused: %v", kind, err)
				}
				if endless {
					// The client gave up on the stream (or closed the
					// session): it must stop reading it, as it would stop a
					// real body by cancelling the request's context.
					select {
					case <-rt.stopped:
					case <-time.After(2 * time.Second):
						t.Fatalf("%s: the client still reads a stream it gave up on (%d bytes so far)", kind, rt.read.Load())
					}
				}
			}
		}
		// Still usable: a well-behaved server connects.
		if err := fuzzConnect("http", &fuzzServer{good: true}); err != nil {
			t.Fatalf("a good server no longer connects: %v", err)
		}
	})
}

// fuzzConnect connects an MCP client over the transport kind, with the HTTP
// client's transport replaced by rt, and closes the session.
func fuzzConnect(kind string, rt http.RoundTripper) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hc := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1:1/mcp", HTTPClient: hc, MaxEventSize: fuzzMaxEvent}
	if kind == "sse" {
		tr = &mcp.SSEClientTransport{Endpoint: "http://127.0.0.1:1/sse", HTTPClient: hc, MaxEventSize: fuzzMaxEvent}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		return err
	}
	return cs.Close()
}

// fuzzServer answers the client's HTTP requests without a network: a
// request (streamable) or the event stream (SSE) gets body as a
// text/event-stream, followed by an endless event if endless is set; good
// answers properly.
type fuzzServer struct {
	body    []byte
	endless bool
	good    bool
	read    atomic.Int64 // bytes of the stream the client read
	// stopped is closed when the client closes the stream or its request's
	// context ends.
	stopped  chan struct{}
	stopOnce sync.Once
}

func (s *fuzzServer) RoundTrip(req *http.Request) (*http.Response, error) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if req.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		req.Body.Close()
		json.Unmarshal(b, &msg)
	}
	resp := func(status int, ctype string, body io.Reader) (*http.Response, error) {
		h := http.Header{}
		if ctype != "" {
			h.Set("Content-Type", ctype)
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(body), Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
	}
	switch {
	case s.good && req.Method == http.MethodPost && msg.Method == "initialize":
		return resp(http.StatusOK, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":`+string(msg.ID)+
			`,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"good","version":"1"}}}`))
	case s.good && req.Method == http.MethodPost && len(msg.ID) > 0: // server/discover, say
		return resp(http.StatusOK, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":`+string(msg.ID)+
			`,"error":{"code":-32601,"message":"method not found"}}`))
	case req.Method == http.MethodPost && len(msg.ID) > 0, req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/sse"):
		var r io.Reader = bytes.NewReader(s.body)
		if s.endless {
			r = io.MultiReader(r, strings.NewReader("data: "), endlessReader{})
		}
		cr := &countingReader{r: r, n: &s.read, ctx: req.Context(), stop: func() {
			if s.stopped != nil {
				s.stopOnce.Do(func() { close(s.stopped) })
			}
		}}
		h := http.Header{"Content-Type": {"text/event-stream"}}
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: cr, Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
	case req.Method == http.MethodPost:
		return resp(http.StatusAccepted, "", http.NoBody)
	default:
		return resp(http.StatusMethodNotAllowed, "", http.NoBody)
	}
}

// endlessReader is an event line that never ends.
type endlessReader struct{}

func (endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// countingReader is a response body like net/http's: it counts what is
// read, and ends when closed or when the request's context ends.
type countingReader struct {
	r    io.Reader
	n    *atomic.Int64
	ctx  context.Context
	stop func()
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		c.stop()
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { c.stop(); return nil }

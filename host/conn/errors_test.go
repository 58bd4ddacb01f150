package conn

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/sdk"
)

// The classifiers must go by the errors' types: every case below is an error
// as the go-sdk (or this package's transports) produce it, and several read
// one way and mean another.
func TestErrorClassifiers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                      string
		err                       func(t *testing.T) error
		neverSent, gone, terminal bool
	}{
		{
			name: "call on a session the host closed",
			err: func(t *testing.T) error {
				p := newMemPair(t)
				p.cs.Close()
				return p.call(context.Background())
			},
			neverSent: true, gone: true, terminal: true,
		},
		{
			name: "call on a session the server ended",
			err: func(t *testing.T) error {
				p := newMemPair(t)
				p.ss.Close()
				p.cs.Wait()
				return p.call(context.Background())
			},
			neverSent: true, gone: true, terminal: true,
		},
		{
			// Reads like an unrelated server error; is a refusal.
			name: "server answers that it is closing",
			err: func(t *testing.T) error {
				return scriptedCallError(t, &jsonrpc.Error{Code: -32004, Message: "server is closing"})
			},
			neverSent: true, gone: true, terminal: true,
		},
		{
			// Reads like a refusal and a lost connection; is the server's answer.
			name: "server error whose message mentions a closed connection",
			err: func(t *testing.T) error {
				p := newMemPair(t)
				_, err := p.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "broken"})
				return err
			},
		},
		{
			name: "server error code other than closing, same words",
			err: func(t *testing.T) error {
				return scriptedCallError(t, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client is closing: connection closed: stream disconnected"})
			},
		},
		{
			// Verify's failure passes through Do untouched, whatever it wraps.
			name: "Verify failure wrapping a refused call",
			err: func(t *testing.T) error {
				p := newMemPair(t)
				p.cs.Close()
				return &verifyError{p.call(context.Background())}
			},
		},
		{
			name: "call cancelled by its context",
			err: func(t *testing.T) error {
				p := newMemPair(t)
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return p.call(ctx)
			},
		},
		{
			// Written, then lost: never "never sent".
			name: "stdio call in flight when the server closes its output",
			err: func(t *testing.T) error {
				p := newStdioPair(t)
				return p.callLosing(p.closeServerOutput)
			},
		},
		{
			name: "stdio call after the server closed its output",
			err: func(t *testing.T) error {
				p := newStdioPair(t)
				p.callLosing(p.closeServerOutput)
				return p.call(context.Background())
			},
			neverSent: true, gone: true, terminal: true,
		},
		{
			name: "raw lane call in flight when the server closes its output",
			err: func(t *testing.T) error {
				lc := oneLineConn(t)
				_, err := lc.CallRaw(context.Background(), "echo", nil, nil)
				return err
			},
			gone: true, terminal: true,
		},
		{
			name: "raw lane call after the server closed its output",
			err: func(t *testing.T) error {
				lc := oneLineConn(t)
				lc.CallRaw(context.Background(), "echo", nil, nil)
				_, err := lc.CallRaw(context.Background(), "echo", nil, nil)
				return err
			},
			neverSent: true, gone: true, terminal: true,
		},
		{
			name: "plugin call in flight when the plugin loses the connection",
			err: func(t *testing.T) error {
				p, b := newPluginPair(t)
				return p.callLosing(b.lose)
			},
			gone: true, terminal: true,
		},
		{
			name: "plugin call after the plugin lost the connection",
			err: func(t *testing.T) error {
				p, b := newPluginPair(t)
				p.callLosing(b.lose)
				return p.call(context.Background())
			},
			neverSent: true, gone: true, terminal: true,
		},
		{
			name: "streamable call to a server that went away",
			err: func(t *testing.T) error {
				cs, stop := streamableSession(t)
				stop()
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block"})
				return err
			},
			terminal: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.err(t)
			if err == nil {
				t.Fatal("no error")
			}
			if got := neverSent(err); got != tc.neverSent {
				t.Errorf("neverSent = %v, want %v for %T %q", got, tc.neverSent, err, err)
			}
			if got := connectionGone(err); got != tc.gone {
				t.Errorf("connectionGone = %v, want %v for %T %q", got, tc.gone, err, err)
			}
			if got := IsTerminal(err); got != tc.terminal {
				t.Errorf("IsTerminal = %v, want %v for %T %q", got, tc.terminal, err, err)
			}
		})
	}
}

// testServer has a tool that blocks until its call is cancelled or the test
// ends, and a prompt that fails with words about closed connections.
func testServer(t *testing.T, started chan<- struct{}) *mcp.Server {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the sessions' cleanups
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.CallToolResult{}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "broken"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, errors.New("backend: connection closed; client is closing; stream disconnected")
	})
	return srv
}

// pair is a client session on a test server.
type pair struct {
	cs      *mcp.ClientSession
	ss      *mcp.ServerSession
	started chan struct{}
}

func (p *pair) call(ctx context.Context) error {
	_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
	return err
}

// callLosing calls the blocking tool, runs lose once the server has the
// call, and returns the call's error.
func (p *pair) callLosing(lose func()) error {
	errc := make(chan error, 1)
	go func() { errc <- p.call(context.Background()) }()
	<-p.started
	lose()
	return <-errc
}

// connect connects a client over ct to testServer over st.
func connect(t *testing.T, st, ct mcp.Transport) *pair {
	t.Helper()
	ctx := context.Background()
	p := &pair{started: make(chan struct{}, 1)}
	ss, err := testServer(t, p.started).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.cs, p.ss = cs, ss
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return p
}

func newMemPair(t *testing.T) *pair {
	ct, st := mcp.NewInMemoryTransports()
	return connect(t, st, ct)
}

// stdioPair is a client on this package's stdio connection, and a server on pipes.
type stdioPair struct {
	*pair
	closeServerOutput func()
}

func newStdioPair(t *testing.T) *stdioPair {
	cr, cw := io.Pipe() // client to server
	sr, sw := io.Pipe() // server to client
	lc := newLineConn(sr, cw, DefaultMaxMessageBytes, nil, nil)
	p := connect(t, &mcp.IOTransport{Reader: cr, Writer: sw}, fixedTransport{lc})
	return &stdioPair{pair: p, closeServerOutput: func() { sw.Close() }}
}

// fixedTransport connects to a connection made beforehand.
type fixedTransport struct{ c mcp.Connection }

func (t fixedTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// oneLineConn returns a stdio connection whose server reads one line and then
// closes its output.
func oneLineConn(t *testing.T) *lineConn {
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	lc := newLineConn(sr, cw, DefaultMaxMessageBytes, nil, nil)
	t.Cleanup(func() { lc.Close() })
	go func() {
		bufio.NewReader(cr).ReadBytes('\n')
		sw.Close()
		io.Copy(io.Discard, cr)
	}()
	return lc
}

// scriptedCallError connects this package's stdio connection to a scripted
// server that answers tools/call with werr, and returns the call's error.
func scriptedCallError(t *testing.T, werr *jsonrpc.Error) error {
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	lc := newLineConn(sr, cw, DefaultMaxMessageBytes, nil, nil)
	go func() {
		defer sw.Close()
		br := bufio.NewReader(cr)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			msg, err := jsonrpc.DecodeMessage(line)
			req, ok := msg.(*jsonrpc.Request)
			if err != nil || !ok || !req.IsCall() {
				continue
			}
			resp := &jsonrpc.Response{ID: req.ID}
			switch req.Method {
			case "initialize":
				resp.Result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}`)
			case "tools/call":
				resp.Error = werr
			default:
				resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			data, _ := jsonrpc.EncodeMessage(resp)
			if _, err := sw.Write(append(data, '\n')); err != nil {
				return
			}
		}
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(context.Background(), fixedTransport{lc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "any"})
	return err
}

// bridgeConn is a plugin's connection (sdk.Conn) to an in-memory server,
// which the plugin can report lost as a real transport plugin does.
type bridgeConn struct {
	c    mcp.Connection
	msgs chan []byte
	lost chan struct{}
	once sync.Once
}

var errLost = &sdk.TransportError{Code: sdk.CodeTerminal, Message: "websocket: close 1006 (abnormal closure)"}

func newBridge(c mcp.Connection) *bridgeConn {
	b := &bridgeConn{c: c, msgs: make(chan []byte), lost: make(chan struct{})}
	go func() {
		for {
			m, err := c.Read(context.Background())
			if err != nil {
				return
			}
			data, _ := jsonrpc.EncodeMessage(m)
			select {
			case b.msgs <- data:
			case <-b.lost:
				return
			}
		}
	}()
	return b
}

func (b *bridgeConn) lose() { b.once.Do(func() { close(b.lost) }) }

func (b *bridgeConn) Recv(ctx context.Context) ([]byte, error) {
	select {
	case <-b.lost:
		return nil, errLost
	default:
	}
	select {
	case m := <-b.msgs:
		return m, nil
	case <-b.lost:
		return nil, errLost
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *bridgeConn) Send(ctx context.Context, msg []byte) error {
	select {
	case <-b.lost:
		return errLost
	default:
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return err
	}
	return b.c.Write(ctx, m)
}

func (b *bridgeConn) Close() error { b.lose(); return b.c.Close() }

func newPluginPair(t *testing.T) (*pair, *bridgeConn) {
	ct, st := mcp.NewInMemoryTransports()
	c, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := newBridge(c)
	return connect(t, st, fixedTransport{newPluginConn(b, "transport-test")}), b
}

// streamableSession returns a client session on a streamable HTTP server,
// and a func that stops the server and closes its port.
func streamableSession(t *testing.T) (*mcp.ClientSession, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := testServer(t, make(chan struct{}, 1))
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	tr := &mcp.StreamableClientTransport{
		Endpoint: "http://" + ln.Addr().String(), DisableStandaloneSSE: true,
		// A new connection for every request: the next one is refused.
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, func() { hs.Close() }
}

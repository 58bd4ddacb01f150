// Package wsmcp carries MCP over a WebSocket connection in process: one
// JSON-RPC message per text frame, subprotocol "mcp". The demo server uses it
// to serve MCP over WebSocket, and the benchmarks use its client to measure
// the direct path against the transport-ws plugin. (The plugin itself has its
// own byte-level implementation: plugins import only the SDK.)
package wsmcp

import (
	"context"
	"net/http"
	"sync"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
)

// Subprotocol is the WebSocket subprotocol of MCP.
const Subprotocol = "mcp"

// Handler returns an HTTP handler that serves server to every WebSocket
// client that negotiates the mcp subprotocol. ctx bounds the sessions.
func Handler(ctx context.Context, server *mcp.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
		if err != nil {
			return // Accept has answered
		}
		if c.Subprotocol() != Subprotocol {
			c.Close(websocket.StatusPolicyViolation, "the mcp subprotocol is required")
			return
		}
		c.SetReadLimit(16 << 20)
		ss, err := server.Connect(ctx, transport{c}, nil)
		if err != nil {
			c.Close(websocket.StatusInternalError, "connect failed")
			return
		}
		ss.Wait()
	})
}

// Dial connects to a WebSocket MCP endpoint and returns an mcp.Transport for
// a go-sdk client.
func Dial(ctx context.Context, url string) (mcp.Transport, error) {
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(16 << 20)
	return transport{c}, nil
}

type transport struct{ c *websocket.Conn }

func (t transport) Connect(context.Context) (mcp.Connection, error) {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{c: t.c, ctx: ctx, cancel: cancel}, nil
}

// conn adapts a WebSocket connection to mcp.Connection.
type conn struct {
	c      *websocket.Conn
	ctx    context.Context // ends with the connection; a Read's own ctx must not close it
	cancel context.CancelFunc
	wmu    sync.Mutex
	once   sync.Once
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		typ, b, err := c.c.Read(c.ctx)
		if err != nil {
			return nil, err
		}
		if typ == websocket.MessageText {
			return jsonrpcmsg.Decode(b)
		}
	}
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.c.Write(c.ctx, websocket.MessageText, b)
}

func (c *conn) Close() error {
	var err error
	c.once.Do(func() {
		err = c.c.Close(websocket.StatusNormalClosure, "")
		c.cancel()
	})
	return err
}

func (c *conn) SessionID() string { return "" }

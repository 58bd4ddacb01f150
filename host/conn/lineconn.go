package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/lineconn"
	"github.com/mcphost/mcphost/internal/lineio"
	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// rawIDPrefix starts the ids of requests sent on the raw lane; the go-sdk
// client numbers its own requests, so the two never collide.
const rawIDPrefix = "mcphost-raw-"

// errLineTooLong is returned when a server sends a message over the size cap.
var errLineTooLong = errors.New("message from the server exceeds the size limit")

// lineConn is the newline-delimited JSON-RPC connection to a stdio server. The
// go-sdk client runs on it as on any mcp.Connection; beside that, CallRaw
// sends a pre-encoded request on a raw lane and returns the server's response
// bytes without decoding them, for the gateway's relay path.
type lineConn struct {
	lineconn.Conn

	mu      sync.Mutex
	pending map[string]*rawWaiter // nil once the read loop ended
	readErr error                 // why it ended
	nextID  atomic.Uint64

	// meta holds the protocol-reserved _meta members ("io.modelcontextprotocol/…")
	// that the go-sdk client puts on its requests, captured from the first
	// request that carries them, so that raw requests carry the same.
	metaOnce sync.Once
	meta     atomic.Pointer[[]byte]
	noCaps   atomic.Pointer[[]byte] // meta without the client capabilities
}

// newLineConn starts a connection on r and w; route, if set, sees each
// message the go-sdk is handed, on the read loop (see routeNote): so a
// notification is routed to its call before the call's raw response, read
// after it, is returned.
func newLineConn(r io.ReadCloser, w io.WriteCloser, maxLine int, route func(jsonrpc.Message) jsonrpc.Message) *lineConn {
	c := &lineConn{pending: map[string]*rawWaiter{}}
	c.Start(r, w, lineconn.Config{ // the read loop ends when r is closed or the server closes its stdout
		MaxLine: maxLine,
		Line:    c.rawResponse,
		Batches: true,
		End:     c.fail,
		Written: c.written,
		Decoded: route,
	})
	return c
}

// rawResponse hands a raw-lane response to its waiter; everything else goes,
// decoded, to the go-sdk.
func (c *lineConn) rawResponse(line []byte) bool {
	if line[0] != '{' || !bytes.Contains(line, []byte(rawIDPrefix)) {
		return false
	}
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], line)
	if err != nil {
		return false
	}
	id, ok := rawjson.Find(ms, "id")
	if !ok {
		return false
	}
	if _, isCall := rawjson.Find(ms, "method"); isCall {
		return false
	}
	w := c.take(string(id.Value))
	if w == nil {
		return false
	}
	w.finish(line, nil)
	return true
}

// rawWaiter is a raw call waiting for its response.
type rawWaiter struct {
	done func(resp []byte, err error)
	stop func() bool // stops the call's cancellation watch; set once it runs
}

func (w *rawWaiter) finish(resp []byte, err error) {
	if w.stop != nil {
		w.stop()
	}
	w.done(resp, err)
}

// take removes and returns the waiter of id (nil: none, or already taken:
// a call ends once).
func (c *lineConn) take(id string) *rawWaiter {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.pending[id]
	delete(c.pending, id)
	return w
}

// fail ends the read loop: pending raw calls get no response (their channels
// close). Read reports err.
func (c *lineConn) fail(err error) error {
	if errors.Is(err, lineio.ErrTooLong) {
		err = errLineTooLong
	}
	c.mu.Lock()
	c.readErr = err
	ws := make([]*rawWaiter, 0, len(c.pending))
	for _, w := range c.pending {
		ws = append(ws, w)
	}
	c.pending = nil
	c.mu.Unlock()
	if len(ws) > 0 {
		// Not on the read loop: a waiter may close the session, which
		// waits for the read loop to end. Ends once every waiter is told.
		go func() {
			for _, w := range ws {
				w.finish(nil, errTransportClosed)
			}
		}()
	}
	return err
}

// written captures the reserved _meta of the go-sdk's requests for CallRaw.
func (c *lineConn) written(msg jsonrpc.Message) {
	// (Not from initialize or server/discover: they precede the version's
	// choice, and the go-sdk client tries server/discover, at its newest
	// version, with a server it then initializes at an earlier one.)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != "initialize" && req.Method != "server/discover" {
		c.metaOnce.Do(func() {
			m := mcpmeta.Reserved(req.Params)
			nc := mcpmeta.Without(m, mcp.MetaKeyClientCapabilities)
			c.noCaps.Store(&nc)
			c.meta.Store(&m)
		})
	}
}

// CallRaw sends tools/call for tool with the given raw JSON arguments (nil
// for none) and returns the server's raw response line, as StartRaw does
// (and with its errors), waiting for it.
func (c *lineConn) CallRaw(ctx context.Context, tool string, args, caps []byte) ([]byte, error) {
	type result struct {
		resp []byte
		err  error
	}
	ch := make(chan result, 1)
	if err := c.StartRaw(ctx, tool, args, caps, func(resp []byte, err error) { ch <- result{resp, err} }); err != nil {
		return nil, err
	}
	r := <-ch
	return r.resp, r.err
}

// StartRaw sends tools/call for tool with the given raw JSON arguments (nil
// for none) and calls done once, with the server's raw response line (on
// the read loop: done must not block on this connection), or with the error
// that ended the call: ctx's, when it ends first (the server is then sent
// notifications/cancelled), or errTransportClosed when the connection is
// lost. caps, if set, are the capabilities of the client the call is made
// for, as the JSON object the request's _meta carries (NewProtocol; else
// the go-sdk client's own go in the _meta as captured). StartRaw returns an
// error, and done is never called, when nothing was sent:
// mcp.ErrConnectionClosed if the connection was lost before.
func (c *lineConn) StartRaw(ctx context.Context, tool string, args, caps []byte, done func(resp []byte, err error)) error {
	id := strconv.Quote(rawIDPrefix + strconv.FormatUint(c.nextID.Add(1), 10))
	name, _ := json.Marshal(tool)
	var meta []byte
	if m := c.meta.Load(); m != nil {
		meta = *m
	}
	if caps != nil {
		if m := c.noCaps.Load(); m != nil {
			meta = *m
		}
		withCaps := make([]byte, 0, len(meta)+len(caps)+48)
		if len(meta) > 0 {
			withCaps = append(append(withCaps, meta...), ',')
		}
		withCaps = append(withCaps, `"`+mcp.MetaKeyClientCapabilities+`":`...)
		meta = append(withCaps, caps...)
	}
	msg := make([]byte, 0, 96+len(name)+len(args)+len(meta))
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"method":"tools/call","params":{"name":`...)
	msg = append(msg, name...)
	if len(args) > 0 {
		msg = append(msg, `,"arguments":`...)
		msg = append(msg, args...)
	}
	if len(meta) > 0 {
		msg = append(msg, `,"_meta":{`...)
		msg = append(msg, meta...)
		msg = append(msg, '}')
	}
	msg = append(msg, "}}"...)

	w := &rawWaiter{done: done}
	c.mu.Lock()
	if c.pending == nil {
		// Nothing written: refused as the go-sdk refuses a session call.
		err := c.readErr
		c.mu.Unlock()
		return fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, err)
	}
	c.pending[id] = w
	c.mu.Unlock()
	if err := c.WriteLine(msg); err != nil {
		if c.take(id) != nil {
			return fmt.Errorf("%w: %v", errTransportClosed, err)
		}
		return nil // the loss of the connection ended it (done was called)
	}
	stop := context.AfterFunc(ctx, func() {
		if w := c.take(id); w != nil {
			c.WriteLine([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"cancelled by the client"}}`))
			w.done(nil, ctx.Err())
		}
	})
	c.mu.Lock()
	if c.pending[id] == w {
		w.stop = stop
	}
	c.mu.Unlock()
	return nil
}

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
	pending map[string]chan []byte // nil once the read loop ended
	readErr error                  // why it ended
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
	c := &lineConn{pending: map[string]chan []byte{}}
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
	c.mu.Lock()
	ch, ok := c.pending[string(id.Value)]
	delete(c.pending, string(id.Value))
	c.mu.Unlock()
	if ok {
		ch <- line // buffered: never blocks
	}
	return ok
}

// fail ends the read loop: pending raw calls get no response (their channels
// close). Read reports err.
func (c *lineConn) fail(err error) error {
	if errors.Is(err, lineio.ErrTooLong) {
		err = errLineTooLong
	}
	c.mu.Lock()
	c.readErr = err
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.pending = nil
	c.mu.Unlock()
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
// for none) and returns the server's raw response line. caps, if set, are
// the capabilities of the client the call is made for, as the JSON object
// the request's _meta carries (NewProtocol; else the go-sdk client's own go
// in the _meta as captured). If ctx ends first,
// the server is sent notifications/cancelled. A connection lost before the
// call is written fails it with mcp.ErrConnectionClosed; one lost after, with
// errTransportClosed.
func (c *lineConn) CallRaw(ctx context.Context, tool string, args, caps []byte) ([]byte, error) {
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

	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.pending == nil {
		// Nothing written: refused as the go-sdk refuses a session call.
		err := c.readErr
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.WriteLine(msg); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("%w: %v", errTransportClosed, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, errTransportClosed
		}
		return resp, nil
	case <-ctx.Done():
		c.forget(id)
		c.WriteLine([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"cancelled by the client"}}`))
		return nil, ctx.Err()
	}
}

func (c *lineConn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

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
	r       io.ReadCloser
	w       io.WriteCloser
	maxLine int

	out      *lineio.Writer
	incoming chan jsonrpc.Message
	done     chan struct{} // closed when the read loop ends
	readErr  error         // why the read loop ended; valid after done
	closed   chan struct{}
	close1   sync.Once
	closeErr error

	mu      sync.Mutex
	pending map[string]chan []byte
	nextID  atomic.Uint64

	// meta holds the protocol-reserved _meta members ("io.modelcontextprotocol/…")
	// that the go-sdk client puts on its requests, captured from the first
	// request that carries them, so that raw requests carry the same.
	metaOnce sync.Once
	meta     atomic.Pointer[[]byte]
}

func newLineConn(r io.ReadCloser, w io.WriteCloser, maxLine int) *lineConn {
	c := &lineConn{
		r: r, w: w, maxLine: maxLine, out: lineio.NewWriter(w),
		incoming: make(chan jsonrpc.Message),
		done:     make(chan struct{}),
		closed:   make(chan struct{}),
		pending:  map[string]chan []byte{},
	}
	go c.readLoop() // ends when r is closed or the server closes its stdout
	return c
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) readLoop() {
	defer close(c.done)
	err := lineio.ReadLines(c.r, c.maxLine, func(msg []byte) bool {
		if err := c.dispatch(msg); err != nil {
			c.fail(err)
			return false
		}
		return true
	})
	if err != nil {
		if errors.Is(err, lineio.ErrTooLong) {
			err = errLineTooLong
		}
		c.fail(err)
	}
}

// dispatch hands a raw-lane response to its waiter and everything else,
// decoded, to the go-sdk.
func (c *lineConn) dispatch(line []byte) error {
	if line[0] == '{' && bytes.Contains(line, []byte(rawIDPrefix)) {
		var arr [8]rawjson.Member
		if ms, err := rawjson.Members(arr[:0], line); err == nil {
			if id, ok := rawjson.Find(ms, "id"); ok {
				if _, isCall := rawjson.Find(ms, "method"); !isCall {
					c.mu.Lock()
					ch, ok := c.pending[string(id.Value)]
					delete(c.pending, string(id.Value))
					c.mu.Unlock()
					if ok {
						ch <- line // buffered: never blocks
						return nil
					}
				}
			}
		}
	}
	var msgs []jsonrpc.Message
	if line[0] == '[' { // a batch (protocol versions before 2025-06-18)
		var raws []json.RawMessage
		if err := json.Unmarshal(line, &raws); err != nil {
			return fmt.Errorf("invalid batch from server: %w", err)
		}
		for _, r := range raws {
			m, err := jsonrpc.DecodeMessage(r)
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
	} else {
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		select {
		case c.incoming <- m:
		case <-c.closed:
			return io.EOF
		}
	}
	return nil
}

// fail ends the read loop: pending raw calls get no response (their channels close).
func (c *lineConn) fail(err error) {
	c.mu.Lock()
	c.readErr = err
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.pending = nil
	c.mu.Unlock()
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.done:
		c.mu.Lock()
		err := c.readErr
		c.mu.Unlock()
		if err == nil {
			err = io.EOF
		}
		return nil, err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != "initialize" {
		c.metaOnce.Do(func() {
			m := mcpmeta.Reserved(req.Params)
			c.meta.Store(&m)
		})
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error { return c.out.WriteLine(data) }

func (c *lineConn) Close() error {
	c.close1.Do(func() {
		close(c.closed)
		c.out.Close()
		c.closeErr = errors.Join(c.w.Close(), c.r.Close())
	})
	return c.closeErr
}

// CallRaw sends tools/call for tool with the given raw JSON arguments (nil
// for none) and returns the server's raw response line. If ctx ends first,
// the server is sent notifications/cancelled. A connection lost before the
// call is written fails it with mcp.ErrConnectionClosed; one lost after, with
// errTransportClosed.
func (c *lineConn) CallRaw(ctx context.Context, tool string, args []byte) ([]byte, error) {
	id := strconv.Quote(rawIDPrefix + strconv.FormatUint(c.nextID.Add(1), 10))
	name, _ := json.Marshal(tool)
	var meta []byte
	if m := c.meta.Load(); m != nil {
		meta = *m
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
	if err := c.writeLine(msg); err != nil {
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
		c.writeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"cancelled by the client"}}`))
		return nil, ctx.Err()
	}
}

func (c *lineConn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

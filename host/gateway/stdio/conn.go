package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/internal/lineconn"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// relayConn is the downstream stdio connection of the gateway. The go-sdk
// server runs on it as on any mcp.Connection, except for tools/call requests
// that can take the relay path: those never reach the go-sdk. Their name and
// arguments are read without decoding the message, they are sent upstream raw
// (host.RelayCall), and the upstream's response goes back with the client's
// id spliced in. A relay therefore parses nothing it only forwards.
//
// A request takes the relay path only when nothing about it needs the go-sdk:
// params hold just name, arguments and protocol-reserved _meta (no progress
// token, no multi-round-trip state), and the upstream's raw lane takes the
// call (see conn.Manager.CallRaw: stdio, streamable HTTP and plugin
// transports, in the client's era or a later one). Everything else, and
// every other method, goes through the go-sdk server unchanged.
type relayConn struct {
	lineconn.Conn
	g     *gateway.Gateway
	hooks hooks // (tests only: export_test.go)

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	// calls is the parent of relayed calls: ctx, also cancelled at the
	// drain deadline (Gateway.Abortable).
	calls       context.Context
	cancelCalls context.CancelFunc
	wg          sync.WaitGroup // relayed calls in flight and idle workers
	work        chan func()    // hands a relayed call to an idle worker

	mu sync.Mutex
	// pending holds the IDKey of every client request not yet answered,
	// with the cancel function of a relayed call (nil on the go-sdk path).
	pending map[string]context.CancelFunc
	// allAnswered, when waitAnswered waits, is closed once pending is
	// empty.
	allAnswered chan struct{}
	initID      []byte                 // id of the client's initialize request
	version     atomic.Pointer[string] // protocol version negotiated with the client
	caps        atomic.Pointer[[]byte] // the client's capabilities, from its initialize
	// ss is the go-sdk's session with the client, set before connected is
	// closed. The read loop starts before the go-sdk's Connect returns, so
	// a request can arrive (after the client's initialize was answered)
	// before ss is known: a tools/call waits for connected rather than
	// losing the relay path.
	ss        *mcp.ServerSession
	connected chan struct{}
	connectMu sync.Once
	// carried holds, by IDKey, the token of the span of each relayed call
	// passed on to the go-sdk server, until it is answered (telemetry.go).
	carried map[string]string
	// notes holds the notifications waiting to be written to the client
	// outside any call (tasks.go); closed with the connection.
	notes *gateway.NoteQueue
}

func newRelayConn(g *gateway.Gateway, r io.ReadCloser, w io.WriteCloser, hk hooks) *relayConn {
	c := &relayConn{
		g:         g,
		hooks:     hk,
		pending:   map[string]context.CancelFunc{},
		work:      make(chan func()),
		connected: make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.calls, c.cancelCalls = g.Abortable(c.ctx)
	c.notes = gateway.NewNoteQueue(g.Logger(), func(_ context.Context, n gateway.QueuedNote) {
		if err := c.WriteLine(n.Msg); err != nil {
			g.Logger().Debug("writing a notification to the client failed", "error", err)
		}
	})
	cfg := lineconn.Config{ // the read loop ends when r is closed or reaches EOF
		MaxLine: gateway.MaxMessageBytes,
		Line:    c.handleLine,
		Invalid: c.invalid,
		End:     endOfInput,
		Written: c.written,
		Closing: c.closing,
	}
	// (The request's id, for its span; and with telemetry off, the
	// decision a relayed call handed over carries, for its checks.)
	cfg.Decoded = c.decoded
	c.Start(r, w, cfg)
	return c
}

// setSession records the go-sdk's session with the client (nil: Connect
// failed) and lets requests waiting for it go on.
func (c *relayConn) setSession(ss *mcp.ServerSession) {
	c.connectMu.Do(func() {
		c.ss = ss
		close(c.connected)
	})
}

// session is the go-sdk's session with the client, once the go-sdk's
// Connect has returned; nil if it failed or the connection closed first.
func (c *relayConn) session() *mcp.ServerSession {
	if c.hooks.waiting != nil {
		select {
		case <-c.connected:
		default:
			c.hooks.waiting()
		}
	}
	select {
	case <-c.connected:
		return c.ss
	case <-c.ctx.Done():
		return nil
	}
}

// Connect implements mcp.Transport (it is used once).
func (c *relayConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }

// endOfInput is what Read reports once the input has ended: the read error,
// or io.EOF for the end of the stream however it is wrapped.
func endOfInput(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return err
}

// handleLine relays or answers one message (true), or leaves it to be passed
// on to the go-sdk server (false).
//
// Every message is first parsed, once, and held to wire.Parse's rules (strict JSON: one
// meaning for the envelope, params and _meta, nothing after the object), so
// that policy and routing act on exactly what is forwarded. A request whose
// id is already in flight (compared as the go-sdk compares ids: 50, 50.0 and
// 5e1 are one id) is answered -32600 here: the go-sdk would drop it without
// any answer, and the client would wait forever.
func (c *relayConn) handleLine(line []byte) bool {
	var m wire.Message
	if err := wire.Parse(&m, line); err != nil {
		c.g.AuditRefused(gateway.StrictReason(err))
		c.WriteLine(wire.StrictError(err))
		return true
	}
	if m.Kind == wire.KindRequest {
		key, err := m.IDKey()
		if err != nil {
			c.g.AuditRefused(gateway.ReasonInvalidID)
			c.WriteLine(wire.InvalidID())
			return true
		}
		c.mu.Lock()
		_, dup := c.pending[key]
		if !dup {
			c.pending[key] = nil
		}
		c.mu.Unlock()
		if dup {
			c.g.AuditRefused(gateway.ReasonDuplicateID)
			c.WriteLine(wire.DuplicateID(m.ID))
			return true
		}
	}
	switch {
	case m.IsMethod("tools/call"):
		if c.relay(&m, line) {
			return true
		}
		if carried, ok := gateway.CarryTask(&m, line); ok {
			c.Pass(carried) // (its task parameter in _meta, for the go-sdk path)
			return true
		}
	case gateway.IsTasksRequest(&m):
		c.serveTasks(&m)
		return true
	case m.IsMethod("notifications/cancelled"):
		if c.cancelRelayed(&m) {
			return true
		}
	case m.IsMethod("initialize"):
		if m.ID != nil {
			c.mu.Lock()
			c.initID = bytes.Clone(m.ID)
			c.mu.Unlock()
		}
		if caps, ok := m.Param("capabilities"); ok && caps.Value[0] == '{' {
			b := bytes.Clone(caps.Value)
			c.caps.Store(&b)
		}
	}
	return false
}

// waitAnswered waits, up to timeout, until every client request has been
// answered (its response handed to the writer). A drain ends when handlers
// return, which is just before the go-sdk writes their answers; this closes
// that gap before the session is closed.
func (c *relayConn) waitAnswered(timeout time.Duration) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	if c.allAnswered == nil {
		c.allAnswered = make(chan struct{})
	}
	answered := c.allAnswered
	c.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-answered:
	case <-t.C:
	}
}

// done1 forgets a client request id once it is answered (or cancelled).
func (c *relayConn) done1(id []byte) {
	if key, err := rawjson.IDKey(id); err == nil {
		c.forget(key)
	}
}

// forget is done1 of the id whose IDKey is key.
func (c *relayConn) forget(key string) {
	c.mu.Lock()
	c.forgetLocked(key)
	c.mu.Unlock()
}

// forgetLocked forgets the pending request key, and wakes waitAnswered
// once none is left (the caller holds c.mu).
func (c *relayConn) forgetLocked(key string) {
	delete(c.pending, key)
	if len(c.pending) == 0 && c.allAnswered != nil {
		close(c.allAnswered)
		c.allAnswered = nil
	}
}

// invalid answers a message that passed the strict scan but does not decode
// for the go-sdk server: valid JSON that is not a JSON-RPC message
// ("jsonrpc":"1.0", a method that is not a string). Its id, if any, is
// answered and freed, so it can neither be refused later nor grow the map.
func (c *relayConn) invalid(line []byte, _ error) {
	c.g.AuditRefused(gateway.ReasonNotJSONRPC)
	var m wire.Message
	wire.Parse(&m, line) // (it passed the strict scan)
	if _, err := m.IDKey(); err == nil {
		id := bytes.Clone(m.ID)
		c.done1(id)
		c.WriteLine(wire.NotJSONRPC(id))
		return
	}
	c.WriteLine(wire.NotJSONRPC(nil))
}

// workerIdle is how long an idle relay worker waits for another call.
const workerIdle = 5 * time.Second

// run runs f on an idle worker, or on a new one if none is idle. Workers are
// kept for a while after a call, so that their grown stacks are reused rather
// than grown again for every call.
func (c *relayConn) run(f func()) {
	select {
	case c.work <- f:
		return
	default:
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		idle := time.NewTimer(workerIdle)
		defer idle.Stop()
		for {
			f()
			idle.Reset(workerIdle)
			select {
			case f = <-c.work:
			case <-idle.C:
				return
			case <-c.ctx.Done():
				return
			}
		}
	}()
}

// cancelRelayed handles notifications/cancelled: the request's id is free
// again (a cancelled request may get no answer), and a relayed call is
// cancelled here; false passes the notification on to the go-sdk.
func (c *relayConn) cancelRelayed(m *wire.Message) bool {
	key, ok := m.CancelledKey()
	if !ok {
		return false
	}
	c.mu.Lock()
	cancel := c.pending[key]
	c.forgetLocked(key)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// setCancel records (or, with nil, forgets) the cancel function of the
// relayed call with id key, if it is still pending.
func (c *relayConn) setCancel(key string, cancel context.CancelFunc) {
	c.mu.Lock()
	if _, ok := c.pending[key]; ok {
		c.pending[key] = cancel
	}
	c.mu.Unlock()
}

// written notes a response of the go-sdk server: its id is answered.
func (c *relayConn) written(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if c.version.Load() == nil {
			c.noteInitialize(resp)
		}
		if id, err := json.Marshal(resp.ID.Raw()); err == nil {
			c.done1(id)
		}
		c.answered(resp) // (a carried span or decision)
	}
}

// noteInitialize records the protocol version from the response to the
// client's initialize request.
func (c *relayConn) noteInitialize(resp *jsonrpc.Response) {
	c.mu.Lock()
	initID := c.initID
	c.mu.Unlock()
	if initID == nil || resp.Error != nil {
		return
	}
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil || !bytes.Equal(id, initID) {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &r) == nil && r.ProtocolVersion != "" {
		c.version.Store(&r.ProtocolVersion)
	}
}

// closing runs in Close, once relayed calls can no longer hand messages to
// the go-sdk or write: it cancels them and waits for them.
func (c *relayConn) closing() {
	c.notes.Close()
	c.cancel()
	c.cancelCalls()
	c.wg.Wait()
	c.dropCarried()
}

package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/lineconn"
	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// MaxMessageBytes caps one message from the downstream client.
const MaxMessageBytes = 4 << 20

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
	g *Gateway

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	// calls is the parent of relayed calls: ctx, also cancelled at the
	// drain deadline (Gateway.abortable).
	calls       context.Context
	cancelCalls context.CancelFunc
	wg          sync.WaitGroup // relayed calls in flight and idle workers
	work        chan func()    // hands a relayed call to an idle worker

	mu sync.Mutex
	// pending holds the IDKey of every client request not yet answered,
	// with the cancel function of a relayed call (nil on the go-sdk path).
	pending map[string]context.CancelFunc
	initID  []byte                 // id of the client's initialize request
	version atomic.Pointer[string] // protocol version negotiated with the client
	caps    atomic.Pointer[[]byte] // the client's capabilities, from its initialize
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
}

func newRelayConn(g *Gateway, r io.ReadCloser, w io.WriteCloser) *relayConn {
	c := &relayConn{
		g:         g,
		pending:   map[string]context.CancelFunc{},
		work:      make(chan func()),
		connected: make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.calls, c.cancelCalls = g.abortable(c.ctx)
	cfg := lineconn.Config{ // the read loop ends when r is closed or reaches EOF
		MaxLine: MaxMessageBytes,
		Line:    c.handleLine,
		Invalid: c.invalid,
		End:     endOfInput,
		Written: c.written,
		Closing: c.closing,
	}
	if g.tel.Enabled() {
		cfg.Decoded = c.decoded // (the request's id, for its span)
	}
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
	if c.g.stdioWaiting != nil {
		select {
		case <-c.connected:
		default:
			c.g.stdioWaiting()
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
// Every message is first held to rawjson.Message's rules (strict JSON: one
// meaning for the envelope, params and _meta, nothing after the object), so
// that policy and routing act on exactly what is forwarded. A request whose
// id is already in flight (compared as the go-sdk compares ids: 50, 50.0 and
// 5e1 are one id) is answered -32600 here: the go-sdk would drop it without
// any answer, and the client would wait forever.
func (c *relayConn) handleLine(line []byte) bool {
	var arr, parr [8]rawjson.Member
	ms, ps, err := rawjson.Message(arr[:0], parr[:0], line)
	if err != nil {
		c.g.refusedLine(strictReason(err))
		c.WriteLine(strictError(err))
		return true
	}
	method, isRequest := rawjson.Find(ms, "method")
	if id, ok := rawjson.Find(ms, "id"); ok && isRequest {
		key, err := rawjson.IDKey(id.Value)
		if err != nil {
			c.g.refusedLine("invalid request id")
			c.WriteLine([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id must be a string or an integer"}}`))
			return true
		}
		c.mu.Lock()
		_, dup := c.pending[key]
		if !dup {
			c.pending[key] = nil
		}
		c.mu.Unlock()
		if dup {
			c.g.refusedLine(reasonDuplicateID)
			c.WriteLine(duplicateIDError(id.Value))
			return true
		}
	}
	switch string(method.Value) {
	case `"tools/call"`:
		if c.relay(ms, ps, line) {
			return true
		}
	case `"notifications/cancelled"`:
		if c.cancelRelayed(ms) {
			return true
		}
	case `"initialize"`:
		if id, ok := rawjson.Find(ms, "id"); ok {
			c.mu.Lock()
			c.initID = bytes.Clone(id.Value)
			c.mu.Unlock()
		}
		if caps, ok := rawjson.Find(ps, "capabilities"); ok && caps.Value[0] == '{' {
			b := bytes.Clone(caps.Value)
			c.caps.Store(&b)
		}
	}
	return false
}

// strictError is the answer to a message that fails the strict scan.
func strictError(err error) []byte {
	switch {
	case errors.Is(err, rawjson.ErrDuplicate):
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: duplicate or case-variant member names"}}`)
	case errors.Is(err, rawjson.ErrName):
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: member names must be ASCII, without escapes"}}`)
	case errors.Is(err, rawjson.ErrNotObject):
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be one JSON object"}}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
}

// duplicateIDError answers a request whose id is already in flight.
func duplicateIDError(id []byte) []byte {
	b := make([]byte, 0, 128+len(id))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return append(b, `,"error":{"code":-32600,"message":"invalid request: a request with this id is already in flight"}}`...)
}

// waitAnswered waits, up to timeout, until every client request has been
// answered (its response handed to the writer). A drain ends when handlers
// return, which is just before the go-sdk writes their answers; this closes
// that gap before the session is closed. It polls: it runs once, at shutdown.
func (c *relayConn) waitAnswered(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// done1 forgets a client request id once it is answered (or cancelled).
func (c *relayConn) done1(id []byte) {
	if key, err := rawjson.IDKey(id); err == nil {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}
}

// invalid answers a message that passed the strict scan but does not decode
// for the go-sdk server: valid JSON that is not a JSON-RPC message
// ("jsonrpc":"1.0", a method that is not a string). Its id, if any, is
// answered and freed, so it can neither be refused later nor grow the map.
func (c *relayConn) invalid(line []byte, _ error) {
	c.g.refusedLine("not a JSON-RPC 2.0 message")
	var arr [8]rawjson.Member
	ms, _ := rawjson.Members(arr[:0], line)
	if id, ok := rawjson.Find(ms, "id"); ok {
		if _, err := rawjson.IDKey(id.Value); err == nil {
			c.writeError(bytes.Clone(id.Value), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: not a JSON-RPC 2.0 message"})
			return
		}
	}
	c.WriteLine([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 message"}}`))
}

// relay starts a relayed tools/call if the request qualifies.
func (c *relayConn) relay(ms, ps []rawjson.Member, line []byte) bool {
	var ver string
	if v := c.version.Load(); v != nil {
		ver = *v
	}
	rr, ok := c.g.relayable(ms, ps, ver)
	id, name, args, ver, caps := rr.id, rr.name, rr.args, rr.version, rr.caps
	if p := c.caps.Load(); caps == nil && p != nil {
		caps = *p // the client's initialize's
	}
	if !ok || caps == nil {
		return false
	}
	ss := c.session()
	if ss == nil || c.g.levels.of(ss) != "" {
		// (A client that set a log level: the go-sdk path asks a server of
		// 2026-07-28 for its messages at that level, call by call.)
		return false
	}
	// The server's requests and log messages during the call go to this
	// client, before the result (conn.RawCall).
	r := sessionRequester{ss: ss}
	key, err := rawjson.IDKey(id.Value)
	if err != nil {
		return false
	}
	clientID := bytes.Clone(id.Value)
	// The request's span, from here to its answer (telemetry.go).
	parent, rs := c.g.startRelay(c.calls, ps, key, ver, "", telemetry.TransportPipe, rr.trace)
	end, ok := c.g.enter()
	if !ok {
		e := errShuttingDown("no new requests are accepted")
		c.writeError(clientID, e)
		c.g.endRelay(rs, e)
		return true
	}
	ctx, cancel := context.WithCancel(parent)
	c.setCancel(key, cancel)
	o := host.RelayOptions{ProtocolVersion: ver, Caps: caps, Requester: r, Asks: true, Trace: rr.trace}
	a := c.g.auditCall(ctx, audit.EventToolCall, name, "", "", len(args))
	ctx = a.with(ctx) // (the gate's decision, for the line)
	// What the call's end writes; on the upstream connection's read loop
	// when the call started there at once.
	finish := func(resp []byte, handled bool, err error) {
		defer func() {
			cancel()
			end()
		}()
		if handled {
			c.g.relayed.Add(1)
			a.done(err, len(resp)) // (else the go-sdk path writes the line)
		}
		switch {
		case c.g.aborted(c.ctx):
			e := errShuttingDown(fmt.Sprintf("the request was cancelled after the drain timeout (%s)", c.g.DrainTimeout()))
			c.writeError(clientID, e)
			c.g.endRelay(rs, e)
		case !handled:
			c.setCancel(key, nil) // the go-sdk handles it, and its cancellation
			if rs != nil {
				c.carry(key, rs) // (one request: its span goes on there)
			}
			c.Pass(line)
		case ctx.Err() != nil && c.ctx.Err() == nil && errors.Is(err, context.Canceled):
			// Cancelled by the client (cancelRelayed freed the id): no
			// response is sent.
			c.g.endRelay(rs, err)
		case err != nil:
			c.g.log.Warn("tool call failed", "tool", name, "error", err)
			c.writeResponse(clientID, errorResultJSON(err.Error()))
			c.g.endRelay(rs, err)
		default:
			if out, ok := rewriteResponse(resp, clientID); ok {
				c.done1(clientID)
				c.WriteLine(out)
				c.g.endRelayAnswer(rs, out)
			} else {
				c.writeResponse(clientID, errorResultJSON("invalid response from the server for "+name))
				c.g.endRelayWith(rs, telemetry.ErrorTypeToolError)
			}
		}
	}
	// At once from this read loop when nothing has to wait (no hand-over
	// to a worker, and the response written by the upstream's read loop),
	// else on a worker. (So a client that sends calls without ever reading
	// their answers stalls, once the pipes are full, its own calls to that
	// server and that server's other traffic to it: on stdio the gateway
	// has one client.)
	if c.g.h.Serving().RelayStart(ctx, name, args, o, func(resp []byte, handled bool, err error) {
		if !handled {
			// Passing it to the go-sdk must not wait on this read loop.
			c.run(func() { finish(resp, handled, err) })
			return
		}
		finish(resp, handled, err)
	}) {
		return true
	}
	c.run(func() {
		finish(c.g.h.Serving().RelayCall(ctx, name, args, o))
	})
	return true
}

// relayReq is what a tools/call request that may take the relay path is
// made of (see relayable).
type relayReq struct {
	id      rawjson.Member // the request's id member
	name    string         // the tool's canonical name
	args    []byte         // the raw arguments (nil: none)
	version string         // the client's protocol version
	caps    []byte         // the client's capabilities, as the request's _meta names them (nil: it does not)
	// trace are the request's W3C trace context members of _meta
	// (traceparent, tracestate, baggage) as encoded JSON members without
	// braces, or nil: sent upstream as they are when telemetry is off, the
	// parent of the request's span when it is on.
	trace []byte
}

// relayable reports whether a tools/call request may take the relay path:
// nothing about it needs the go-sdk (params hold just name, arguments,
// protocol-reserved _meta and W3C trace context: no progress token, no log
// level, no multi-round-trip state), its id is a string or a number, and
// its tool is served. The client's protocol version is ver unless the
// request's _meta names one. (r.id is set whenever the request has one.)
func (g *Gateway) relayable(ms, ps []rawjson.Member, ver string) (r relayReq, ok bool) {
	r.id, ok = rawjson.Find(ms, "id")
	if !ok || len(r.id.Value) == 0 || !(r.id.Value[0] == '"' || r.id.Value[0] == '-' || r.id.Value[0] >= '0' && r.id.Value[0] <= '9') {
		return r, false
	}
	if params, ok := rawjson.Find(ms, "params"); !ok || params.Value[0] != '{' {
		return r, false
	}
	var name string
	for _, p := range ps {
		switch string(p.Key) {
		case "name":
			if name, ok = rawjson.String(p.Value); !ok {
				return r, false
			}
		case "arguments":
			if p.Value[0] != '{' {
				return r, false
			}
			r.args = p.Value
		case "_meta":
			var marr [4]rawjson.Member
			metas, err := rawjson.Members(marr[:0], p.Value)
			if err != nil {
				return r, false
			}
			for _, m := range metas {
				if traceKey(m.Key) {
					if len(m.Value) == 0 || m.Value[0] != '"' {
						return r, false // (not a string: the go-sdk path decides)
					}
					if r.trace != nil {
						r.trace = append(r.trace, ',')
					}
					r.trace = append(append(append(append(r.trace, '"'), m.Key...), `":`...), m.Value...)
					continue
				}
				if !mcpmeta.IsReserved(string(m.Key)) || string(m.Key) == mcp.MetaKeyLogLevel {
					// A progress token, a log level (the server's messages
					// during the call go to the call's stream) or other
					// metadata: the go-sdk path handles it.
					return r, false
				}
				switch string(m.Key) {
				case mcp.MetaKeyProtocolVersion:
					if ver, ok = rawjson.String(m.Value); !ok {
						return r, false
					}
				case mcp.MetaKeyClientCapabilities:
					if m.Value[0] != '{' {
						return r, false
					}
					r.caps = m.Value
				case mcp.MetaKeyClientInfo:
					var info mcp.Implementation
					if m.Value[0] != '{' || json.Unmarshal(m.Value, &info) != nil {
						return r, false // (the go-sdk refuses it)
					}
				}
			}
		default:
			return r, false
		}
	}
	if name == "" || ver == "" {
		return r, false
	}
	if r.name, ok = g.canonicalTool(name); !ok {
		return r, false // the go-sdk answers: unknown tool
	}
	r.version = ver
	return r, true
}

// traceKey reports whether a _meta member is W3C trace context, which the
// MCP conventions of OpenTelemetry carry there.
func traceKey(k []byte) bool {
	switch string(k) {
	case "traceparent", "tracestate", "baggage":
		return true
	}
	return false
}

// errorResultJSON encodes a tools/call result with isError set and msg as
// its text.
func errorResultJSON(msg string) json.RawMessage {
	b, _ := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}})
	return b
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
func (c *relayConn) cancelRelayed(ms []rawjson.Member) bool {
	params, ok := rawjson.Find(ms, "params")
	if !ok {
		return false
	}
	ps, err := rawjson.Members(nil, params.Value)
	if err != nil {
		return false
	}
	rid, ok := rawjson.Find(ps, "requestId")
	if !ok {
		return false
	}
	key, err := rawjson.IDKey(rid.Value)
	if err != nil {
		return false
	}
	c.mu.Lock()
	cancel := c.pending[key]
	delete(c.pending, key)
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

// writeError answers a request with a JSON-RPC error.
func (c *relayConn) writeError(id []byte, e *jsonrpc.Error) {
	c.done1(id)
	c.WriteLine(errorJSON(id, e))
}

func (c *relayConn) writeResponse(id []byte, result json.RawMessage) {
	c.done1(id)
	c.WriteLine(resultJSON(id, result))
}

// errorJSON is the JSON-RPC error response to request id.
func errorJSON(id []byte, e *jsonrpc.Error) []byte {
	msg, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{e.Code, e.Message})
	b := make([]byte, 0, 40+len(id)+len(msg))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, msg...)
	return append(b, '}')
}

// resultJSON is the JSON-RPC response to request id with result.
func resultJSON(id []byte, result json.RawMessage) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// rewriteResponse puts the client's id into an upstream response and drops the
// upstream's protocol-reserved result _meta (its serverInfo): downstream, the
// gateway is the server. Everything else is passed through byte for byte.
func rewriteResponse(resp, clientID []byte) ([]byte, bool) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return nil, false
	}
	id, ok := rawjson.Find(ms, "id")
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(resp)+len(clientID))
	result, hasResult := rawjson.Find(ms, "result")
	if !hasResult || !mcpmeta.MayHave(result.Value) {
		out = append(out, resp[:id.Start]...)
		out = append(out, clientID...)
		return append(out, resp[id.End:]...), true
	}
	// Rebuild the envelope with a cleaned result.
	cleaned, ok := mcpmeta.StripRaw(result.Value)
	if !ok {
		return nil, false
	}
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, clientID...)
	out = append(out, `,"result":`...)
	out = append(out, cleaned...)
	return append(out, '}'), true
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
		if c.g.tel.Enabled() {
			c.answered(resp)
		}
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
	c.cancel()
	c.cancelCalls()
	c.wg.Wait()
	if c.g.tel.Enabled() {
		c.dropCarried()
	}
}

package conn

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// The notifications a server sends during a call — notifications/message and
// notifications/progress — belong to that call. The go-sdk client hands
// incoming notifications to their handlers asynchronously, after the read
// loop has moved on: a notification a server sends just before its response
// is often handled after the call has returned. Asking "which calls are in
// flight?" in the handler then gets the wrong answer (a caller's log message
// went to every client; a call's last progress notification was lost).
//
// So the question is asked where the answer is still true: when the
// notification is read. Each is routed there — to a call (by its progress
// token; over streamable HTTP, by the call whose response stream carries it;
// otherwise by the calls in flight when it arrived) — and the route rides
// along in the notification's _meta under routeKey, which the handler takes
// out again. A call waits, after its response, until the notifications routed
// to it were handled (at most drainWait), so they reach its caller before
// its result does.

// routeKey is the _meta member that carries a notification's route from the
// read loop to its handler. A server's own value is always removed.
const routeKey = "dev.mcphost/route"

// drainWait bounds how long a call waits for the notifications routed to it
// (one whose handler never runs, e.g. params that do not decode, costs its
// call this much).
const drainWait = time.Second

// maxRoutes bounds the routes awaiting their handler (notifications the
// go-sdk drops never take theirs).
const maxRoutes = 4096

// call is a call in flight, for the notifications it causes.
type call struct {
	server   string                                // the server it was sent to
	r        Requester                             // who answers for it; nil: the host's own callbacks
	progress func(*mcp.ProgressNotificationParams) // nil: progress not asked for

	pending atomic.Int64  // notifications routed to it, not yet handled
	handled chan struct{} // a notification of it was handled (capacity 1)
	// cancel ends the call's context (set before it is in flight); a
	// reload's drain deadline cancels the calls still in flight with it.
	cancel context.CancelCauseFunc
	// taskStatus receives the status notifications of a tasks request's
	// stream (WithTaskStatus); nil: the connection's receivers do.
	taskStatus func(json.RawMessage)
}

func newCall(server string, r Requester, progress func(*mcp.ProgressNotificationParams)) *call {
	return &call{server: server, r: r, progress: progress, handled: make(chan struct{}, 1)}
}

// progressCall returns the call of a progress token, if it is one of the
// calls this connection's server was sent: a token names a call of the
// Manager, and a server must not report progress on another server's call.
func (c *Conn) progressCall(token any) *call {
	v, ok := c.m.progress.Load(fmt.Sprint(token))
	if !ok {
		return nil
	}
	if fc := v.(*call); fc.server == c.cfg.Name {
		return fc
	}
	c.log.Debug("a progress notification names a call of another server: dropped")
	return nil
}

// done1 records that a notification routed to the call was handled.
func (c *call) done1() {
	c.pending.Add(-1)
	select {
	case c.handled <- struct{}{}:
	default:
	}
}

// drain waits until the notifications routed to the call were handled, at
// most drainWait or until ctx ends.
func (c *call) drain(ctx context.Context) {
	if c.pending.Load() <= 0 {
		return
	}
	t := time.NewTimer(drainWait)
	defer t.Stop()
	for c.pending.Load() > 0 {
		select {
		case <-c.handled:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// callKey is the context key of the call a request is sent for (read by the
// streamable HTTP response tagger).
type callKey struct{}

// route is where a notification goes.
type route struct {
	call      *call // the call it belongs to; nil: none
	ambiguous bool  // calls of several clients were in flight (a log message)
}

// routes are the routes of the notifications read and not yet handled, by
// the tag their _meta carries.
type routes struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]route
}

func (rs *routes) add(rt route) uint64 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[uint64]route{}
	}
	rs.next++
	rs.m[rs.next] = rt
	if len(rs.m) > maxRoutes {
		for tag := range rs.m {
			if tag <= rs.next-maxRoutes {
				delete(rs.m, tag)
			}
		}
	}
	return rs.next
}

// take removes the route's tag from meta and returns the route; ok is false
// for a notification that carries none (routed nowhere).
func (rs *routes) take(meta mcp.Meta) (rt route, ok bool) {
	v, found := meta[routeKey]
	if !found {
		return route{}, false
	}
	delete(meta, routeKey)
	s, _ := v.(string)
	tag, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return route{}, false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rt, ok = rs.m[tag]
	delete(rs.m, tag)
	return rt, ok
}

// inflight are a connection's calls in flight.
type inflight struct {
	mu    sync.Mutex
	calls map[*call]struct{}
	// closed: the connection, a further second session, was closed for
	// good (legacy.go): addAlone adds no call.
	closed bool
}

// empty reports whether no call is in flight.
func (f *inflight) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls) == 0
}

// closeIfEmpty closes f (addAlone adds no call from now on) if no call is
// in flight, in one step with the check, and reports whether it did.
func (f *inflight) closeIfEmpty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		f.closed = true
	}
	return f.closed
}

// freeFor reports whether every call in flight with a Requester belongs to
// client (and f is open): whether addAlone would add a call of client.
func (f *inflight) freeFor(client any) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	for fc := range f.calls {
		if fc.r != nil && clientOf(fc.r) != client {
			return false
		}
	}
	return true
}

// cancelAll cancels every call in flight, with cause.
func (f *inflight) cancelAll(cause error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.calls {
		if c.cancel != nil {
			c.cancel(cause)
		}
	}
}

func (f *inflight) add(c *call) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(c)
}

// insert adds c; the caller holds f.mu.
func (f *inflight) insert(c *call) (remove func()) {
	if f.calls == nil {
		f.calls = map[*call]struct{}{}
	}
	f.calls[c] = struct{}{}
	return func() {
		f.mu.Lock()
		delete(f.calls, c)
		f.mu.Unlock()
	}
}

// addAlone adds c if every call in flight with a Requester belongs to c's
// client and f is open (ok), in one step with the check.
func (f *inflight) addAlone(c *call) (remove func(), ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, false
	}
	if c.r != nil {
		client := clientOf(c.r)
		for fc := range f.calls {
			if fc.r != nil && clientOf(fc.r) != client {
				return nil, false
			}
		}
	}
	return f.insert(c), true
}

// only returns a call of the one client with calls in flight (calls with a
// Requester); ok is false when calls of several clients are in flight, c is
// nil when there is none.
func (f *inflight) only() (c *call, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var client any
	for fc := range f.calls {
		if fc.r == nil {
			continue
		}
		switch cl := clientOf(fc.r); {
		case c == nil:
			c, client = fc, cl
		case cl != client:
			return nil, false
		}
	}
	return c, true
}

// routeNote routes a notification read from the server: a log message to
// the call it belongs to (on, when the transport knows it, else the calls in
// flight), a progress notification to the call of its token. It returns
// the message with its route in _meta, and any route a server put there
// removed (changed: a new message). An elicitation/create has its schema
// moved (see schema.go), a tools/list result its tools' "execution"
// (execution.go); other messages are returned as they are.
func (c *Conn) routeNote(msg jsonrpc.Message, on *call) (out jsonrpc.Message, changed bool) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if !c.toolsLists.answered(resp) {
			return resp, false // (a tools/call's, a resources/read's…: not decoded)
		}
		return responseExecution(resp) // (tools' "execution": execution.go)
	}
	req, ok := msg.(*jsonrpc.Request)
	if ok && req.IsCall() {
		switch req.Method {
		case "elicitation/create", "sampling/createMessage", "roots/list":
			return c.routeRequest(req, on)
		}
	}
	if !ok || req.IsCall() {
		return msg, false
	}
	var rt route
	switch req.Method {
	case "notifications/message":
		rt.call = on
		if on == nil && c.cfg.Transport != config.TransportHTTP {
			var only bool
			rt.call, only = c.inflight.only()
			rt.ambiguous = !only
		}
	case "notifications/progress":
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.Token != nil {
			rt.call = c.progressCall(p.Token)
		}
	case MethodTaskStatus:
		c.callTaskStatus(req.Params, on) // (the go-sdk client drops it: tasknotes.go)
		return msg, false
	default:
		return msg, false
	}
	var tag uint64
	if rt.call != nil || rt.ambiguous {
		tag = c.routes.add(rt)
		if rt.call != nil {
			rt.call.pending.Add(1)
		}
	}
	params, ok := withRoute(req.Params, tag)
	if !ok {
		if tag != 0 {
			c.routes.take(mcp.Meta{routeKey: strconv.FormatUint(tag, 10)})
			if rt.call != nil {
				rt.call.done1()
			}
		}
		return msg, false
	}
	if tag == 0 && len(params) == len(req.Params) && string(params) == string(req.Params) {
		return msg, false
	}
	cp := *req
	cp.Params = params
	return &cp, true
}

// routeRequest routes a request of the server's own (elicitation,
// sampling, roots) read on the response stream of the call on: it goes to
// that call's Requester (requesterFor), whatever other clients' calls are
// in flight. Read elsewhere (on nil: a stdio server's, one on the
// standalone stream), it carries no route and goes to the Requester of the
// calls in flight (requester). A route the server put there is removed
// either way. An elicitation/create has its schema moved (schema.go).
func (c *Conn) routeRequest(req *jsonrpc.Request, on *call) (jsonrpc.Message, bool) {
	out, changed := req, false
	if req.Method == "elicitation/create" {
		out, changed = hideSchema(req)
	}
	var tag uint64
	if on != nil {
		tag = c.routes.add(route{call: on})
	}
	in := out.Params
	if tag != 0 && (len(in) == 0 || string(in) == "null") {
		in = json.RawMessage(`{}`) // (a roots/list without params)
	}
	params, ok := withRoute(in, tag)
	if !ok {
		if tag != 0 {
			c.routes.take(mcp.Meta{routeKey: strconv.FormatUint(tag, 10)})
		}
		return out, changed
	}
	if string(params) == string(out.Params) {
		return out, changed
	}
	cp := *out
	cp.Params = params
	return &cp, true
}

// withRoute returns params with _meta[routeKey] set to tag (removed when tag
// is 0). ok is false if params is not a JSON object (the go-sdk rejects the
// notification then).
func withRoute(params json.RawMessage, tag uint64) (json.RawMessage, bool) {
	return editParams(params, func(obj, meta map[string]json.RawMessage) (changed, ok bool) {
		if _, found := obj["_meta"]; !found && tag == 0 {
			return false, true
		}
		// (Re-encoded whenever _meta is present: a duplicate _meta member
		// is dropped with any route it holds.)
		delete(meta, routeKey)
		if tag != 0 {
			meta[routeKey] = json.RawMessage(`"` + strconv.FormatUint(tag, 10) + `"`)
		}
		return true, true
	})
}

// routingTransport routes the notifications read from its connections (see
// routeNote): every transport but streamable HTTP, which routes in its HTTP
// client instead (sseRouter), its connection's optional interfaces being
// the go-sdk's own.
type routingTransport struct {
	mcp.Transport
	c *Conn
}

func (t routingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &routingConn{Connection: conn, c: t.c}, nil
}

type routingConn struct {
	mcp.Connection
	c *Conn
	// opening counts the responses read until the initialize's (its
	// capabilities are read: tasks.go), the first two or three (a
	// server/discover the server refused may come first); done once it
	// was read. Read has one caller at a time.
	opening int
	opened  bool
}

func (r *routingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	r.c.toolsLists.sent(msg) // (before it is written: its response may come at once)
	return r.Connection.Write(ctx, msg)
}

func (r *routingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := r.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && !r.opened && r.opening < 3 {
		r.opening++
		r.opened = r.c.noteCapabilities(resp.Result)
	}
	msg, _ = r.c.routeNote(msg, nil)
	return msg, nil
}

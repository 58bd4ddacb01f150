package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// The raw lane: beside the go-sdk client on a server's connection, the
// gateway's relay sends tools/call requests it encoded itself and gets the
// server's response bytes back without decoding them (see Manager.CallRaw).
// A stdio server's and a plugin transport's connection are one stream of
// messages, shared with the go-sdk client: rawLane picks the raw calls'
// responses out of it by their ids. A streamable HTTP server answers each
// call on its own request (httpLane).

// rawIDPrefix starts the ids of requests sent on the raw lane; the go-sdk
// client numbers its own requests, so the two never collide.
const rawIDPrefix = "mcphost-raw-"

// rawStarter is a connection's raw lane.
type rawStarter interface {
	// StartRaw sends tools/call for rc.Tool with the raw JSON arguments
	// rc.Args (nil for none) and calls done once, with the server's raw
	// response (done must not block on this connection), or with the error
	// that ended the call: ctx's, when it ends first (the server is then
	// sent notifications/cancelled), errTransportClosed when the connection
	// is lost, errRawRefused when the server refused the request before
	// acting on it and the go-sdk client should send it instead; other
	// errors fail the call only. caps, if
	// set, are the capabilities of the client the call is made for, as the
	// JSON object the request's _meta carries (NewProtocol; else the go-sdk
	// client's own go in the _meta as captured). fc is the call in flight.
	// StartRaw returns an error, and done is never called, when nothing was
	// sent: mcp.ErrConnectionClosed if the connection was lost before.
	StartRaw(ctx context.Context, req rawRequest, done func(resp []byte, err error)) error
}

// rawRequest is one raw call.
type rawRequest struct {
	tool       string
	args, caps []byte
	// method, when set, is the method of a request other than tools/call
	// (Manager.Request), and params the members of its params (without
	// braces); tool is then what the request names (a task id: the
	// Mcp-Name header of NewProtocol), args unused.
	method string
	params []byte
	// task is the task parameter of a tools/call (2025-11-25; nil: none).
	task []byte
	// trace are _meta members carrying the trace context (encoded JSON
	// members, without braces), or nil.
	trace []byte
	fc    *call
	// wait says that the caller blocks until done is called (CallRaw): a
	// lane that makes each call on a goroutine of its own (httpLane) makes
	// it on the caller's instead, and calls done before StartRaw returns —
	// one goroutine and one hand-over less per call.
	wait bool
}

// errRawRefused ends a raw call the server refused before acting on it
// (e.g. an HTTP 401 or 404): the go-sdk client sends it instead, handling
// what made the server refuse it.
var errRawRefused = errors.New("the server refused the relayed request")

// rawMeta holds the protocol-reserved _meta members
// ("io.modelcontextprotocol/…") that the go-sdk client puts on its requests,
// captured from the first request that carries them, so that raw requests
// carry the same.
type rawMeta struct {
	once   sync.Once
	meta   atomic.Pointer[[]byte]
	noCaps atomic.Pointer[[]byte] // meta without the client capabilities
	nextID atomic.Uint64
}

// written captures the reserved _meta of a request the go-sdk client sends.
func (m *rawMeta) written(msg jsonrpc.Message) {
	// (Not from initialize or server/discover: they precede the version's
	// choice, and the go-sdk client tries server/discover, at its newest
	// version, with a server it then initializes at an earlier one.)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method != "initialize" && req.Method != "server/discover" {
		m.once.Do(func() {
			// (Not the log level: each request sends its own.)
			meta := mcpmeta.Without(mcpmeta.Reserved(req.Params), mcp.MetaKeyLogLevel)
			nc := mcpmeta.Without(meta, mcp.MetaKeyClientCapabilities)
			m.noCaps.Store(&nc)
			m.meta.Store(&meta)
		})
	}
}

// captured reports whether the _meta was captured.
func (m *rawMeta) captured() bool { return m.meta.Load() != nil }

// request encodes a raw call under a new id: the id as a JSON string, and
// the message.
func (m *rawMeta) request(req rawRequest) (id string, msg []byte) {
	var ib [48]byte
	idb := append(append(ib[:0], '"'), rawIDPrefix...)
	idb = append(strconv.AppendUint(idb, m.nextID.Add(1), 10), '"')
	id = string(idb)
	var nb [64]byte
	name := appendJSONString(nb[:0], req.tool)
	var meta []byte
	if p := m.meta.Load(); p != nil {
		meta = *p
	}
	if req.caps != nil {
		if p := m.noCaps.Load(); p != nil {
			meta = *p
		}
	}
	if req.method != "" {
		return id, wire.MethodRequest(idb, req.method, req.params, meta, req.caps, req.trace)
	}
	if req.task != nil {
		members := append(append([]byte(`"name":`), name...), `,"task":`...)
		members = append(members, req.task...)
		if len(req.args) > 0 {
			members = append(append(members, `,"arguments":`...), req.args...)
		}
		return id, wire.MethodRequest(idb, "tools/call", members, meta, req.caps, req.trace)
	}
	return id, wire.CallRequest(idb, name, req.args, meta, req.caps, req.trace)
}

// appendJSONString appends s encoded as encoding/json encodes it: as it
// is between quotes when it needs no escape (printable ASCII but for the
// quote, the backslash and the HTML characters encoding/json escapes),
// else by encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	return append(append(append(dst, '"'), s...), '"')
}

// cancelled is the notifications/cancelled of a raw call's id.
func cancelled(id string) []byte { return wire.Cancelled([]byte(id), "cancelled by the client") }

// rawLane is the raw lane of a connection that is one stream of messages
// shared with the go-sdk client (stdio, plugin transports): write sends one
// message; the connection's reader hands every message to response first.
type rawLane struct {
	rawMeta
	write func(msg []byte) error

	mu      sync.Mutex
	pending map[string]*rawWaiter // nil once the read loop ended
	readErr error                 // why it ended
}

func newRawLane(write func([]byte) error) *rawLane {
	return &rawLane{write: write, pending: map[string]*rawWaiter{}}
}

// response hands a raw call's response to its waiter and reports whether
// it did; every other message goes, decoded, to the go-sdk.
func (l *rawLane) response(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r\n") // (a plugin's message may start so)
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, []byte(rawIDPrefix)) {
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
	l.mu.Lock()
	w := l.pending[string(id.Value)] // (no copy of the id: see take)
	delete(l.pending, string(id.Value))
	l.mu.Unlock()
	if w == nil {
		return false
	}
	w.finish(oneLine(line), nil) // (a plugin's message may span lines)
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
func (l *rawLane) take(id string) *rawWaiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.pending[id]
	delete(l.pending, id)
	return w
}

// fail records that the connection's read loop ended with err: pending raw
// calls end with errTransportClosed, and later ones are refused.
func (l *rawLane) fail(err error) {
	l.mu.Lock()
	l.readErr = err
	ws := make([]*rawWaiter, 0, len(l.pending))
	for _, w := range l.pending {
		ws = append(ws, w)
	}
	l.pending = nil
	l.mu.Unlock()
	if len(ws) > 0 {
		// Not on the read loop: a waiter may close the session, which
		// waits for the read loop to end. Ends once every waiter is told.
		go func() {
			for _, w := range ws {
				w.finish(nil, errTransportClosed)
			}
		}()
	}
}

// StartRaw implements rawStarter.
func (l *rawLane) StartRaw(ctx context.Context, req rawRequest, done func(resp []byte, err error)) error {
	id, msg := l.request(req)
	w := &rawWaiter{done: done}
	l.mu.Lock()
	if l.pending == nil {
		// Nothing written: refused as the go-sdk refuses a session call.
		err := l.readErr
		l.mu.Unlock()
		return fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, err)
	}
	l.pending[id] = w
	l.mu.Unlock()
	if err := l.write(msg); err != nil {
		if l.take(id) != nil {
			return fmt.Errorf("%w: %v", errTransportClosed, err)
		}
		return nil // the loss of the connection ended it (done was called)
	}
	stop := context.AfterFunc(ctx, func() {
		if w := l.take(id); w != nil {
			l.write(cancelled(id))
			w.done(nil, ctx.Err())
		}
	})
	l.mu.Lock()
	if l.pending[id] == w {
		w.stop = stop
	}
	l.mu.Unlock()
	return nil
}

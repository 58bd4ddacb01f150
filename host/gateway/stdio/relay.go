package stdio

import (
	"bytes"
	"context"
	"errors"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/telemetry"
)

// relay starts a relayed tools/call if the request qualifies.
func (c *relayConn) relay(m *wire.Message, line []byte) bool {
	var ver string
	if v := c.version.Load(); v != nil {
		ver = *v
	}
	rr, ok := c.g.Relayable(m, ver)
	caps := rr.Caps
	if p := c.caps.Load(); caps == nil && p != nil {
		caps = *p // the client's initialize's
	}
	if !ok || caps == nil {
		return false
	}
	ss := c.session()
	if ss == nil || c.g.SessionLogLevel(ss) != "" {
		// (A client that set a log level: the go-sdk path asks a server of
		// 2026-07-28 for its messages at that level, call by call.)
		return false
	}
	key, err := m.IDKey()
	if err != nil {
		return false
	}
	clientID := bytes.Clone(rr.ID)
	// The request's span, from here to its answer.
	parent, span := c.g.StartRelaySpan(c.calls, m, key, rr.Version, "", telemetry.TransportPipe, rr.Trace)
	sr := &stdioRelay{c: c, key: key, line: line, task: rr.Task != nil}
	// The server's requests and log messages during the call go to this
	// client, before the result (conn.RawCall).
	c.g.InitRelay(&sr.Relay, gateway.RelaySpec{Front: sr, Name: rr.Name, Args: rr.Args, ClientID: clientID, Span: span, Async: true,
		Options: host.RelayOptions{ProtocolVersion: rr.Version, Caps: caps, Requester: c.g.SessionRequester(ss), Asks: true, Trace: rr.Trace}})
	if !sr.Enter() {
		sr.RefuseDraining()
		return true
	}
	ctx, cancel := context.WithCancel(parent)
	c.setCancel(key, cancel)
	sr.cancel = cancel
	sr.SetTask(rr.Task)
	sr.Start(ctx, "", "")
	return true
}

// stdioRelay is a call relayed on the stdio connection c: the
// gateway.RelayFront of its gateway.Relay.
type stdioRelay struct {
	gateway.Relay
	c    *relayConn
	key  string // the request's IDKey
	line []byte // the request, for the go-sdk if the raw lane does not take it
	// task: the request has a task parameter (2025-11-25), which, if the
	// raw lane does not take it, goes in its _meta for the go-sdk path
	// (CarryTask: only then, the request re-encoded).
	task bool
	// cancel releases the call's context.
	cancel context.CancelFunc
}

func (sr *stdioRelay) Answer(msg []byte) {
	sr.c.forget(sr.key)
	sr.c.WriteLine(msg)
}

// Unanswered: the client cancelled the call (cancelRelayed freed its id).
func (sr *stdioRelay) Unanswered() {}

func (sr *stdioRelay) Pass(span gateway.RelaySpan) bool {
	if sr.Aborted() {
		sr.RefuseAborted(span)
		return true
	}
	sr.c.setCancel(sr.key, nil) // the go-sdk handles it, and its cancellation
	sr.c.carry(sr.key, span)    // (one request: its span goes on there)
	line := sr.line
	if sr.task {
		line = sr.c.carryTask(line)
	}
	sr.c.Pass(line)
	return false
}

func (sr *stdioRelay) Aborted() bool { return sr.c.g.Aborted(sr.c.ctx) }

func (sr *stdioRelay) Cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && sr.c.ctx.Err() == nil && errors.Is(err, context.Canceled)
}

func (sr *stdioRelay) Run(f func()) { sr.c.run(f) }

func (sr *stdioRelay) Ended() {
	if sr.cancel != nil { // (nil: refused while draining, never started)
		sr.cancel()
	}
}

// carryTask returns line, a relayed tools/call with a task parameter, with
// that parameter in its _meta for the go-sdk path (gateway.CarryTaskOf).
func (c *relayConn) carryTask(line []byte) []byte {
	if c.hooks.carried != nil {
		c.hooks.carried()
	}
	out, _ := gateway.CarryTaskOf(line)
	return out
}

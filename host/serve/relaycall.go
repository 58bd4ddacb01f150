package serve

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/telemetry"
)

// One relayed tools/call's lifecycle, the same for both fronts (stdio:
// relay.go, streamable HTTP: httprelay.go): the front parses the request
// and decides it may be relayed (relayable), starts its span and
// registers it with the drain; then relayCall writes its audit line, calls
// the upstream (host.RelayStart or host.RelayCall) and ends it — aborted at
// the drain deadline, not taken by the raw lane (passed to the go-sdk),
// cancelled by its client, failed, or answered with the upstream's response
// under the client's id. What differs between the fronts is behind
// relayFront. (No net/http here: this moves into host/gateway.)

// relayFront is what a front does for one relayed call.
type relayFront interface {
	// answer writes msg, the call's JSON-RPC response.
	answer(msg []byte)
	// unanswered ends a call its client cancelled or left: no response.
	unanswered()
	// pass hands a call the raw lane did not take to the go-sdk server
	// with its span (nil without telemetry), and reports false; or
	// answers it here, reporting true.
	pass(rs *relaySpan) (answered bool)
	// aborted reports whether the call was cut short at the drain
	// deadline.
	aborted() bool
	// cancelled reports whether the call, with context ctx, ended with
	// err because its client cancelled it (or, over HTTP, went away).
	cancelled(ctx context.Context, err error) bool
	// run runs f apart from the caller, on a worker (for a call that
	// ends apart from its start: relayCall.async).
	run(f func())
	// ended runs once the call has ended, however it ended.
	ended()
}

// relayCall is one relayed tools/call from its upstream call to its answer.
type relayCall struct {
	g        *Gateway
	front    relayFront
	name     string // the tool's canonical name
	args     []byte
	clientID []byte
	opts     host.RelayOptions
	rs       *relaySpan // its span (nil without telemetry)
	audit    *callAudit
	ctx      context.Context // the call's, once started
	// async ends the call apart from its start (stdio: the answer is
	// written on the upstream's read loop or a worker); else start waits
	// for it (HTTP: the handler writes the answer).
	async bool
}

// refuseRelay answers a relayed call refused before its upstream call
// (the gateway drains) with e.
func (g *Gateway) refuseRelay(front relayFront, clientID []byte, rs *relaySpan, e *jsonrpc.Error) {
	front.answer(wire.Error(clientID, e.Code, e.Message, nil))
	g.endRelay(rs, e)
}

// start writes the call's audit line (for session and remote, if known),
// calls the upstream under ctx and ends the call with its answer, then
// runs front.ended. An async call starts here and ends on the upstream
// connection's read loop when it can (host.RelayStart), else on a worker
// (front.run); another ends before start returns. answered is false when
// the call was passed to the go-sdk server (only known at once for a call
// that is not async).
func (c *relayCall) start(ctx context.Context, session, remote string) (answered bool) {
	c.audit = c.g.auditCall(ctx, audit.EventToolCall, c.name, session, remote, len(c.args))
	ctx = c.audit.with(ctx) // (the gate's decision, for the line)
	c.ctx = ctx
	if !c.async {
		return c.end(c.g.h.Serving().RelayCall(ctx, c.name, c.args, c.opts))
	}
	// At once from the caller's read loop when nothing has to wait (no
	// hand-over to a worker, and the response written by the upstream's
	// read loop), else on a worker. (So a client that sends calls without
	// ever reading their answers stalls, once the pipes are full, its own
	// calls to that server and that server's other traffic to it: on
	// stdio the gateway has one client.)
	if c.g.h.Serving().RelayStart(ctx, c.name, c.args, c.opts, func(resp []byte, handled bool, err error) {
		if !handled {
			// Passing it to the go-sdk must not wait on this read loop.
			c.front.run(func() { c.end(resp, handled, err) })
			return
		}
		c.end(resp, handled, err)
	}) {
		return true
	}
	c.front.run(func() {
		c.end(c.g.h.Serving().RelayCall(ctx, c.name, c.args, c.opts))
	})
	return true
}

// end ends the call with the upstream's answer (handled false: the raw
// lane did not take it), then runs front.ended, and reports whether the
// call was answered here.
func (c *relayCall) end(resp []byte, handled bool, err error) (answered bool) {
	defer c.front.ended()
	return c.finish(c.ctx, resp, handled, err)
}

// finish is end but for front.ended.
func (c *relayCall) finish(ctx context.Context, resp []byte, handled bool, err error) (answered bool) {
	if !handled {
		return c.front.pass(c.rs) // (the go-sdk path writes the audit line)
	}
	c.g.relayed.Add(1)
	c.audit.done(err, len(resp))
	switch {
	case c.front.aborted():
		c.g.refuseRelay(c.front, c.clientID, c.rs, errShuttingDown(fmt.Sprintf("the request was cancelled after the drain timeout (%s)", c.g.DrainTimeout())))
	case c.front.cancelled(ctx, err):
		// Cancelled by the client, or the client went away: no response
		// is sent.
		c.front.unanswered()
		c.g.endRelay(c.rs, err)
	case err != nil:
		c.g.log.Warn("tool call failed", "tool", c.name, "error", err)
		c.front.answer(wire.Result(c.clientID, wire.ErrorResult(err.Error())))
		c.g.endRelay(c.rs, err)
	default:
		out, ok := wire.RewriteResponse(resp, c.clientID)
		if !ok {
			c.front.answer(wire.Result(c.clientID, wire.ErrorResult("invalid response from the server for "+c.name)))
			c.g.endRelayWith(c.rs, telemetry.ErrorTypeToolError)
			return true
		}
		c.front.answer(out)
		c.g.endRelayAnswer(c.rs, out)
	}
	return true
}

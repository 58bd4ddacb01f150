package gateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/telemetry"
)

// One relayed tools/call's lifecycle, the same for both fronts (stdio:
// host/gateway/stdio, streamable HTTP: httprelay.go): the front parses the request
// and decides it may be relayed (Relayable), starts its span and
// registers it with the drain; then relayCall writes its audit line, calls
// the upstream (host.RelayStart or host.RelayCall) and ends it — aborted at
// the drain deadline, not taken by the raw lane (passed to the go-sdk),
// cancelled by its client, failed, or answered with the upstream's response
// under the client's id. What differs between the fronts is behind
// RelayFront. (No net/http here: this moves into host/gateway.)

// relayCall is one relayed tools/call from its upstream call to its answer.
type relayCall struct {
	g        *Gateway
	front    RelayFront
	name     string // the tool's canonical name
	args     []byte
	clientID []byte
	opts     host.RelayOptions
	rs       *relaySpan // its span (nil without telemetry)
	audit    *callAudit
	ctx      context.Context // the call's, once started
	// info carries the call's CallInfo for its checks (inCallInfo).
	info host.CallContext
	// async ends the call apart from its start (stdio: the answer is
	// written on the upstream's read loop or a worker); else start waits
	// for it (HTTP: the handler writes the answer).
	async bool
	// entered: the call is registered with the drain (Relay.Enter), and
	// leaves it when it ends.
	entered bool
}

// refuseRelay answers a relayed call refused before its upstream call
// (the gateway drains) with e.
func (g *Gateway) refuseRelay(front RelayFront, clientID []byte, rs *relaySpan, e *jsonrpc.Error) {
	front.Answer(wire.Error(clientID, e.Code, e.Message, nil))
	g.endRelay(rs, e)
}

// start writes the call's audit line (for session and remote, if known),
// calls the upstream under ctx and ends the call with its answer, then
// runs front.Ended. An async call starts here and ends on the upstream
// connection's read loop when it can (host.RelayStart), else on a worker
// (front.Run); another ends before start returns. answered is false when
// the call was passed to the go-sdk server (only known at once for a call
// that is not async).
func (c *relayCall) start(ctx context.Context, session, remote string) (answered bool) {
	// (The stdio front's calls are the async ones: their answers are
	// written on a read loop or a worker; the HTTP front's handler waits.)
	front := host.FrontHTTP
	if c.async {
		front = host.FrontStdio
	}
	ctx = c.g.inCallInfo(&c.info, ctx, session, front) // (for the call's hooks and interceptors)
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
			c.front.Run(func() { c.end(resp, handled, err) })
			return
		}
		c.end(resp, handled, err)
	}) {
		return true
	}
	c.front.Run(func() {
		c.end(c.g.h.Serving().RelayCall(ctx, c.name, c.args, c.opts))
	})
	return true
}

// end ends the call with the upstream's answer (handled false: the raw
// lane did not take it), then runs front.Ended, and reports whether the
// call was answered here.
func (c *relayCall) end(resp []byte, handled bool, err error) (answered bool) {
	defer c.ended()
	return c.finish(c.ctx, resp, handled, err)
}

// ended runs front.Ended, then takes the call out of the drain if it
// entered it (Relay.Enter).
func (c *relayCall) ended() {
	c.front.Ended()
	if c.entered {
		c.g.calls.done()
	}
}

// finish is end but for front.Ended.
func (c *relayCall) finish(ctx context.Context, resp []byte, handled bool, err error) (answered bool) {
	if !handled {
		return c.front.Pass(RelaySpan{c.rs}) // (the go-sdk path writes the audit line)
	}
	c.g.relayed.Add(1)
	c.audit.done(err, len(resp))
	switch {
	case c.front.Aborted():
		c.g.refuseRelay(c.front, c.clientID, c.rs, errAborted(c.g))
	case c.front.Cancelled(ctx, err):
		// Cancelled by the client, or the client went away: no response
		// is sent.
		c.front.Unanswered()
		c.g.endRelay(c.rs, err)
	case err != nil:
		if e, ok := refusalRPC(err); ok {
			// Refused by a check with a code (validate_input: -32602).
			c.front.Answer(wire.Error(c.clientID, e.Code, e.Message, nil))
			c.g.endRelay(c.rs, e)
			return true
		}
		if !errors.Is(err, intercept.ErrRefused) { // (a refusal is no failure: its reason is the answer)
			c.g.log.Warn("tool call failed", "tool", c.name, "error", err)
		}
		c.front.Answer(wire.Result(c.clientID, wire.ErrorResult(err.Error())))
		c.g.endRelay(c.rs, err)
	default:
		out, ok := wire.RewriteResponse(resp, c.clientID)
		if !ok {
			c.front.Answer(wire.Result(c.clientID, wire.ErrorResult("invalid response from the server for "+c.name)))
			c.g.endRelayWith(c.rs, telemetry.ErrorTypeToolError)
			return true
		}
		c.front.Answer(out)
		c.g.endRelayAnswer(c.rs, out)
	}
	return true
}

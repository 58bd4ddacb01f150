package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
)

// RelayOptions says for whom Serving.RelayCall makes a call.
type RelayOptions struct {
	// ProtocolVersion is the client's.
	ProtocolVersion string
	// Caps are the client's capabilities (the JSON object of a 2026-07-28
	// request's _meta "io.modelcontextprotocol/clientCapabilities"): the
	// server is offered only those. nil offers this host's.
	Caps []byte
	// Requester gets what the server sends during the call; Asks: it can
	// put the server's own requests to the client (see conn.RawCall).
	Requester conn.Requester
	Asks      bool
	// Trace are the W3C trace context members of the client's request's
	// _meta (encoded JSON members without braces: "traceparent":"00-…"),
	// sent upstream as they are when telemetry is off; with telemetry on,
	// the upstream request carries the host's own span's context instead.
	Trace []byte
	// Tasks names the tasks the server creates (conn.RawCall.Tasks).
	Tasks conn.TaskIDs
	// Task is the task parameter of a 2025-11-25 task-augmented call
	// (conn.RawCall.Task).
	Task []byte
}

// RelayCall is the gateway's fast path for tools/call. It resolves name like
// CallTool, and if the tool's server has a raw lane (stdio, streamable HTTP,
// plugin transports) that can take the call (see conn.Manager.CallRaw),
// sends the call with the raw JSON arguments and returns the server's raw
// JSON-RPC response without decoding it. A response long
// enough that its text could exceed MaxResultChars is decoded and processed as
// in CallTool, then re-encoded.
//
// o says for whom the call is made (see RelayOptions).
//
// handled is false when the call cannot take this path; the caller then
// uses CallTool (see conn.Manager.CallRaw for the one case where the call
// was sent). With handled true, either resp or err is set.
func (s *Serving) RelayCall(ctx context.Context, name string, args json.RawMessage, o RelayOptions) (resp []byte, handled bool, err error) {
	h := s.h
	server, _, ok := registry.ParseName(name)
	g, err := h.gate(ctx, name, server, ok, false, 0, gateNoPerson, callArgs{raw: args})
	if err != nil {
		return nil, false, nil // CallTool reports it, asks, refuses or logs in
	}
	var span telemetry.Span
	if h.tel.Enabled() {
		ctx, span = h.tel.StartToolCall(ctx, g.tool.Server, name)
	}
	// The relay asks for no progress, so tool_timeout bounds the whole call
	// (max_tool_duration is never shorter): by a timer on the raw call's
	// own context (conn.RawCall.Timeout), not a context here.
	rc := h.rawCall(ctx, g, args, o)
	rc.Timeout, rc.TimeoutCause = g.idle, errIdle
	g.started()
	resp, handled, err = h.conns.CallRaw(ctx, g.tool.Server, rc) // on another session, CallTool checks the tool again
	resp, handled, err = h.relayed(ctx, g, name, resp, handled, err)
	endRelaySpan(span, handled, err)
	return resp, handled, err
}

// RelayStart is RelayCall for a caller that must not block (the gateway's
// stdio read loop): it starts the call only if it can at once — the tool's
// server's list is held (no listing), the gate passes, and
// conn.Manager.StartRaw takes the call — and reports whether it did (false:
// nothing was sent; the caller then uses RelayCall or CallTool). A started
// call ends with one call of done, with what RelayCall would return, on the
// server connection's read loop or another goroutine: done must not block
// on the server's connection.
func (s *Serving) RelayStart(ctx context.Context, name string, args json.RawMessage, o RelayOptions, done func(resp []byte, handled bool, err error)) bool {
	h := s.h
	server, _, ok := registry.ParseName(name)
	g, err := h.gate(ctx, name, server, ok, false, 0, gateNoWait, callArgs{raw: args})
	if err != nil {
		return false // (a call checked by a hook, plugin or server: RelayCall)
	}
	var span telemetry.Span
	if h.tel.Enabled() {
		ctx, span = h.tel.StartToolCall(ctx, g.tool.Server, name)
	}
	// tool_timeout bounds the call as in RelayCall, by a timer on the raw
	// call's own context (conn.RawCall.Timeout): no context here.
	rc := h.rawCall(ctx, g, args, o)
	rc.Timeout, rc.TimeoutCause = g.idle, errIdle
	g.started()
	started := h.conns.StartRaw(ctx, g.tool.Server, rc, func(resp []byte, handled bool, err error) {
		if handled && (len(resp) > MaxResultChars && err == nil || g.plan != nil && g.plan.Blocking()) {
			// Processing a large result may write a file, and checks
			// that run out of process wait on it: not here.
			go func() { // ends with the call
				resp, handled, err := h.relayed(ctx, g, name, resp, handled, err)
				endRelaySpan(span, handled, err)
				done(resp, handled, err)
			}()
			return
		}
		resp, handled, err = h.relayed(ctx, g, name, resp, handled, err)
		endRelaySpan(span, handled, err)
		done(resp, handled, err)
	})
	if !started {
		span.Abandon(relayNotTaken)
	}
	return started
}

// relayNotTaken is the error.type of a relay's tool-call span when the
// relay did not take the call (CallTool then makes it, in a span of its
// own).
const relayNotTaken = "relay_not_taken"

// endRelaySpan ends a relayed call's span.
func endRelaySpan(span telemetry.Span, handled bool, err error) {
	if !handled {
		span.Abandon(relayNotTaken)
		return
	}
	span.End(err)
}

// rawCall is the raw call of g with the client's arguments args, for the
// client of o. A call that hooks or interceptors check sends the arguments
// they left, its server's questions go through the Elicitation hooks, and
// a call whose result they check is not task-augmented (its result is not
// there to check when the call returns; a receiver may serve such a
// request as a plain call).
func (h *Host) rawCall(ctx context.Context, g *gated, args json.RawMessage, o RelayOptions) conn.RawCall {
	rc := conn.RawCall{Tool: g.tool.Original, Args: args, ProtocolVersion: o.ProtocolVersion, Gen: g.gen,
		Caps: o.Caps, Requester: o.Requester, Asks: o.Asks, HeaderParams: g.tool.HeaderParams, Trace: o.Trace, Tasks: o.Tasks, Task: o.Task}
	if g.plan == nil {
		// An Elicitation hook is matched by server, not by tool: a call
		// no tools/call check matches still has its questions hooked.
		if o.Requester != nil && h.chain() != nil {
			rc.Requester = h.withElicitHooks(ctx, o.Requester, g.tool.Server, nil)
		}
		return rc
	}
	if g.call.Args != nil {
		rc.Args = g.call.Args
	}
	rc.Requester = h.withElicitHooks(ctx, o.Requester, g.tool.Server, g.call)
	if g.checksResult() {
		rc.Tasks, rc.Task = nil, nil
	}
	return rc
}

// relayed turns what conn.Manager.CallRaw returned into RelayCall's answer.
// A call that hooks or interceptors check has its result checked first
// (relayedChecks).
func (h *Host) relayed(ctx context.Context, g *gated, name string, resp []byte, handled bool, err error) ([]byte, bool, error) {
	t := g.tool
	if !handled {
		return nil, false, nil
	}
	if err != nil {
		if errors.Is(err, errIdle) || errors.Is(context.Cause(ctx), errIdle) {
			err = &TimeoutError{Tool: name, Limit: g.idle} // notifications/cancelled was sent
		} else {
			// The error may quote the server, or its URL.
			err = redact.Error(fmt.Errorf("calling %s: %w", name, err))
		}
		if g.plan != nil {
			h.checkFailure(ctx, g, err, g.took())
		}
		return nil, true, err
	}
	if g.checksResult() {
		if resp, err = h.relayedChecks(ctx, g, name, resp); err != nil {
			return nil, true, err
		}
	}
	if len(resp) <= MaxResultChars {
		return resp, true, nil // its text cannot exceed the limit
	}
	// Large: decode, process as CallTool does, and encode again.
	msg, err := jsonrpcmsg.Decode(resp)
	if err != nil {
		return nil, true, fmt.Errorf("calling %s: invalid response: %w", name, err)
	}
	jr, ok := msg.(*jsonrpc.Response)
	if !ok || jr.Error != nil {
		return resp, true, nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(jr.Result, &res); err != nil {
		return nil, true, fmt.Errorf("calling %s: invalid result: %w", name, err)
	}
	out, err := h.processResult(t, &res)
	if err != nil {
		return nil, true, err
	}
	if jr.Result, err = json.Marshal(out); err != nil {
		return nil, true, err
	}
	b, err := jsonrpc.EncodeMessage(jr)
	return b, true, err
}

// relayedChecks runs g's response checks on the raw response resp of its
// call (D3 of the design): a JSON-RPC error goes to the PostToolUseFailure
// hooks, which observe it, and is sent as it is; a result's JSON goes
// through the checks as it is (members nothing models survive), and the
// response is encoded again only if they changed it — otherwise its bytes
// go out unchanged.
func (h *Host) relayedChecks(ctx context.Context, g *gated, name string, resp []byte) ([]byte, error) {
	msg, err := jsonrpcmsg.Decode(resp)
	if err != nil {
		return nil, fmt.Errorf("calling %s: invalid response: %w", name, err)
	}
	jr, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, fmt.Errorf("calling %s: invalid response: not a response", name)
	}
	if jr.Error != nil {
		h.checkFailure(ctx, g, redact.Error(fmt.Errorf("calling %s: %w", name, jr.Error)), g.took())
		return resp, nil
	}
	var flags struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(jr.Result, &flags); err != nil {
		return nil, fmt.Errorf("calling %s: invalid result: %w", name, err)
	}
	out, changed, err := h.checkResultJSON(ctx, g, jr.Result, flags.IsError, g.took())
	if err != nil || !changed {
		return resp, err
	}
	jr.Result = out
	return jsonrpc.EncodeMessage(jr)
}

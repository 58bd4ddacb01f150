package gateway

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/intercept"
)

// What the gateway does for the host's hooks and interceptors (the
// checks, host/intercept): it tells them about each call (callInfo), answers
// their refusals on both fronts (refusalRPC), checks the lists it serves
// (checkList: caller.go) and writes their decisions in the audit line
// (auditChecks). The checks themselves run in the host's one gate.

// withCallInfo returns ctx carrying, for the checks of the call it
// starts, the call's session (session: its id, "" for none), this
// gateway's endpoint and front ("stdio" or "http"): ctx itself when no
// check is configured (no allocation on the calls' path), else one
// allocation (the session's audit.SessionRef is computed only if a check
// matches the call: host.CallContext).
func (g *Gateway) withCallInfo(ctx context.Context, session, front string) context.Context {
	if !g.h.Serving().HasChecks() {
		return ctx
	}
	return &host.CallContext{Context: ctx, SessionID: session, Endpoint: g.endpoint, Front: front}
}

// inCallInfo is withCallInfo in cc, a CallContext the call already holds
// (the relay's relayCall): no allocation.
func (g *Gateway) inCallInfo(cc *host.CallContext, ctx context.Context, session, front string) context.Context {
	if !g.h.Serving().HasChecks() {
		return ctx
	}
	*cc = host.CallContext{Context: ctx, SessionID: session, Endpoint: g.endpoint, Front: front}
	return cc
}

// frontOf is the front a request the go-sdk server handles came by: over
// HTTP it carries the request's headers (the streamable front's, not the
// stdio front's PipeExtra); else stdio.
func frontOf(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil && len(ex.Header[hdrPipe]) == 0 {
		return host.FrontHTTP
	}
	return host.FrontStdio
}

// refusalRPC returns the JSON-RPC error that answers a call a check
// refused with a code (validate_input: -32602; prompts/get and
// resources/read: host.CodeRefusedRequest, CodeRefusedResponse): the code
// and the refusal's text, which names the check ("refused by builtin
// args: invalid arguments for …"). ok is false for any other error (a
// refusal without a code is a tools/call's tool error result).
func refusalRPC(err error) (e *jsonrpc.Error, ok bool) {
	var re *intercept.RefusedError
	if errors.As(err, &re) {
		if re.Code == 0 {
			return nil, false
		}
		return &jsonrpc.Error{Code: re.Code, Message: re.Error()}, true
	}
	if errors.Is(err, intercept.ErrRefused) && errors.As(err, &e) {
		return e, true // (a held call's refusal, from the replica that holds it: heldforward.go)
	}
	return nil, false
}

// asRefusalRPC returns err, a refusal with a code as its JSON-RPC error
// (refusalRPC).
func asRefusalRPC(err error) error {
	if e, ok := refusalRPC(err); ok {
		return e
	}
	return err
}

// auditChecks are the audit line's checks of records: fixed words only
// (audit.CheckDecision), never a check's reason.
func auditChecks(recs []intercept.Record) []audit.Check {
	if len(recs) == 0 {
		return nil
	}
	out := make([]audit.Check, len(recs))
	for i, r := range recs {
		out[i] = audit.Check{Name: r.Name, Kind: string(r.Kind), Event: r.Event, Decision: audit.CheckDecision(r.Decision), Duration: r.End.Sub(r.Start)}
		if r.Mode == intercept.Audit {
			out[i].Mode = audit.CheckModeAudit
		}
	}
	return out
}

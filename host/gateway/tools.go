package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// toolHandler serves the tool exposed as exposed. Every call goes through
// the host's call pipeline (host.CallTool: lookup, pin, permission, login,
// limits); the gateway asks its own client where the pipeline needs a
// person:
//   - an ask decision becomes an input-required result with the gateway's
//     question (the go-sdk turns it into elicitation/create for clients
//     before 2026-07-28);
//   - a needs-auth server's authenticate pseudo-tool starts the login (login.go);
//   - what the upstream server asks during the call goes to this client: a
//     2026-07-28 client gets the upstream's input-required result, with the
//     upstream's request state sealed to this call, and retries; an older
//     client is asked by the gateway (elicitation/create, sampling, roots
//     on its session) while the call waits.
func (g *Gateway) toolHandler(exposed string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name, ok := g.canonicalTool(exposed)
		if !ok {
			return nil, unknownTool(exposed)
		}
		res, err := g.call(ctx, req, name)
		return asUnknown(exposed, res, err)
	}
}

// decisionMiddleware gives a tools/call or prompts/get the go-sdk server
// handles its one permission decision (host.DecisionNote), unless the
// telemetry middleware gave it one already: every round of the request —
// the go-sdk server runs the handler again with a client's answers to the
// gateway's question (elicitation/create, for clients before 2026-07-28) —
// and what reports on it (its audit lines) take that decision, rather than
// each round the rules again. A relayed call the relay handed over with
// telemetry off brings its note from the relay (carried: see
// startRelayMessage), so the checks the relay ran are not run again.
func (g *Gateway) decisionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if (method == "tools/call" || method == "prompts/get") && host.DecisionNoteOf(ctx) == nil {
			if rs := g.carriedNote(req); rs != nil {
				ctx = host.WithDecisionNote(ctx, &rs.note)
			} else {
				ctx = host.WithDecisionNote(ctx, new(host.DecisionNote))
			}
		}
		return next(ctx, method, req)
	}
}

// carriedNote takes the relaySpan a relayed call handed to the go-sdk
// server carries (its token in the request's internal headers), or nil.
func (g *Gateway) carriedNote(req mcp.Request) *relaySpan {
	ex := req.GetExtra()
	if ex == nil || ex.Header == nil {
		return nil
	}
	return g.carries.take(ex.Header[hdrCarry])
}

// unknownTool is the answer to a call of a tool that the caller is not
// served: one that does not exist, and — the same answer, byte for byte —
// one hidden from the caller (denied to it by the rules, not in its
// per-user view, left out by the server's tools block). It is the go-sdk
// server's own answer for a name it has no tool for: -32602, unknown tool
// "NAME" (so also HTTP 400 from 2026-07-28 on).
func unknownTool(name string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// asUnknown returns a call's outcome, a not-found error (a tool hidden
// from the caller, or gone) answered as unknownTool of name, the name the
// client called.
func asUnknown(name string, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if errors.Is(err, registry.ErrNotFound) {
		return nil, unknownTool(name)
	}
	return res, err
}

// call serves a call of the registry tool name (see toolHandler): req's
// params are the call's own (its arguments, _meta, and the input
// responses and request state of a retry). With an audit log, the call's
// line is written when it ends.
func (g *Gateway) call(ctx context.Context, req *mcp.CallToolRequest, name string) (*mcp.CallToolResult, error) {
	ctx = g.withCallInfo(ctx, sessionID(req.Session), frontOf(req)) // (for the call's hooks and interceptors)
	a := g.auditCall(ctx, audit.EventToolCall, name, sessionID(req.Session), "", len(req.Params.Arguments))
	if a == nil {
		return g.callTool(ctx, req, name)
	}
	res, err := g.callTool(a.with(ctx), req, name)
	a.finish(res, err)
	return res, err
}

// callTool is call without the audit line.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest, name string) (*mcp.CallToolResult, error) {
	p := req.Params
	var args any
	if len(p.Arguments) > 0 {
		args = json.RawMessage(p.Arguments)
	}
	newClient := req.ProtocolVersion() >= conn.NewProtocol
	task := carriedTask(p.Meta) // (a 2025-11-25 task-augmented call's: CarryTask)
	opts := &host.CallOptions{
		CallerAsks:          true,
		Requester:           sessionRequester{req.Session, ctx, req.ClientCapabilities(), g},
		ReturnInputRequests: newClient,
		Meta:                g.upstreamMeta(req.Session, p.Meta),
		ClientVersion:       req.ProtocolVersion(),
		Tasks:               (*taskIDs)(g),  // (a call answered with a task: tasks.go)
		CannotAsk:           stateless(ctx), // (no session to ask on: see WithStateless)
	}
	if !newClient {
		opts.Task = task
	}
	server, tool, parsed := registry.ParseName(name) // (once for the call)
	if parsed && tool == host.AuthToolName {
		// The retry of an authenticate call whose login just finished:
		// the pseudo-tool is gone, the pending login has the outcome.
		if _, answered := p.InputResponses[loginKey]; answered && (host.CallerOf(ctx) == nil || g.h.Serving().PerUser(server)) {
			return g.login(ctx, req, name, server), nil
		}
	}
	switch {
	case p.InputResponses[askKey] != nil:
		ok, err := g.askAnswer(ctx, p, name)
		if err != nil || !ok {
			if err == nil {
				err = errors.New("not approved")
			}
			err = fmt.Errorf("%w: %s: %v", host.ErrDenied, name, err)
			declinedByClient(ctx)
			noteCallError(ctx, err)
			return errorResult(err), nil
		}
		opts.Approved = true
	case p.RequestState != "":
		if id, ok := g.openState(ctx, p.RequestState, stateHeld, name, p.Arguments); ok {
			// The client's answer to a held call's question.
			hc, seq := g.held.get(string(id))
			if hc == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: the call it belongs to has ended (it waits " + g.held.limit.String() + " for an answer)"}
			}
			if err := hc.answer(ctx, req, seq, p.InputResponses[heldKey]); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: " + err.Error()}
			}
			res, asked, err := g.held.round(ctx, req, hc, g.heldSeal(ctx, name, p.Arguments))
			if asked {
				return res, nil
			}
			return g.callResult(ctx, req, name, res, err)
		}
		// The retry of an upstream's input-required result: its state
		// was sealed to this call, and this call had passed the gate
		// (an ask included) when it was issued.
		upstream, ok := g.openState(ctx, p.RequestState, stateUpstream, name, p.Arguments)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: it does not belong to this call"}
		}
		opts.Approved = true
		opts.RequestState, opts.InputResponses = string(upstream), p.InputResponses
	case len(p.InputResponses) > 0:
		// Answers the client sends unasked, or to a server whose input
		// requests came without a request state: they go upstream, for
		// the server to use or ignore; the call passes the gate as any
		// other. The gateway's own keys are not the server's.
		opts.InputResponses = serverResponses(p.InputResponses)
	}
	if token := p.GetProgressToken(); token != nil {
		opts.OnProgress = func(pn *mcp.ProgressNotificationParams) {
			fwd := *pn
			fwd.ProgressToken = token
			req.Session.NotifyProgress(ctx, &fwd)
		}
	}
	if newClient && parsed && g.holds(ctx, server) {
		caller := host.CallerOf(ctx)
		hc := g.held.start(req, func(hctx context.Context, r *heldRequester) (*mcp.CallToolResult, error) {
			o := *opts
			o.Requester = r
			o.OnProgress = r.hc.progress
			if caller != nil {
				// The held call outlives the request: it is made for the
				// same principal all the same.
				hctx = host.WithCallerOf(hctx, caller)
			}
			if n := host.DecisionNoteOf(ctx); n != nil {
				hctx = host.WithDecisionNote(hctx, n) // (the call's one decision, for the line)
			}
			return g.h.CallTool(hctx, name, args, &o)
		})
		res, asked, err := g.held.round(ctx, req, hc, g.heldSeal(ctx, name, p.Arguments))
		if asked {
			return res, nil
		}
		return g.callResult(ctx, req, name, res, err)
	}
	res, err := g.h.CallTool(ctx, name, args, opts)
	return g.callResult(ctx, req, name, res, err)
}

// callResult is the downstream answer to a call's outcome.
func (g *Gateway) callResult(ctx context.Context, req *mcp.CallToolRequest, name string, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	noteCallError(ctx, err)
	{
		p := req.Params
		var (
			te  *host.ToolError
			ar  *host.ApprovalRequiredError
			lr  *host.LoginRequiredError
			rpc *jsonrpc.Error
		)
		switch {
		case errors.As(err, &ar):
			if !canElicit(req) {
				return errorResult(fmt.Errorf("%w, and %v", err, errNoElicitation)), nil
			}
			return g.askRequest(ctx, name, p.Arguments, ar.Decision), nil
		case errors.As(err, &lr):
			if host.CallerOf(ctx) != nil && !g.h.Serving().PerUser(lr.Server) {
				// Under inbound OAuth a login would set the credential
				// every user's calls use: the operator logs in (mcphost
				// auth login), not a user. (A per-user server's login is
				// the caller's own.)
				return errorResult(fmt.Errorf("%s needs a login, which only the gateway's operator can do (mcphost auth login %s); users of a shared gateway cannot log it in", lr.Server, lr.Server)), nil
			}
			return g.login(ctx, req, name, lr.Server), nil
		case errors.As(err, &te):
			stripProtocolMeta(res.Meta)
			return res, nil // isError passes through as a result
		case errors.Is(err, registry.ErrNotFound):
			return nil, err
		case errors.Is(err, intercept.ErrRefused):
			// Refused by a hook or an interceptor: with a code
			// (validate_input) a JSON-RPC error, else a tool error result
			// with the check's reason (the model reads it).
			if e, ok := refusalRPC(err); ok {
				return nil, e
			}
			return errorResult(err), nil
		case errors.As(err, &rpc):
			return nil, rpc // the server's protocol error, with its code
		case err != nil:
			g.log.Warn("tool call failed", "tool", name, "error", err)
			return errorResult(err), nil
		}
		if _, ok := conn.TaskResultOf(res); ok {
			return res, nil // (tasksCapsMiddleware writes it as it is)
		}
		if res.InputRequests != nil {
			// Only for a 2026-07-28 client (ReturnInputRequests): it
			// answers and retries with the sealed state.
			return &mcp.CallToolResult{
				InputRequests: res.InputRequests,
				RequestState:  g.sealState(ctx, stateUpstream, name, p.Arguments, []byte(res.RequestState)),
			}, nil
		}
		stripProtocolMeta(res.Meta)
		return res, nil
	}
}

// serverResponses is a retry's input responses without the gateway's own
// keys (nil if none remain).
func serverResponses(in mcp.InputResponseMap) mcp.InputResponseMap {
	var out mcp.InputResponseMap
	for k, v := range in {
		if k == askKey || k == loginKey || k == heldKey {
			continue
		}
		if out == nil {
			out = mcp.InputResponseMap{}
		}
		out[k] = v
	}
	return out
}

// holds reports whether a 2026-07-28 client's call of a tool of server is
// held (held.go): when the server may ask by requests of its own during
// the call (a session before 2026-07-28, or none yet).
func (g *Gateway) holds(ctx context.Context, server string) bool {
	return g.h.Serving().ProtocolVersion(ctx, server) < conn.NewProtocol
}

// heldSeal seals a held call's question key into the request state of the
// question.
func (g *Gateway) heldSeal(ctx context.Context, name string, args []byte) func(key string) string {
	return func(key string) string { return g.sealState(ctx, stateHeld, name, args, []byte(key)) }
}

// upstreamMeta is the _meta of the upstream request for a downstream one:
// forwardMeta, plus the downstream session's log level (set with
// logging/setLevel) when the request does not carry one, so that a server of
// 2026-07-28 (which has no logging/setLevel) logs at that level during the
// call.
func (g *Gateway) upstreamMeta(ss *mcp.ServerSession, m mcp.Meta) mcp.Meta {
	out := forwardMeta(m)
	if _, ok := out[mcp.MetaKeyLogLevel]; ok {
		return out
	}
	if level := g.levels.of(ss); level != "" {
		if out == nil {
			out = mcp.Meta{}
		}
		out[mcp.MetaKeyLogLevel] = level
	}
	return out
}

// forwardMeta is the part of a downstream request's _meta sent upstream
// (a new map the caller may change): mcpmeta.Forwardable's, without the
// progress token.
func forwardMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range mcpmeta.Forwardable(m) {
		if k == "progressToken" {
			continue // the host asks for progress with its own token
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

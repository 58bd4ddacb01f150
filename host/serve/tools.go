package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// newProtocol is the first protocol version whose clients retry calls with
// answers themselves (input-required results, SEP-2322).
const newProtocol = "2026-07-28"

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
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", exposed)}
		}
		p := req.Params
		var args any
		if len(p.Arguments) > 0 {
			args = json.RawMessage(p.Arguments)
		}
		defer g.inCall.add(req.Session, ctx)()
		newClient := req.ProtocolVersion() >= newProtocol
		opts := &host.CallOptions{
			CallerAsks:          true,
			Requester:           sessionRequester{req.Session},
			ReturnInputRequests: newClient,
			Meta:                forwardMeta(p.Meta),
		}
		if server, tool, ok := registry.ParseName(name); ok && tool == host.AuthToolName {
			// The retry of an authenticate call whose login just finished:
			// the pseudo-tool is gone, the pending login has the outcome.
			if _, answered := p.InputResponses[loginKey]; answered {
				return g.login(ctx, req, name, server), nil
			}
		}
		switch {
		case p.InputResponses[askKey] != nil:
			ok, err := g.askAnswer(p, name)
			if err != nil || !ok {
				if err == nil {
					err = errors.New("not approved")
				}
				return errorResult(fmt.Errorf("%w: %s: %v", host.ErrDenied, name, err)), nil
			}
			opts.Approved = true
		case p.RequestState != "":
			// The retry of an upstream's input-required result: its state
			// was sealed to this call, and this call had passed the gate
			// (an ask included) when it was issued.
			upstream, ok := g.openState(p.RequestState, stateUpstream, name, p.Arguments)
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: it does not belong to this call"}
			}
			opts.Approved = true
			opts.RequestState, opts.InputResponses = string(upstream), p.InputResponses
		}
		if token := p.GetProgressToken(); token != nil {
			opts.OnProgress = func(pn *mcp.ProgressNotificationParams) {
				fwd := *pn
				fwd.ProgressToken = token
				req.Session.NotifyProgress(ctx, &fwd)
			}
		}
		res, err := g.h.CallTool(ctx, name, args, opts)
		var (
			te *host.ToolError
			ar *host.ApprovalRequiredError
			lr *host.LoginRequiredError
		)
		switch {
		case errors.As(err, &ar):
			if !canElicit(req) {
				return errorResult(fmt.Errorf("%w, and %v", err, errNoElicitation)), nil
			}
			return g.askRequest(name, p.Arguments, ar.Decision), nil
		case errors.As(err, &lr):
			return g.login(ctx, req, name, lr.Server), nil
		case errors.As(err, &te):
			stripProtocolMeta(res.Meta)
			return res, nil // isError passes through as a result
		case errors.Is(err, registry.ErrNotFound):
			return nil, err
		case err != nil:
			g.log.Warn("tool call failed", "tool", name, "error", err)
			return errorResult(err), nil
		}
		if res.InputRequests != nil {
			// Only for a 2026-07-28 client (ReturnInputRequests): it
			// answers and retries with the sealed state.
			return &mcp.CallToolResult{
				InputRequests: res.InputRequests,
				RequestState:  g.sealState(stateUpstream, name, p.Arguments, []byte(res.RequestState)),
			}, nil
		}
		stripProtocolMeta(res.Meta)
		return res, nil
	}
}

// forwardMeta is the part of a downstream request's _meta sent upstream:
// everything but the protocol-reserved keys (io.modelcontextprotocol/…),
// which describe the downstream client's session with the gateway, not the
// gateway's with the server — except the log level, which the upstream
// honours for this request.
func forwardMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if k == "progressToken" {
			continue // the host asks for progress with its own token
		}
		if mcpmeta.IsReserved(k) && k != mcp.MetaKeyLogLevel {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

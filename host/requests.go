package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
)

// hostRequester answers a server's requests during the CLI's and the
// library's calls with Options.OnElicit and Options.OnCreateMessage. It is
// comparable: the calls to one server share one (see conn.Requester).
type hostRequester struct {
	h      *Host
	server string
}

func (h *Host) requester(server string) conn.Requester { return hostRequester{h, server} }

func (r hostRequester) Capabilities() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if r.h.onElicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	}
	if r.h.onCreateMessage != nil {
		caps.Sampling = &mcp.SamplingCapabilities{}
	}
	return caps
}

func (r hostRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if r.h.onElicit == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support elicitation"}
	}
	return r.h.onElicit(ctx, r.server, &mcp.ElicitRequest{Params: p})
}

func (r hostRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if r.h.onCreateMessage == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support sampling"}
	}
	return r.h.onCreateMessage(ctx, r.server, p)
}

func (r hostRequester) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errors.New("mcphost offers no roots")
}

// hookedRequester runs the Elicitation and ElicitationResult hooks around
// its inner Requester (D12): an Elicitation hook may answer a server's
// question itself (accept with content, decline, cancel; exit 2 declines)
// without anyone being asked; the ElicitationResult hooks may then change
// the answer, whoever gave it. Sampling and roots pass through. It is
// comparable, and belongs to the inner Requester's client (Client).
type hookedRequester struct {
	inner conn.Requester
	plan  *intercept.Plan
	// call is the elicitation as the hooks see it (server, caller,
	// session, front; the tool_use_id of the call it belongs to, if any).
	call *intercept.Call
	note *DecisionNote // receives the hooks' records (nil: none)
	// h records the hooks' spans, under span (the span of the call the
	// questions belong to) when the question's own context has none.
	h    *Host
	span trace.Span
}

// hookedRelayed is a hookedRequester whose inner Requester marks a relayed
// call (RelayedCall, see gateway.RelayedRequester): so is it.
type hookedRelayed struct{ hookedRequester }

// RelayedCall marks the requester of a relayed call.
func (hookedRelayed) RelayedCall() {}

// withElicitHooks returns r wrapped in the Elicitation hooks that apply to
// server's questions to ctx's caller, or r itself when none does. call is
// the tool call the questions belong to (nil: outside any call).
func (h *Host) withElicitHooks(ctx context.Context, r conn.Requester, server string, call *intercept.Call) conn.Requester {
	if r == nil {
		return r
	}
	ih := h.inputHooksFor(ctx, server, call)
	if ih == nil {
		return r
	}
	hr := hookedRequester{inner: r, plan: ih.plan, call: ih.call, note: ih.note, h: h, span: trace.SpanFromContext(ctx)}
	if _, ok := r.(interface{ RelayedCall() }); ok {
		return hookedRelayed{hr}
	}
	return hr
}

// Unwrap returns the Requester the hooks wrap.
func (r hookedRequester) Unwrap() conn.Requester { return r.inner }

// Client returns the inner Requester's client (conn.Requester).
func (r hookedRequester) Client() any {
	if c, ok := r.inner.(interface{ Client() any }); ok {
		return c.Client()
	}
	return r.inner
}

func (r hookedRequester) Capabilities() *mcp.ClientCapabilities { return r.inner.Capabilities() }

func (r hookedRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c := *r.call
	c.Elicit = p
	sctx := ctx
	if !trace.SpanContextFromContext(ctx).IsValid() && r.span.SpanContext().IsValid() {
		sctx = trace.ContextWithSpan(ctx, r.span) // (the checks' spans: the call's)
	}
	return r.h.elicitWithHooks(ctx, sctx, r.plan, &c, r.note, r.inner.Elicit)
}

// elicitWithHooks answers the question c.Elicit: by plan's Elicitation
// hooks if one answers, else by ask; then plan's ElicitationResult hooks
// may change the answer. A hook that fails closed fails the elicitation.
// The hooks' records go to n (nil: none) and become spans under sctx's.
func (h *Host) elicitWithHooks(ctx, sctx context.Context, plan *intercept.Plan, c *intercept.Call, n *DecisionNote,
	ask func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)) (*mcp.ElicitResult, error) {
	res, recs, err := plan.ElicitBefore(ctx, c)
	h.reportChecks(sctx, n, recs)
	if err != nil {
		return nil, fmt.Errorf("an Elicitation hook: %w", err)
	}
	if res == nil {
		if res, err = ask(ctx, c.Elicit); err != nil {
			return nil, err
		}
	}
	res, recs, err = plan.ElicitAfter(ctx, c, res)
	h.reportChecks(sctx, n, recs)
	if err != nil {
		return nil, fmt.Errorf("an ElicitationResult hook: %w", err)
	}
	return res, nil
}

func (r hookedRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return r.inner.CreateMessage(ctx, p)
}

func (r hookedRequester) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return r.inner.ListRoots(ctx, p)
}

// onElicitOutside answers a server's question outside any call
// (conn.Options.OnElicit): Options.OnElicit, with the Elicitation hooks
// around it.
func (h *Host) onElicitOutside(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	c := h.chain()
	var plan *intercept.Plan
	if c != nil {
		plan = c.ForElicit(server, nil)
	}
	if plan == nil {
		return h.onElicit(ctx, server, req)
	}
	ec := &intercept.Call{Event: intercept.EventElicit, Server: server, Name: server, Elicit: req.Params}
	h.fillCallInfo(ctx, ec)
	return h.elicitWithHooks(ctx, ctx, plan, ec, nil, func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return h.onElicit(ctx, server, req)
	})
}

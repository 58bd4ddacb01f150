package host

import (
	"context"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/intercept"
)

// inputHooks are the Elicitation hooks of a call whose input requests
// (the multi-round-trip form, 2026-07-28) go back to the client instead
// of being answered during the call (CallOptions.ReturnInputRequests):
// the hooks see the server's questions before the client does, and the
// client's answers before the server does.
type inputHooks struct {
	plan *intercept.Plan
	call *intercept.Call // the elicitation as the hooks see it
	note *DecisionNote   // receives the hooks' records (nil: none)
}

// inputHooksFor returns the Elicitation hooks that apply to server's
// questions to ctx's caller (nil: none). call is the tool call the
// questions belong to (nil: none, or a prompt or resource).
func (h *Host) inputHooksFor(ctx context.Context, server string, call *intercept.Call) *inputHooks {
	c := h.chain()
	if c == nil {
		return nil
	}
	plan := c.ForElicit(server, principalOf(ctx))
	if plan == nil {
		return nil
	}
	ec := &intercept.Call{Event: intercept.EventElicit, Server: server, Name: server}
	if call != nil {
		ec.ID, ec.Who, ec.Session, ec.Endpoint, ec.Front = call.ID, call.Who, call.Session, call.Endpoint, call.Front
	} else {
		h.fillCallInfo(ctx, ec)
	}
	return &inputHooks{plan: plan, call: ec, note: DecisionNoteOf(ctx)}
}

// before runs the Elicitation hooks on each elicitation of reqs, as
// elicitWithHooks does during a call: a hook's answer (after the
// ElicitationResult hooks) goes into answered, and the question is not
// put to the client; the rest (questions no hook answered, sampling and
// roots requests) stays in rest, nil when none is left. A hook that
// fails closed fails the call.
func (ih *inputHooks) before(ctx context.Context, reqs mcp.InputRequestMap) (answered mcp.InputResponseMap, rest mcp.InputRequestMap, err error) {
	for key, ir := range reqs {
		p, ok := ir.(*mcp.ElicitParams)
		if ok {
			c := *ih.call
			c.Elicit = p
			res, recs, err := ih.plan.ElicitBefore(ctx, &c)
			ih.note.addChecks(recs)
			if err != nil {
				return nil, nil, fmt.Errorf("an Elicitation hook: %w", err)
			}
			if res != nil {
				res, recs, err = ih.plan.ElicitAfter(ctx, &c, res)
				ih.note.addChecks(recs)
				if err != nil {
					return nil, nil, fmt.Errorf("an ElicitationResult hook: %w", err)
				}
				if answered == nil {
					answered = make(mcp.InputResponseMap, len(reqs))
				}
				answered[key] = res
				continue
			}
		}
		if rest == nil {
			rest = make(mcp.InputRequestMap, len(reqs))
		}
		rest[key] = ir
	}
	return answered, rest, nil
}

// after runs the ElicitationResult hooks on each elicitation answer of
// resps, the client's answers of a retry, and returns the answers to send
// upstream (resps itself when it has no elicitation answer). The hooks
// see the answer, not the question: it was in the previous round, which
// the host does not keep.
func (ih *inputHooks) after(ctx context.Context, resps mcp.InputResponseMap) (mcp.InputResponseMap, error) {
	var out mcp.InputResponseMap
	for key, ir := range resps {
		res, ok := ir.(*mcp.ElicitResult)
		if !ok {
			continue
		}
		got, recs, err := ih.plan.ElicitAfter(ctx, ih.call, res)
		ih.note.addChecks(recs)
		if err != nil {
			return nil, fmt.Errorf("an ElicitationResult hook: %w", err)
		}
		if out == nil {
			out = maps.Clone(resps)
		}
		out[key] = got
	}
	if out == nil {
		return resps, nil
	}
	return out, nil
}

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The checks of a call's result (D1, D3 of the design): the response
// interceptors in declared order, then the PostToolUse hooks (or
// PostToolUseFailure, for a failed call or an isError result), before the
// result is processed (oversized output written to a file) and returned.

// started marks the moment g's call is sent (for the checks of its
// result: the call's duration_ms), when checks see its result.
func (g *gated) started() {
	if g.plan != nil {
		g.sent = time.Now()
	}
}

// took is how long g's call has taken since it was sent (started).
func (g *gated) took() time.Duration {
	if g.sent.IsZero() {
		return 0
	}
	return time.Since(g.sent)
}

// checksResult reports whether checks see g's result: response entries, or
// PreToolUse hooks' additionalContext to append to it.
func (g *gated) checksResult() bool {
	return g.plan != nil && (g.plan.HasResponse() || len(g.call.PreContext) > 0)
}

// checkResult runs g's response checks on the result res of its call,
// which took took, and returns the result they leave.
func (h *Host) checkResult(ctx context.Context, g *gated, res *mcp.CallToolResult, took time.Duration) (*mcp.CallToolResult, error) {
	if !g.checksResult() {
		return res, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("calling %s: encoding the result for its checks: %w", g.tool.Name, err)
	}
	out, changed, err := h.checkResultJSON(ctx, g, b, res.IsError, took)
	if err != nil || !changed {
		return res, err
	}
	var nr mcp.CallToolResult
	if err := json.Unmarshal(out, &nr); err != nil {
		return nil, fmt.Errorf("calling %s: the result its checks left is invalid: %w", g.tool.Name, err)
	}
	return &nr, nil
}

// checkResultJSON runs g's response checks on the result (JSON) of its
// call and returns the result they leave; changed says it differs. An
// error (a check that failed and did not fail closed into an error result)
// refuses the result.
func (h *Host) checkResultJSON(ctx context.Context, g *gated, result json.RawMessage, isError bool, took time.Duration) (json.RawMessage, bool, error) {
	c := *g.call
	c.Payload, c.IsError, c.Duration = result, isError, took
	out, changed, recs, err := g.plan.Response(ctx, &c)
	h.noteChecks(ctx, recs)
	if err != nil {
		return nil, false, refusal(err)
	}
	return out, changed, nil
}

// checkFailure runs g's PostToolUseFailure hooks (and the response
// interceptors, which see the failure) on err, the failure of its call,
// which took took. They observe: the call fails with err whatever they
// say.
func (h *Host) checkFailure(ctx context.Context, g *gated, err error, took time.Duration) {
	if g.plan == nil || !g.plan.HasResponse() {
		return
	}
	c := *g.call
	c.Payload, c.Err, c.Duration = nil, err, took
	_, _, recs, _ := g.plan.Response(ctx, &c)
	h.noteChecks(ctx, recs)
}

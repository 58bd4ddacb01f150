package host

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/intercept"
)

// cachePrivate is the cacheScope (2026-07-28) of a list only its caller
// may cache.
const cachePrivate = "private"

// listEvent is the check event of a list method, and whether it is one.
func listEvent(method string) (string, bool) {
	switch method {
	case intercept.EventToolsList, intercept.EventPromptsList, intercept.EventResourcesList, intercept.EventTemplatesList:
		return method, true
	}
	return "", false
}

// CheckList runs the response checks (hooks and interceptors) of the list
// method (tools/list, prompts/list, resources/list,
// resources/templates/list) on res, its result as served to ctx's caller
// (*mcp.ListToolsResult, *mcp.ListPromptsResult, *mcp.ListResourcesResult
// or *mcp.ListResourceTemplatesResult): a check may filter or replace the
// list, which then becomes *res (the elements res pointed to are left as
// they were); a check that denies it refuses the list with a
// *intercept.RefusedError of code CodeRefusedResponse (-32603). A list is
// checked in its response only (intercept.InterceptorEntry refuses a
// check of a list's request). A list's
// checks see it whole: they are matched on the method and the caller, with
// no server or item name. A method or result of another kind, and a list
// no check matches, cost nothing and are left as they are.
func (s *Serving) CheckList(ctx context.Context, method string, res any) error {
	c := s.h.chain()
	if c == nil {
		return nil
	}
	event, ok := listEvent(method)
	if !ok {
		return nil
	}
	plan := c.ForEvent(event, "", "", principalOf(ctx))
	if plan == nil || !plan.HasResponse() {
		return nil
	}
	call := s.h.eventCall(ctx, event, "", "", "")
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		return checkListResult(ctx, s.h, plan, call, r)
	case *mcp.ListPromptsResult:
		return checkListResult(ctx, s.h, plan, call, r)
	case *mcp.ListResourcesResult:
		return checkListResult(ctx, s.h, plan, call, r)
	case *mcp.ListResourceTemplatesResult:
		return checkListResult(ctx, s.h, plan, call, r)
	}
	return nil
}

// checkListResult runs plan's response checks on the list r and puts the
// list they leave in *r. A list changed for a gateway caller is its own:
// its cacheScope becomes private.
func checkListResult[T any](ctx context.Context, h *Host, plan *intercept.Plan, c *intercept.Call, r *T) error {
	out, err := checkEventResponse(ctx, h, plan, c, r)
	if err != nil {
		return err
	}
	if out != r {
		*r = *out
		if CallerOf(ctx) != nil {
			switch l := any(r).(type) {
			case *mcp.ListToolsResult:
				l.CacheScope = cachePrivate
			case *mcp.ListPromptsResult:
				l.CacheScope = cachePrivate
			case *mcp.ListResourcesResult:
				l.CacheScope = cachePrivate
			case *mcp.ListResourceTemplatesResult:
				l.CacheScope = cachePrivate
			}
		}
	}
	return nil
}

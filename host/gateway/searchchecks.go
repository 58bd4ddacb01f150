package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/intercept"
)

// checkFound runs the tools/list response checks (host.Serving.CheckList)
// over the tools search_tools found for req's caller, so that a search
// shows no more of the tools than tools/list would: the checks see them
// as a tools/list result (under the registry names search_tools returns),
// and the tools they leave are returned, in found's order, as the checks
// left them (a redacted description stays redacted); a tool they add is
// not (a search returns what it found). found itself, at no cost, when
// no tools/list response check is configured for the caller. A list the
// checks refuse is the refusal.
func (g *Gateway) checkFound(ctx context.Context, req *mcp.CallToolRequest, found []foundTool) ([]foundTool, error) {
	if len(found) == 0 || !g.h.Serving().ListChecked(ctx, intercept.EventToolsList) {
		return found, nil
	}
	res := &mcp.ListToolsResult{Tools: make([]*mcp.Tool, len(found))}
	for i, f := range found {
		res.Tools[i] = &mcp.Tool{Name: f.Name, Title: f.Title, Description: f.Description, InputSchema: f.InputSchema,
			OutputSchema: f.OutputSchema, Annotations: f.Annotations, Icons: f.Icons, Meta: f.Meta}
	}
	ctx = g.withCallInfo(ctx, sessionID(req.Session), frontOf(req))
	if err := g.h.Serving().CheckList(ctx, intercept.EventToolsList, res); err != nil {
		return nil, err
	}
	left := make(map[string]*mcp.Tool, len(res.Tools))
	for _, t := range res.Tools {
		if t != nil {
			if _, dup := left[t.Name]; !dup {
				left[t.Name] = t
			}
		}
	}
	out := make([]foundTool, 0, len(left))
	for _, f := range found {
		t, ok := left[f.Name]
		if !ok {
			continue
		}
		f.Title, f.Description, f.InputSchema, f.OutputSchema = t.Title, t.Description, t.InputSchema, t.OutputSchema
		f.Annotations, f.Icons, f.Meta = t.Annotations, t.Icons, t.Meta
		out = append(out, f)
	}
	return out, nil
}

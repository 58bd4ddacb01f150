package gateway

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// A tool's "execution" (taskSupport) is a member the go-sdk's Tool does not
// have: the served definition carries it in _meta under
// mcpmeta.ExecutionKey (serverTool), and the JSON of a tools/list result is
// written with it put back as the tool's own "execution" (listedTools), as
// search_tools' results are (foundTool).

// executionMiddleware answers a tools/list whose tools carry an execution
// with a result written as listedTools. It is the outermost middleware (the
// others see the go-sdk's own result type).
func (g *Gateway) executionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
			for _, t := range r.Tools {
				if _, ok := t.Meta[mcpmeta.ExecutionKey]; ok {
					return &listedTools{r}, nil
				}
			}
		}
		return res, err
	}
}

// listedTools is a tools/list result written with each tool's execution
// (carried in its _meta under mcpmeta.ExecutionKey) as its own "execution"
// member. (It is the go-sdk's result, whose methods it has, for the go-sdk
// server to finish it as its own: resultType, _meta.)
type listedTools struct {
	*mcp.ListToolsResult
}

// executionTool is a tool as written to a client: the go-sdk's, and its
// execution.
type executionTool struct {
	*mcp.Tool
	Execution any `json:"execution,omitempty"`
}

// MarshalJSON writes the result as the go-sdk would, each tool with its
// execution.
func (r *listedTools) MarshalJSON() ([]byte, error) {
	type plain mcp.ListToolsResult // (the fields, without the methods)
	tools := make([]executionTool, len(r.Tools))
	for i, t := range r.Tools {
		tools[i] = withExecution(t)
	}
	return json.Marshal(struct {
		*plain
		Tools []executionTool `json:"tools"`
	}{(*plain)(r.ListToolsResult), tools})
}

// withExecution is t as written to a client: its execution, if carried in
// its _meta, taken out of it (in a copy) as its own member.
func withExecution(t *mcp.Tool) executionTool {
	exec, ok := t.Meta[mcpmeta.ExecutionKey]
	if !ok {
		return executionTool{Tool: t}
	}
	c := *t
	c.Meta = maps.Clone(t.Meta)
	delete(c.Meta, mcpmeta.ExecutionKey)
	if len(c.Meta) == 0 {
		c.Meta = nil
	}
	return executionTool{Tool: &c, Execution: exec}
}

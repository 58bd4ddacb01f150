package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// Tool overrides (a server's tools { override "TOOL" { … } } blocks,
// config.ToolOverride) shape what is served only: the served name's tool
// part (naming.go's exposeNames), the title, description and annotations
// of the served definition (overridden). The registry's tool is left as
// the server gave it, so its canonical name, pin, the permission rules,
// audit and logs, and the annotations the call gate derives from (read
// only, destructive, …) stay the server's.

// toolOverride is the override of the server's tool t, or nil. It is
// looked up by the tool's own name, then by the name as served
// (registry.Normalize).
func (g *Gateway) toolOverride(t *registry.Tool) *config.ToolOverride {
	cfg := g.h.Config()
	if cfg == nil {
		return nil
	}
	s := cfg.Server(t.Server)
	if s == nil || s.Tools == nil || len(s.Tools.Overrides) == 0 {
		return nil
	}
	if o := s.Tools.Override(t.Original); o != nil {
		return o
	}
	return s.Tools.Override(registry.Normalize(t.Original))
}

// overridden applies o's title, description and annotations to mt, a
// definition of the gateway's own (serverTool's copy), and returns it.
func overridden(mt *mcp.Tool, o *config.ToolOverride) *mcp.Tool {
	if o == nil {
		return mt
	}
	if o.Title != "" {
		mt.Title = o.Title
	}
	if o.Description != "" {
		mt.Description = o.Description
	}
	if a := o.Annotations; a != nil {
		if mt.Annotations == nil {
			mt.Annotations = &mcp.ToolAnnotations{}
		}
		if a.Title != nil {
			mt.Annotations.Title = *a.Title
		}
		if a.ReadOnlyHint != nil {
			mt.Annotations.ReadOnlyHint = *a.ReadOnlyHint
		}
		if a.DestructiveHint != nil {
			v := *a.DestructiveHint
			mt.Annotations.DestructiveHint = &v
		}
		if a.IdempotentHint != nil {
			mt.Annotations.IdempotentHint = *a.IdempotentHint
		}
		if a.OpenWorldHint != nil {
			v := *a.OpenWorldHint
			mt.Annotations.OpenWorldHint = &v
		}
	}
	return mt
}

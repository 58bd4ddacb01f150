package config

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host/permissions"
)

// ToolFilter limits which of a server's tools are served, for everyone (a
// server's tools { include = [...], exclude = [...] } block). Patterns are
// globs (* any run of characters, ? one) over the server's own tool names.
// A tool is served if it matches an include pattern (or there are none)
// and no exclude pattern. A tool left out is not listed and cannot be
// called; the authenticate pseudo-tool of a server that needs a login is
// never left out.
type ToolFilter struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// Allows reports whether the server's tool named tool is served.
func (f *ToolFilter) Allows(tool string) bool {
	if f == nil {
		return true
	}
	for _, p := range f.Exclude {
		if permissions.Glob(p, tool) {
			return false
		}
	}
	if len(f.Include) == 0 {
		return true
	}
	for _, p := range f.Include {
		if permissions.Glob(p, tool) {
			return true
		}
	}
	return false
}

var toolFilterSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "include"}, {Name: "exclude"}}}

func decodeToolFilter(b *hcl.Block, ctx *hcl.EvalContext) (*ToolFilter, hcl.Diagnostics) {
	content, diags := b.Body.Content(toolFilterSchema)
	diags = explainUnsupported(diags, toolFilterSchema)
	f := &ToolFilter{}
	for name, dst := range map[string]*[]string{"include": &f.Include, "exclude": &f.Exclude} {
		a := content.Attributes[name]
		if a == nil {
			continue
		}
		diags = append(diags, decodeExpr(a.Expr, ctx, dst)...)
		for _, p := range *dst {
			if p == "" {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid tool pattern",
					"%s lists the server's own tool names or globs (e.g. \"create_*\"); an empty pattern matches nothing.", name))
			}
		}
	}
	if a := content.Attributes["include"]; a != nil && len(f.Include) == 0 && !diags.HasErrors() {
		diags = append(diags, warnf(a.Expr.Range().Ptr(), "No tools included", "include = [] serves none of the server's tools."))
	}
	return f, diags
}

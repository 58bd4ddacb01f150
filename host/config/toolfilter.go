package config

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// ToolFilter limits which of a server's tools are served, for everyone (a
// server's tools { include = [...], exclude = [...] } block). Patterns are
// globs (* any run of characters, ? one) over the server's own tool names.
// A tool is served if it matches an include pattern (or there are none)
// and no exclude pattern. A tool left out is not listed and cannot be
// called; the authenticate pseudo-tool of a server that needs a login is
// never left out.
//
// Patterns see the name as the server gives it and as it is served
// (registry.Normalize: invisible characters removed, NFKC-folded, so
// "del\u200bete_x" and full-width "ｄｅｌｅｔｅ_x" are both "delete_x"): a
// tool is excluded if either form matches an exclude pattern, ignoring
// case, and included if either form matches an include pattern.
//
// Overrides (override "TOOL" blocks) change how tools are served, by the
// server's own tool name (see ToolOverride).
type ToolFilter struct {
	Include   []string                 `json:"include,omitempty"`
	Exclude   []string                 `json:"exclude,omitempty"`
	Overrides map[string]*ToolOverride `json:"overrides,omitempty"`
}

// Allows reports whether the server's tool named tool is served.
func (f *ToolFilter) Allows(tool string) bool {
	if f == nil {
		return true
	}
	served := registry.Normalize(tool)
	if len(f.Exclude) > 0 {
		lowRaw, lowServed := strings.ToLower(tool), strings.ToLower(served)
		for _, p := range f.Exclude {
			p = strings.ToLower(p)
			if permissions.Glob(p, lowRaw) || permissions.Glob(p, lowServed) {
				return false
			}
		}
	}
	if len(f.Include) == 0 {
		return true
	}
	for _, p := range f.Include {
		if permissions.Glob(p, tool) || permissions.Glob(p, served) {
			return true
		}
	}
	return false
}

// toolsBlock is a server's tools block as written.
type toolsBlock struct {
	Include []string `hcl:"include,optional"`
	Exclude []string `hcl:"exclude,optional"`
	// IncludeRange and ExcludeRange are where the values are (zero when
	// not set).
	IncludeRange hcl.Range `hcl:"include,attr_value_range"`
	ExcludeRange hcl.Range `hcl:"exclude,attr_value_range"`
	// Overrides are the override "TOOL" blocks.
	Overrides []*overrideBlock `hcl:"override,block"`
	DefRange  hcl.Range        `hcl:",def_range"`
}

// filter checks the block and returns its filter. quiet leaves out the
// warning for include = [] (the server has errors to fix first).
func (b *toolsBlock) filter(quiet bool) (*ToolFilter, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	for _, list := range []struct {
		name     string
		patterns []string
		rng      hcl.Range
	}{{"include", b.Include, b.IncludeRange}, {"exclude", b.Exclude, b.ExcludeRange}} {
		for _, p := range list.patterns {
			if p == "" {
				diags = append(diags, errorf(list.rng.Ptr(), "Invalid tool pattern",
					"%s lists the server's own tool names or globs (e.g. \"create_*\"); an empty pattern matches nothing.", list.name))
			}
		}
	}
	if b.IncludeRange != (hcl.Range{}) && len(b.Include) == 0 && !quiet && !diags.HasErrors() {
		diags = append(diags, warnf(b.IncludeRange.Ptr(), "No tools included", "include = [] serves none of the server's tools."))
	}
	f := &ToolFilter{Include: b.Include, Exclude: b.Exclude}
	if len(b.Overrides) > 0 {
		o, d := overrides(b.Overrides)
		diags = append(diags, d...)
		f.Overrides = o
	}
	return f, diags
}

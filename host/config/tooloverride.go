package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/mcphost/mcphost/host/registry"
)

// ToolOverride changes how one of a server's tools is served (a server's
// tools { override "TOOL" { … } } block). It shapes what clients see only:
// the tool keeps its canonical name (mcp__SERVER__TOOL, TOOL the server's
// own name) for permission rules, pins, audit and logs, and its pin stays
// on the server's own definition.
type ToolOverride struct {
	// Name, if set, replaces the tool part of the served name
	// (mcp__SERVER__NAME under naming "prefixed", SERVER__NAME under
	// "server", NAME under "bare").
	Name string `json:"name,omitempty"`
	// Title and Description, if set, replace the server's.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Annotations, if set, replace the server's annotations of the same
	// name; the others stay.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are the tool annotations an override sets (nil: the
// server's stay). The keys are the protocol's.
type ToolAnnotations struct {
	Title           *string `json:"title,omitempty"`
	ReadOnlyHint    *bool   `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool   `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool   `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool   `json:"openWorldHint,omitempty"`
}

// Override returns the override of the server's tool named tool (its own
// name), or nil.
func (f *ToolFilter) Override(tool string) *ToolOverride {
	if f == nil {
		return nil
	}
	return f.Overrides[tool]
}

// overrideBlock is a tools block's override "TOOL" block as written.
type overrideBlock struct {
	Tool             string    `hcl:"tool,label"`
	Name             *string   `hcl:"name,optional"`
	Title            *string   `hcl:"title,optional"`
	Description      *string   `hcl:"description,optional"`
	Annotations      cty.Value `hcl:"annotations,optional"`
	NameRange        hcl.Range `hcl:"name,attr_value_range"`
	TitleRange       hcl.Range `hcl:"title,attr_value_range"`
	DescriptionRange hcl.Range `hcl:"description,attr_value_range"`
	AnnotationsRange hcl.Range `hcl:"annotations,attr_value_range"`
	DefRange         hcl.Range `hcl:",def_range"`
}

// annotationKeys are the keys an override's annotations may set.
var annotationKeys = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// maxOverrideNameLen is the longest name an override gives a tool (its
// served name may be shortened further, as any registry name is).
const maxOverrideNameLen = 64

// overrides checks a tools block's override blocks and returns them by
// tool.
func overrides(blocks []*overrideBlock) (map[string]*ToolOverride, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	out := map[string]*ToolOverride{}
	first := map[string]hcl.Range{}     // tool → its override block
	firstName := map[string]hcl.Range{} // name → the override giving it
	for _, b := range blocks {
		if b.Tool == "" {
			diags = append(diags, errorf(&b.DefRange, "Invalid tool override", "override takes the server's own name of a tool: override \"create_issue\" { … }."))
			continue
		}
		if r, dup := first[b.Tool]; dup {
			diags = append(diags, errorf(&b.DefRange, "Duplicate tool override", "Tool %q has at most one override; the first is at %s.", b.Tool, r))
			continue
		}
		first[b.Tool] = b.DefRange
		o := &ToolOverride{}
		if b.Name != nil {
			n := *b.Name
			switch {
			case n == "" || len(n) > maxOverrideNameLen || registry.Normalize(n) != n:
				diags = append(diags, errorf(b.NameRange.Ptr(), "Invalid tool name",
					"name must be 1 to %d of the characters a-z, A-Z, 0-9, '_' and '-', got %q.", maxOverrideNameLen, n))
			case strings.HasPrefix(n, "_") || strings.HasSuffix(n, "_") || strings.Contains(n, registry.Separator):
				diags = append(diags, errorf(b.NameRange.Ptr(), "Invalid tool name",
					"name %q may not start or end with '_' nor contain %q: served names would read ambiguously.", n, registry.Separator))
			default:
				if r, dup := firstName[n]; dup {
					diags = append(diags, errorf(b.NameRange.Ptr(), "Duplicate tool name", "Two tools of a server cannot be served as %q; the other override is at %s.", n, r))
				} else {
					firstName[n] = b.DefRange
					o.Name = n
				}
			}
		}
		if b.Title != nil {
			o.Title = *b.Title
		}
		if b.Description != nil {
			if *b.Description == "" {
				diags = append(diags, errorf(b.DescriptionRange.Ptr(), "Empty description", "description replaces the server's; leave it out to keep it."))
			}
			o.Description = *b.Description
		}
		if !b.Annotations.IsNull() {
			a, d := decodeAnnotations(b.Annotations, b.AnnotationsRange)
			diags = append(diags, d...)
			o.Annotations = a
		}
		if b.Name == nil && b.Title == nil && b.Description == nil && b.Annotations.IsNull() {
			diags = append(diags, warnf(&b.DefRange, "Empty tool override", "The override of %q sets none of name, title, description, annotations.", b.Tool))
		}
		out[b.Tool] = o
	}
	return out, diags
}

// decodeAnnotations reads an override's annotations object.
func decodeAnnotations(v cty.Value, rng hcl.Range) (*ToolAnnotations, hcl.Diagnostics) {
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return nil, hcl.Diagnostics{errorf(rng.Ptr(), "Invalid annotations",
			"annotations is an object of %s, e.g. { readOnlyHint = true }.", strings.Join(annotationKeys, ", "))}
	}
	if !v.IsWhollyKnown() {
		return nil, hcl.Diagnostics{errorf(rng.Ptr(), "Invalid annotations", "annotations must be known when the configuration is read.")}
	}
	var diags hcl.Diagnostics
	a := &ToolAnnotations{}
	keys := make([]string, 0)
	for k := range v.AsValueMap() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := v.GetAttr(k)
		if v.Type().IsMapType() {
			e = v.Index(cty.StringVal(k))
		}
		want, dst := cty.Bool, (**bool)(nil)
		switch k {
		case "title":
			s, err := convert.Convert(e, cty.String)
			if err != nil || s.IsNull() {
				diags = append(diags, errorf(rng.Ptr(), "Invalid annotations", "annotations.title must be a string."))
				continue
			}
			t := s.AsString()
			a.Title = &t
			continue
		case "readOnlyHint":
			dst = &a.ReadOnlyHint
		case "destructiveHint":
			dst = &a.DestructiveHint
		case "idempotentHint":
			dst = &a.IdempotentHint
		case "openWorldHint":
			dst = &a.OpenWorldHint
		default:
			diags = append(diags, errorf(rng.Ptr(), "Invalid annotations",
				"annotations has no key %q: the keys are %s.", k, strings.Join(annotationKeys, ", ")))
			continue
		}
		if e.Type() != want || e.IsNull() {
			diags = append(diags, errorf(rng.Ptr(), "Invalid annotations", "annotations.%s must be true or false, got %s.", k, describe(e)))
			continue
		}
		b := e.True()
		*dst = &b
	}
	return a, diags
}

// describe names a value's type for a diagnostic.
func describe(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return fmt.Sprintf("a %s", v.Type().FriendlyName())
}

// GetName returns o's Name, or "" for a nil o.
func (o *ToolOverride) GetName() string {
	if o == nil {
		return ""
	}
	return o.Name
}

// Unnamed returns o without its Name (nil for a nil o).
func (o *ToolOverride) Unnamed() *ToolOverride {
	if o == nil || o.Name == "" {
		return o
	}
	c := *o
	c.Name = ""
	return &c
}

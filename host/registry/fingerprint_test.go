package registry

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// TestFingerprint: the pin's fingerprint covers what reaches clients — the
// output schema, icons, _meta (less reserved members) and execution too —
// and is, for a tool with none of those, what earlier versions computed
// (their pins still match); for the others, PriorFingerprint is that.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	base := func() *mcp.Tool {
		return &mcp.Tool{Name: "t", Title: "T", Description: "d", InputSchema: map[string]any{"type": "object"}}
	}
	// (As earlier versions computed it for base: a pin they recorded.)
	const prior = "c6e08cf473dc39497110cfface3a86872c46b08e5e411393d77b05b01e8dd9c6"
	if got := Fingerprint(base()); got != prior {
		t.Errorf("Fingerprint of a plain tool %s, want the earlier %s", got, prior)
	}
	if got := PriorFingerprint(base()); got != "" {
		t.Errorf("PriorFingerprint of a plain tool %q, want none", got)
	}
	with := func(f func(*mcp.Tool)) *mcp.Tool { x := base(); f(x); return x }
	apps := func(uri string) func(*mcp.Tool) {
		return func(x *mcp.Tool) { x.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": uri}} }
	}
	variants := []struct {
		name string
		tool *mcp.Tool
	}{
		{"ui.resourceUri", with(apps("ui://a/view.html"))},
		{"another ui.resourceUri", with(apps("ui://b/view.html"))},
		{"icons", with(func(x *mcp.Tool) { x.Icons = []mcp.Icon{{Source: "https://example.com/i.png"}} })},
		{"execution", with(func(x *mcp.Tool) { x.Meta = mcp.Meta{mcpmeta.ExecutionKey: map[string]any{"taskSupport": "optional"}} })},
		{"execution required", with(func(x *mcp.Tool) { x.Meta = mcp.Meta{mcpmeta.ExecutionKey: map[string]any{"taskSupport": "required"}} })},
		{"output schema", with(func(x *mcp.Tool) { x.OutputSchema = map[string]any{"type": "object"} })},
	}
	seen := map[string]string{prior: "plain"}
	for _, v := range variants {
		fp := Fingerprint(v.tool)
		if other, dup := seen[fp]; dup {
			t.Errorf("%s: fingerprint equal to %s's", v.name, other)
		}
		seen[fp] = v.name
		if got := PriorFingerprint(v.tool); got != prior {
			t.Errorf("%s: PriorFingerprint %q, want the earlier %s", v.name, got, prior)
		}
	}
	// Reserved members describe one hop: not the definition.
	hop := with(func(x *mcp.Tool) { x.Meta = mcp.Meta{"io.modelcontextprotocol/x": 1} })
	if got := Fingerprint(hop); got != prior {
		t.Errorf("Fingerprint with a reserved _meta member %s, want %s", got, prior)
	}
	if rt, err := convertTool("s", variants[0].tool); err != nil || rt.Fingerprint != Fingerprint(variants[0].tool) || rt.PriorFingerprint != prior {
		t.Errorf("convertTool: %+v %v", rt, err)
	}
}

package intercept

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
)

// BenchmarkPlanUnmatched is the cost a call matched by no check pays when
// checks are configured: one cache lookup (goal: ≤ 50 ns, no allocation).
func BenchmarkPlanUnmatched(b *testing.B) {
	c := NewChain([]*Entry{
		hook(HookPreToolUse, &fake{}, func(e *Entry) {
			e.Match.Matcher = func(n string) bool { return strings.HasPrefix(n, "mcp__other__") }
		}),
		icpt("guard", &fake{}, func(e *Entry) { e.Match.Tools = []string{"mcp__other__*"} }),
		icpt("eng", &fake{}, func(e *Entry) {
			e.Match.Servers = []string{"other"}
			e.Match.Principals = &permissions.Principals{Groups: []string{"eng"}}
		}),
	})
	who := &inbound.Principal{Subject: "alice", Groups: []string{"eng"}}
	b.ReportAllocs()
	for b.Loop() {
		if c.ForTool("mcp__demo__echo", "demo", who) != nil {
			b.Fatal("matched")
		}
	}
}

// BenchmarkPlanMatched is the lookup of a call some check matches (no
// principal condition): the cached plan.
func BenchmarkPlanMatched(b *testing.B) {
	c := NewChain([]*Entry{icpt("v", &fake{}, func(e *Entry) { e.Kind = KindBuiltin })})
	b.ReportAllocs()
	for b.Loop() {
		if c.ForTool("mcp__demo__echo", "demo", nil) == nil {
			b.Fatal("unmatched")
		}
	}
}

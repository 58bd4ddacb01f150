package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"
)

// TestTraceCheck checks the span of a hook or interceptor that ran for a
// tool call: one per check, a child of the tool call's span, with its own
// times and its name, kind, event and decision.
func TestTraceCheck(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	ctx, call := r.StartToolCall(context.Background(), "github", "mcp__github__create_issue")
	t0 := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	checks := []CheckSpan{
		{Name: "PreToolUse", Kind: "hook", Event: "tools/call/request", Decision: "allow", Start: t0, End: t0.Add(40 * time.Millisecond)},
		{Name: "guard", Kind: "plugin", Event: "tools/call/response", Decision: "mutate", Start: t0.Add(50 * time.Millisecond), End: t0.Add(51 * time.Millisecond)},
		{Name: "guard", Kind: "plugin", Event: "tools/call/response", Decision: "mutate", Start: t0.Add(60 * time.Millisecond), End: t0.Add(61 * time.Millisecond)}, // (the cached start options)
	}
	for _, c := range checks {
		r.TraceCheck(ctx, c)
	}
	call.End(nil)
	var got []CheckSpan
	var parent trace.SpanID
	for _, s := range r.ended(t) {
		if s.Name == "execute_tool mcp__github__create_issue" {
			parent = s.SpanContext.SpanID()
		}
	}
	for _, s := range r.ended(t) {
		if s.Name != CheckSpanName {
			continue
		}
		if s.SpanKind != trace.SpanKindInternal {
			t.Errorf("kind %v, want internal", s.SpanKind)
		}
		if s.Parent.SpanID() != parent || !parent.IsValid() {
			t.Errorf("parent %v, want the tool call's %v", s.Parent.SpanID(), parent)
		}
		a := attrMap(s.Attributes)
		if len(a) != 4 {
			t.Errorf("attributes %v, want 4", a)
		}
		got = append(got, CheckSpan{Name: a["mcphost.check.name"], Kind: a["mcphost.check.kind"], Event: a["mcphost.check.event"],
			Decision: a["mcphost.check.decision"], Start: s.StartTime.UTC(), End: s.EndTime.UTC()})
	}
	if diff := cmp.Diff(checks, got); diff != "" {
		t.Errorf("check spans (-want +got):\n%s", diff)
	}
}

// TestTraceCheckDisabled: a disabled Telemetry records nothing and
// allocates nothing. (Not parallel: AllocsPerRun.)
func TestTraceCheckDisabled(t *testing.T) {
	var tel *Telemetry
	c := CheckSpan{Name: "n", Kind: "builtin", Event: "tools/call/request", Decision: "pass"}
	if n := testing.AllocsPerRun(100, func() { tel.TraceCheck(context.Background(), c) }); n != 0 {
		t.Errorf("TraceCheck allocates %v times, want 0", n)
	}
}

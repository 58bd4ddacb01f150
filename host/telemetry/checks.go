package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The attributes of a check's span (CheckSpanName).
const (
	// AttrCheckName is a hook's event or an interceptor's configured name.
	AttrCheckName = attribute.Key("mcphost.check.name")
	// AttrCheckKind is hook, plugin, server or builtin.
	AttrCheckKind = attribute.Key("mcphost.check.kind")
	// AttrCheckEvent is the event and phase checked: "tools/call/request".
	AttrCheckEvent = attribute.Key("mcphost.check.event")
	// AttrCheckDecision is the check's decision: pass, allow, ask, deny,
	// mutate, error, timeout, would_deny or would_mutate.
	AttrCheckDecision = attribute.Key("mcphost.check.decision")
)

// CheckSpanName is the name of a check's span.
const CheckSpanName = "mcphost.check"

// CheckSpan is one hook or interceptor that ran for a call, as its span
// records it. Its fields are configured names and fixed words only, never
// a reason or other text a check returned.
type CheckSpan struct {
	Name, Kind, Event, Decision string
	// Start and End are when the check ran.
	Start, End time.Time
}

// TraceCheck records the INTERNAL span "mcphost.check" of a check that
// ran from c.Start to c.End, with its name, kind, event and decision as
// attributes, under ctx's span (a tool call's: StartToolCall; a request's:
// StartRequest). The span is recorded after the fact, with the check's own
// times.
func (t *Telemetry) TraceCheck(ctx context.Context, c CheckSpan) {
	if t == nil || t.tracer == nil {
		return
	}
	st := t.starts.get(startKey{kind: startCheck, a: c.Name, b: c.Kind, c: c.Event, d: c.Decision}, func() spanStart {
		return spanStart{opts: []trace.SpanStartOption{kindInternal, trace.WithAttributes(
			AttrCheckName.String(c.Name),
			AttrCheckKind.String(c.Kind),
			AttrCheckEvent.String(c.Event),
			AttrCheckDecision.String(c.Decision),
		)}}
	})
	opts := make([]trace.SpanStartOption, 0, len(st.opts)+1)
	opts = append(append(opts, st.opts...), trace.WithTimestamp(c.Start))
	_, s := t.tracer.Start(ctx, CheckSpanName, opts...)
	s.End(trace.WithTimestamp(c.End))
}

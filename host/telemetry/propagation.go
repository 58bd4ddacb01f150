package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// w3c propagates W3C Trace Context (traceparent, tracestate) and W3C
// Baggage. It holds no state.
var w3c propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Field names of W3C trace context, in HTTP headers and in params._meta.
const (
	FieldTraceparent = "traceparent"
	FieldTracestate  = "tracestate"
	FieldBaggage     = "baggage"
)

// Propagator returns the W3C Trace Context + Baggage propagator that
// InjectMeta, ExtractMeta, Transport and ExtractHTTP use, for other
// carriers (e.g. plugin RPC metadata).
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return w3c }

// InjectMeta writes the trace context of ctx (traceparent, tracestate,
// baggage) into meta, a request's params._meta, replacing any there, and
// returns meta (a new map if meta was nil). It does nothing, and does not
// allocate, when traces are off or ctx carries no trace context. meta must
// belong to the caller: no other goroutine may use it meanwhile.
func (t *Telemetry) InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	if t == nil || t.tracer == nil {
		return meta
	}
	if !trace.SpanContextFromContext(ctx).IsValid() && baggage.FromContext(ctx).Len() == 0 {
		return meta
	}
	if meta == nil {
		meta = make(map[string]any, 2)
	}
	w3c.Inject(ctx, MetaCarrier(meta))
	return meta
}

// ExtractMeta returns ctx with the trace context that meta, a request's
// params._meta, carries (as a remote parent); ctx itself when traces are
// off or meta carries none.
func (t *Telemetry) ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	if t == nil || t.tracer == nil || meta == nil {
		return ctx
	}
	_, tp := meta[FieldTraceparent]
	_, bg := meta[FieldBaggage]
	if !tp && !bg {
		return ctx
	}
	return w3c.Extract(ctx, MetaCarrier(meta))
}

// ExtractHTTP returns ctx with the trace context of the HTTP headers h; ctx
// itself when traces are off or h carries none.
func (t *Telemetry) ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	if t == nil || t.tracer == nil {
		return ctx
	}
	if len(h["Traceparent"]) == 0 && len(h["Baggage"]) == 0 { // canonical keys: no allocation
		return ctx
	}
	return w3c.Extract(ctx, propagation.HeaderCarrier(h))
}

// MetaCarrier adapts a params._meta map to a propagation.TextMapCarrier:
// string members are its fields; other members are ignored.
type MetaCarrier map[string]any

var _ propagation.TextMapCarrier = MetaCarrier(nil)

// Get returns the string member key, or "".
func (m MetaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set sets the member key to value.
func (m MetaCarrier) Set(key, value string) { m[key] = value }

// Keys returns the names of the string members.
func (m MetaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(string); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

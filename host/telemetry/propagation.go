package telemetry

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"slices"

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

// TraceMembers returns what InjectMeta would write into an empty _meta,
// encoded as the members of a JSON object without its braces, in key
// order ("traceparent":"00-…"), for a request written as raw JSON; nil
// when traces are off or ctx carries no trace context. The usual context —
// a span context without tracestate, no baggage — is written directly: one
// allocation, where InjectMeta and encoding the map take a dozen.
func (t *Telemetry) TraceMembers(ctx context.Context) []byte {
	if t == nil || t.tracer == nil {
		return nil
	}
	sc := trace.SpanContextFromContext(ctx)
	if baggage.FromContext(ctx).Len() > 0 || sc.TraceState().Len() > 0 {
		return encodeMembers(t.InjectMeta(ctx, nil))
	}
	if !sc.IsValid() {
		return nil
	}
	// As propagation.TraceContext writes it: version 00, the trace and
	// span ids, and the flags it defines (sampled, random), in hex.
	tid, sid := sc.TraceID(), sc.SpanID()
	flags := sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom)
	b := make([]byte, 0, len(`"traceparent":"00---xx"`)+2*len(tid)+2*len(sid))
	b = append(b, `"traceparent":"00-`...)
	b = hex.AppendEncode(b, tid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, []byte{byte(flags)})
	return append(b, '"')
}

// encodeMembers encodes meta as the members of a JSON object, without its
// braces, in key order; nil for an empty meta.
func encodeMembers(meta map[string]any) []byte {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(meta[k])
		if err != nil {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return b
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

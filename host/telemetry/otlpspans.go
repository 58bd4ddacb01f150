package telemetry

import (
	"context"
	"fmt"
	"math"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// spanExporter is the OTLP span exporter: otlptrace.Exporter's, with
// the OTLP exporters' own clients (otlptracehttp, otlptracegrpc: their
// endpoints, headers, TLS, compression, retries and OTEL_EXPORTER_OTLP_*
// variables), but a cheaper conversion of the spans to OTLP messages.
//
// otlptrace.Exporter converts each span into about twenty objects (three
// per attribute, the ids, the status), so that on the gateway's hot path
// the conversion was most of what telemetry allocates per call. Here the
// messages of a batch are allocated in blocks, and the attributes of
// mcphost's own spans, the same for every call of a tool (its name,
// server, method, outcome …), are converted once and shared by every
// span that carries them (a proto message is only read when it is
// marshalled); the resource and the scope too. The messages are what
// otlptrace.Exporter sends, field for field (TestSpanExporterMatchesOTLP).
type spanExporter struct {
	client otlptrace.Client

	attrs     boundedCache[attribute.KeyValue, *commonpb.KeyValue]
	statuses  boundedCache[sdktrace.Status, *tracepb.Status]
	resources boundedCache[attribute.Distinct, *resourcepb.Resource]
	scopes    boundedCache[instrumentation.Scope, *commonpb.InstrumentationScope]

	stopOnce sync.Once
	stopErr  error
}

// newSpanExporter starts client and returns the exporter that sends by
// it.
func newSpanExporter(ctx context.Context, client otlptrace.Client) (*spanExporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &spanExporter{client: client}, nil
}

// ExportSpans converts ss and uploads them.
func (e *spanExporter) ExportSpans(ctx context.Context, ss []sdktrace.ReadOnlySpan) error {
	rss := e.convert(ss)
	if len(rss) == 0 {
		return nil
	}
	if err := e.client.UploadTraces(ctx, rss); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the client; later exports fail as the client's do.
func (e *spanExporter) Shutdown(ctx context.Context) error {
	e.stopOnce.Do(func() { e.stopErr = e.client.Stop(ctx) })
	return e.stopErr
}

// idBytes is the room a span's ids take: trace id, span id, parent id.
const idBytes = 16 + 8 + 8

// convert converts ss to OTLP messages, grouped by resource then by
// instrumentation scope.
func (e *spanExporter) convert(ss []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	n, nattrs := 0, 0
	for _, sd := range ss {
		if sd != nil {
			n++
			nattrs += len(sd.Attributes())
		}
	}
	if n == 0 {
		return nil
	}
	// The batch's spans, ids and attribute lists, in one block each.
	spans := make([]tracepb.Span, n)
	ids := make([]byte, n*idBytes)
	kvs := make([]*commonpb.KeyValue, nattrs)
	var a arena
	var resources []*tracepb.ResourceSpans
	var resKeys []attribute.Distinct
	type group struct {
		res   attribute.Distinct
		scope instrumentation.Scope
		ss    *tracepb.ScopeSpans
	}
	var groups []group
	i := 0
	for _, sd := range ss {
		if sd == nil {
			continue
		}
		s := &spans[i]
		id := ids[i*idBytes : (i+1)*idBytes : (i+1)*idBytes]
		i++
		scope := sd.InstrumentationScope()
		if attrs := sd.Attributes(); len(attrs) > 0 {
			s.Attributes, kvs = kvs[:len(attrs):len(attrs)], kvs[len(attrs):]
			ours := scope.Name == ScopeName
			for j, kv := range attrs {
				s.Attributes[j] = e.keyValue(&a, kv, ours)
			}
		}
		e.fill(s, sd, id)

		res := sd.Resource()
		rk := res.Equivalent()
		gi := -1
		for k := range groups {
			if groups[k].res == rk && groups[k].scope == scope {
				gi = k
				break
			}
		}
		if gi < 0 {
			scopeSpans := &tracepb.ScopeSpans{Scope: e.scope(scope), SchemaUrl: scope.SchemaURL}
			ri := -1
			for k := range resKeys {
				if resKeys[k] == rk {
					ri = k
					break
				}
			}
			if ri < 0 {
				resources = append(resources, &tracepb.ResourceSpans{Resource: e.resource(res), SchemaUrl: res.SchemaURL()})
				resKeys = append(resKeys, rk)
				ri = len(resources) - 1
			}
			resources[ri].ScopeSpans = append(resources[ri].ScopeSpans, scopeSpans)
			groups = append(groups, group{res: rk, scope: scope, ss: scopeSpans})
			gi = len(groups) - 1
		}
		groups[gi].ss.Spans = append(groups[gi].ss.Spans, s)
	}
	return resources
}

// fill sets s's fields other than its attributes from sd, its ids in id
// (idBytes long).
func (e *spanExporter) fill(s *tracepb.Span, sd sdktrace.ReadOnlySpan, id []byte) {
	sc := sd.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(id[:16], tid[:])
	copy(id[16:24], sid[:])
	s.TraceId, s.SpanId = id[:16:16], id[16:24:24]
	if ts := sc.TraceState(); ts.Len() > 0 {
		s.TraceState = ts.String()
	}
	parent := sd.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		copy(id[24:], psid[:])
		s.ParentSpanId = id[24:32:32]
	}
	s.Flags = spanFlags(sc.TraceFlags(), parent)
	s.Name = sd.Name()
	s.Kind = spanKind(sd.SpanKind())
	s.StartTimeUnixNano = unixNano(sd.StartTime().UnixNano())
	s.EndTimeUnixNano = unixNano(sd.EndTime().UnixNano())
	s.Status = e.status(sd.Status())
	s.Links = e.links(sd.Links())
	s.Events = e.events(sd.Events())
	s.DroppedAttributesCount = clampUint32(sd.DroppedAttributes())
	s.DroppedEventsCount = clampUint32(sd.DroppedEvents())
	s.DroppedLinksCount = clampUint32(sd.DroppedLinks())
}

// uncached are the attributes of mcphost's spans whose values differ
// from call to call: they are converted for each span, never cached.
var uncached = map[attribute.Key]bool{
	semconv.JSONRPCRequestIDKey: true,
	semconv.McpSessionIDKey:     true,
}

// keyValue converts kv. A scalar attribute of one of mcphost's own spans
// (ours), other than those in uncached, is converted once and shared;
// any other is converted for each span, in a.
func (e *spanExporter) keyValue(a *arena, kv attribute.KeyValue, ours bool) *commonpb.KeyValue {
	if ours && scalar(kv.Value.Type()) && !uncached[kv.Key] {
		return e.attrs.get(kv, func() *commonpb.KeyValue {
			return &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(nil, kv.Value)}
		})
	}
	if kv.Value.Type() == attribute.STRING {
		return a.string(string(kv.Key), kv.Value.AsString())
	}
	return &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(nil, kv.Value)}
}

// scalar reports whether attribute values of type t are comparable (as
// map keys).
func scalar(t attribute.Type) bool {
	switch t {
	case attribute.BOOL, attribute.INT64, attribute.FLOAT64, attribute.STRING:
		return true
	}
	return false
}

// arena allocates the string attributes of a batch in blocks.
type arena struct {
	kv []commonpb.KeyValue
	av []commonpb.AnyValue
	sv []commonpb.AnyValue_StringValue
}

// arenaBlock is how many attributes an arena's block holds.
const arenaBlock = 64

// string returns the attribute key = value, a string.
func (a *arena) string(key, value string) *commonpb.KeyValue {
	if len(a.kv) == 0 {
		a.kv = make([]commonpb.KeyValue, arenaBlock)
		a.av = make([]commonpb.AnyValue, arenaBlock)
		a.sv = make([]commonpb.AnyValue_StringValue, arenaBlock)
	}
	kv, av, sv := &a.kv[0], &a.av[0], &a.sv[0]
	a.kv, a.av, a.sv = a.kv[1:], a.av[1:], a.sv[1:]
	sv.StringValue = value
	av.Value = sv
	kv.Key, kv.Value = key, av
	return kv
}

// keyValues converts attrs, each on its own (links, events, resources
// and scopes: rare or cached).
func keyValues(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(attrs))
	for i, kv := range attrs {
		out[i] = &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(nil, kv.Value)}
	}
	return out
}

// anyValue converts v into av (a new one if nil) and returns it.
func anyValue(av *commonpb.AnyValue, v attribute.Value) *commonpb.AnyValue {
	if av == nil {
		av = new(commonpb.AnyValue)
	}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = arrayValue(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		av.Value = arrayValue(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		av.Value = arrayValue(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		av.Value = arrayValue(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		av.Value = arrayValue(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}
	case attribute.EMPTY:
	default:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: "INVALID"}
	}
	return av
}

// arrayValue converts the elements of a slice attribute, each by value.
func arrayValue[T any](vs []T, value func(T) attribute.Value) *commonpb.AnyValue_ArrayValue {
	out := make([]*commonpb.AnyValue, len(vs))
	for i, v := range vs {
		out[i] = anyValue(nil, value(v))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: out}}
}

// status converts st (cached: its description is an error class).
func (e *spanExporter) status(st sdktrace.Status) *tracepb.Status {
	return e.statuses.get(st, func() *tracepb.Status {
		c := tracepb.Status_STATUS_CODE_UNSET
		switch st.Code {
		case codes.Ok:
			c = tracepb.Status_STATUS_CODE_OK
		case codes.Error:
			c = tracepb.Status_STATUS_CODE_ERROR
		}
		return &tracepb.Status{Code: c, Message: st.Description}
	})
}

// resource converts res (cached).
func (e *spanExporter) resource(res *resource.Resource) *resourcepb.Resource {
	if res == nil {
		return nil
	}
	return e.resources.get(res.Equivalent(), func() *resourcepb.Resource {
		return &resourcepb.Resource{Attributes: iterValues(res.Iter())}
	})
}

// scope converts the instrumentation scope sc (cached).
func (e *spanExporter) scope(sc instrumentation.Scope) *commonpb.InstrumentationScope {
	if sc == (instrumentation.Scope{}) {
		return nil
	}
	return e.scopes.get(sc, func() *commonpb.InstrumentationScope {
		return &commonpb.InstrumentationScope{Name: sc.Name, Version: sc.Version, Attributes: iterValues(sc.Attributes.Iter())}
	})
}

// iterValues converts the attributes of it.
func iterValues(it attribute.Iterator) []*commonpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(nil, kv.Value)})
	}
	return out
}

// links converts a span's links.
func (e *spanExporter) links(ls []sdktrace.Link) []*tracepb.Span_Link {
	if len(ls) == 0 {
		return nil
	}
	out := make([]*tracepb.Span_Link, len(ls))
	for i, l := range ls {
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		out[i] = &tracepb.Span_Link{
			TraceId:                tid[:],
			SpanId:                 sid[:],
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: clampUint32(l.DroppedAttributeCount),
			Flags:                  spanFlags(l.SpanContext.TraceFlags(), l.SpanContext),
		}
	}
	return out
}

// events converts a span's events.
func (e *spanExporter) events(es []sdktrace.Event) []*tracepb.Span_Event {
	if len(es) == 0 {
		return nil
	}
	out := make([]*tracepb.Span_Event, len(es))
	for i, ev := range es {
		out[i] = &tracepb.Span_Event{
			Name:                   ev.Name,
			TimeUnixNano:           unixNano(ev.Time.UnixNano()),
			Attributes:             keyValues(ev.Attributes),
			DroppedAttributesCount: clampUint32(ev.DroppedAttributeCount),
		}
	}
	return out
}

// spanFlags are OTLP's span flags: the W3C trace flags, and whether the
// parent is remote (which is known).
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return flags
}

// spanKind converts a span kind.
func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// unixNano is a time in nanoseconds since the epoch, 0 before it.
func unixNano(ns int64) uint64 { return uint64(max(0, ns)) }

// clampUint32 is v within [0, MaxUint32].
func clampUint32(v int) uint32 {
	return uint32(min(max(int64(v), 0), math.MaxUint32))
}

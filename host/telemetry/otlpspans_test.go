package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// uploads is an otlptrace.Client that keeps what it is given to upload,
// marshalled as the OTLP clients marshal it.
type uploads struct {
	got     [][]byte
	started bool
	stopped bool
	err     error // UploadTraces's error
}

func (u *uploads) Start(context.Context) error { u.started = true; return nil }
func (u *uploads) Stop(context.Context) error  { u.stopped = true; return nil }
func (u *uploads) UploadTraces(_ context.Context, rss []*tracepb.ResourceSpans) error {
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rss})
	if err != nil {
		return err
	}
	u.got = append(u.got, b)
	return u.err
}

// exportStubs exports spans by exp, made on a client of its own, and
// returns what the client was given, as one request.
func exportStubs(t *testing.T, spans tracetest.SpanStubs, exporter func(otlptrace.Client) sdktrace.SpanExporter) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	u := &uploads{}
	exp := exporter(u)
	ro := spans.Snapshots()
	// Twice: the second export reads what the first one cached.
	for range 2 {
		if err := exp.ExportSpans(context.Background(), ro); err != nil {
			t.Fatal(err)
		}
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !u.started || !u.stopped || len(u.got) != 2 {
		t.Fatalf("client started %v, stopped %v, %d uploads", u.started, u.stopped, len(u.got))
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	for _, b := range u.got {
		var one coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &one); err != nil {
			t.Fatal(err)
		}
		req.ResourceSpans = append(req.ResourceSpans, one.ResourceSpans...)
	}
	return req
}

// TestSpanExporterMatchesOTLP checks that spanExporter sends what the
// OTLP exporters' own otlptrace.Exporter sends for the same spans: every
// kind of attribute value, links, events, statuses, remote and local
// parents, trace state, dropped counts, and spans of two resources and
// of several scopes — mcphost's, whose attributes it caches, among them.
func TestSpanExporterMatchesOTLP(t *testing.T) {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("vendor=value")
	if err != nil {
		t.Fatal(err)
	}
	sc := func(span byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{span}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: remote})
	}
	res1 := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("mcphost"), attribute.Int("n", 3))
	res2 := resource.NewSchemaless(semconv.ServiceName("other"))
	ours := instrumentation.Scope{Name: ScopeName, SchemaURL: semconv.SchemaURL}
	lib := instrumentation.Scope{Name: "lib", Version: "1.2", Attributes: attribute.NewSet(attribute.Bool("x", true))}
	start := time.Unix(1700000000, 5)
	allKinds := []attribute.KeyValue{
		attribute.Bool("b", true), attribute.Int64("i", -7), attribute.Float64("f", 1.5), attribute.String("s", "v"),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, 2}),
		attribute.Float64Slice("fs", []float64{0.5}), attribute.StringSlice("ss", []string{"a", "b"}),
	}
	call := func(span byte, id string) tracetest.SpanStub {
		return tracetest.SpanStub{
			Name: "tools/call mcp__a__echo", SpanContext: sc(span, false), Parent: sc(span+100, true), SpanKind: trace.SpanKindServer,
			StartTime: start, EndTime: start.Add(time.Millisecond),
			Attributes: []attribute.KeyValue{
				semconv.McpMethodNameKey.String(MethodToolsCall), semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("mcp__a__echo"),
				AttrServerName.String("a"), semconv.JSONRPCRequestID(id), semconv.McpSessionID("sess"),
			},
			Status: sdktrace.Status{Code: codes.Error, Description: ErrorTypeToolError}, Resource: res1, InstrumentationScope: ours,
		}
	}
	spans := tracetest.SpanStubs{
		call(1, "1"),
		call(2, "2"),
		{
			Name: DecisionSpanName, SpanContext: sc(3, false), Parent: sc(1, false), SpanKind: trace.SpanKindInternal,
			StartTime: start, EndTime: start, Attributes: append(allKinds, AttrOutcome.String("allow")),
			Resource: res1, InstrumentationScope: ours, DroppedAttributes: 2, DroppedEvents: 1, DroppedLinks: 4,
		},
		{
			Name: "GET", SpanContext: sc(4, false), SpanKind: trace.SpanKindClient, StartTime: start, EndTime: start.Add(time.Second),
			Attributes: allKinds,
			Links:      []sdktrace.Link{{SpanContext: sc(9, true), Attributes: []attribute.KeyValue{attribute.String("l", "v")}, DroppedAttributeCount: 1}},
			Events:     []sdktrace.Event{{Name: "e", Time: start, Attributes: []attribute.KeyValue{attribute.Int("n", 1)}, DroppedAttributeCount: 2}},
			Status:     sdktrace.Status{Code: codes.Ok}, Resource: res1, InstrumentationScope: lib,
		},
		{Name: "no attributes", SpanContext: sc(5, false), SpanKind: trace.SpanKindProducer, StartTime: start, EndTime: start, Resource: res2, InstrumentationScope: ours},
		{Name: "consumer", SpanContext: sc(6, false), SpanKind: trace.SpanKindConsumer, StartTime: start, EndTime: start, Resource: res1, InstrumentationScope: ours},
	}
	want := exportStubs(t, spans, func(c otlptrace.Client) sdktrace.SpanExporter {
		exp, err := otlptrace.New(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		return exp
	})
	got := exportStubs(t, spans, func(c otlptrace.Client) sdktrace.SpanExporter {
		exp, err := newSpanExporter(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		return exp
	})
	// otlptrace.Exporter orders resources by a map's iteration: compare
	// each of its resources with ours of the same attributes.
	if len(got.ResourceSpans) != len(want.ResourceSpans) {
		t.Fatalf("%d resources, want %d:\n%v", len(got.ResourceSpans), len(want.ResourceSpans), got)
	}
	for _, w := range want.ResourceSpans {
		found := false
		for _, g := range got.ResourceSpans {
			if proto.Equal(g.Resource, w.Resource) && !found {
				found = true
				if !proto.Equal(g, w) {
					t.Errorf("resource spans:\n got %v\nwant %v", g, w)
				}
			}
		}
		if !found {
			t.Errorf("no resource spans of %v", w.Resource)
		}
	}
}

// TestSpanExporterErrors checks that a failed upload's error reaches the
// caller, wrapped, and that an empty batch uploads nothing.
func TestSpanExporterErrors(t *testing.T) {
	boom := errors.New("boom")
	u := &uploads{err: boom}
	exp, err := newSpanExporter(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), nil); err != nil || len(u.got) != 0 {
		t.Fatalf("empty batch: %v, %d uploads", err, len(u.got))
	}
	spans := tracetest.SpanStubs{{Name: "x"}}.Snapshots()
	if err := exp.ExportSpans(context.Background(), spans); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

// BenchmarkSpanExport compares the conversion of a batch of a relayed
// call's spans by otlptrace.Exporter and by spanExporter.
func BenchmarkSpanExport(b *testing.B) {
	res := resource.NewSchemaless(semconv.ServiceName("mcphost"))
	ours := instrumentation.Scope{Name: ScopeName}
	var stubs tracetest.SpanStubs
	for i := range 512 {
		stubs = append(stubs, tracetest.SpanStub{
			Name: "tools/call mcp__a__echo", SpanKind: trace.SpanKindServer,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(i), 1}}),
			Attributes: []attribute.KeyValue{
				semconv.McpMethodNameKey.String(MethodToolsCall), semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName("mcp__a__echo"),
				AttrServerName.String("a"), semconv.JSONRPCRequestID("1"), semconv.McpProtocolVersion("2025-11-25"), semconv.NetworkTransportKey.String(TransportPipe),
			},
			Resource: res, InstrumentationScope: ours,
		})
	}
	spans := stubs.Snapshots()
	for _, c := range []struct {
		name string
		new  func(otlptrace.Client) (sdktrace.SpanExporter, error)
	}{
		{"otlptrace", func(c otlptrace.Client) (sdktrace.SpanExporter, error) { return otlptrace.New(context.Background(), c) }},
		{"mcphost", func(c otlptrace.Client) (sdktrace.SpanExporter, error) {
			return newSpanExporter(context.Background(), c)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			exp, err := c.new(discard{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				exp.ExportSpans(context.Background(), spans)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
		})
	}
}

// discard is an otlptrace.Client that marshals and drops what it gets.
type discard struct{}

func (discard) Start(context.Context) error { return nil }
func (discard) Stop(context.Context) error  { return nil }
func (discard) UploadTraces(_ context.Context, rss []*tracepb.ResourceSpans) error {
	_, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rss})
	return err
}

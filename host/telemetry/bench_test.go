package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/cputime"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkHop measures the telemetry of one tools/call through the
// gateway (hop: 3 spans, trace context in and out, 3 metric records) when
// off and when on: with spans batched to a discarding exporter, and as
// `mcphost serve` exports (otlp+prometheus: OTLP/HTTP to a receiver on
// loopback that discards what it reads, both signals flushed at the end
// within the timing, and a Prometheus registry). cpu-µs/op is the process's
// CPU time per hop (getrusage: the exporters' goroutines included).
func BenchmarkHop(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, bc := range []struct {
		name string
		opts func() *Options // nil: a nil *Telemetry
	}{
		{"nil", nil},
		{"disabled", func() *Options { return &Options{} }},
		{"traces", func() *Options { return &Options{SpanExporter: tracetest.NewNoopExporter()} }},
		{"metrics", func() *Options { return &Options{MetricReader: sdkmetric.NewManualReader()} }},
		{"traces+metrics", func() *Options {
			return &Options{SpanExporter: tracetest.NewNoopExporter(), MetricReader: sdkmetric.NewManualReader()}
		}},
		{"traces+metrics+prometheus", func() *Options { return &Options{SpanExporter: tracetest.NewNoopExporter(), Prometheus: true} }},
		{"otlp+prometheus", func() *Options {
			return &Options{OTLPEndpoint: sink.URL, Traces: true, Metrics: true, Prometheus: true, SampleRatio: 1}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var tel *Telemetry
			if bc.opts != nil {
				o := bc.opts()
				o.LookupEnv = envOf(nil)
				var err error
				if tel, err = New(context.Background(), o); err != nil {
					b.Fatal(err)
				}
				defer tel.Shutdown(context.Background())
			}
			ctx := context.Background()
			meta := map[string]any{"traceparent": clientTraceparent}
			h := http.Header{"Traceparent": {httpTraceparent}}
			b.ReportAllocs()
			cpu0, cpuOK := cputime.Process()
			for b.Loop() {
				hop(tel, ctx, meta, h, nil)
			}
			if err := tel.ForceFlush(ctx); err != nil {
				b.Fatal(err)
			}
			if cpu1, _ := cputime.Process(); cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			}
		})
	}
}

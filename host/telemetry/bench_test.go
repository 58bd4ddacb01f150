package telemetry

import (
	"context"
	"net/http"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkHop measures the telemetry of one tools/call through the
// gateway (hop: 5 spans, trace context in and out, 3 metric records) when
// off and when on, with spans batched to a discarding exporter.
func BenchmarkHop(b *testing.B) {
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
			for b.Loop() {
				hop(tel, ctx, meta, h, nil)
			}
		})
	}
}

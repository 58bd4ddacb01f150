package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// envOf returns a LookupEnv over vars, so tests never read or change the
// process environment.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// recorder is a Telemetry whose spans and metrics tests can read.
type recorder struct {
	*Telemetry
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newRecorder(t testing.TB) *recorder {
	t.Helper()
	r := &recorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel, err := New(context.Background(), &Options{
		SpanExporter: r.spans,
		MetricReader: r.reader,
		LookupEnv:    envOf(nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	r.Telemetry = tel
	return r
}

// ended returns the spans ended so far.
func (r *recorder) ended(t testing.TB) tracetest.SpanStubs {
	t.Helper()
	if err := r.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r.spans.GetSpans()
}

// collect returns the metrics recorded so far.
func (r *recorder) collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// attrMap renders attributes as key → value text.
func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// byName indexes spans by name; names must be unique.
func byName(t testing.TB, spans tracetest.SpanStubs) map[string]tracetest.SpanStub {
	t.Helper()
	m := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		if _, dup := m[s.Name]; dup {
			t.Fatalf("two spans named %q", s.Name)
		}
		m[s.Name] = s
	}
	return m
}

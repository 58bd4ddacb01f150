package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of mcphost's spans and metrics.
const ScopeName = "github.com/mcphost/mcphost/host/telemetry"

// Telemetry is the host's tracer, meters and exporters. A nil *Telemetry
// and a disabled one are valid: every method is then a no-op that does not
// allocate. All methods may be called concurrently.
//
// Telemetry owns the exporters' goroutines (the batch span processor, the
// periodic metric reader); Shutdown ends them.
type Telemetry struct {
	tp      *sdktrace.TracerProvider // nil when traces are off
	mp      *sdkmetric.MeterProvider // nil when metrics are off
	tracer  trace.Tracer             // nil when traces are off
	inst    *instruments             // nil when metrics are off
	handler http.Handler             // nil unless Prometheus

	conns  atomic.Pointer[func(yield func(state string, n int))]
	sets   setCache                          // attribute sets of the per-call metrics
	starts boundedCache[startKey, spanStart] // names and start options of the per-call spans

	shutdownOnce sync.Once
	shutdownErr  error
}

// New starts telemetry as o (nil: defaults) and the OTEL_* variables say;
// when neither asks for it, it returns a disabled Telemetry. Exporters
// connect lazily: New does not fail because a receiver is down. Errors wrap
// ErrConfig.
func New(ctx context.Context, o *Options) (_ *Telemetry, err error) {
	if o == nil {
		o = &Options{}
	}
	p, err := resolve(o)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{}
	if p.disabled || (!p.traces && !p.metrics) {
		return t, nil
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, t.Shutdown(ctx))
		}
	}()
	res := resource.NewWithAttributes(semconv.SchemaURL, append(p.resource,
		semconv.TelemetrySDKName("opentelemetry"),
		semconv.TelemetrySDKLanguageGo,
		semconv.TelemetrySDKVersion(sdk.Version()),
	)...)

	if p.traces {
		exp := o.SpanExporter
		if p.tracesOTLP {
			if exp, err = newOTLPSpanExporter(ctx, p.traceOTLP); err != nil {
				return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
			}
		}
		t.tp = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSampler(p.sampler),
			sdktrace.WithBatcher(exp),
		)
		t.tracer = t.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	}

	if p.metrics {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		if p.prometheus {
			reader, h, err := newPrometheus()
			if err != nil {
				return nil, fmt.Errorf("telemetry: Prometheus exporter: %w", err)
			}
			opts = append(opts, sdkmetric.WithReader(reader))
			t.handler = h
		}
		if o.MetricReader != nil {
			opts = append(opts, sdkmetric.WithReader(o.MetricReader))
		}
		if p.metricsOTLP {
			exp, err := newOTLPMetricExporter(ctx, p.metricOTLP)
			if err != nil {
				return nil, fmt.Errorf("telemetry: OTLP metric exporter: %w", err)
			}
			opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(p.metricInterval))))
		}
		t.mp = sdkmetric.NewMeterProvider(opts...)
		meter := t.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
		if t.inst, err = newInstruments(meter, t.observeConnections); err != nil {
			return nil, fmt.Errorf("telemetry: instruments: %w", err)
		}
	}
	return t, nil
}

// Enabled reports whether any signal is on.
func (t *Telemetry) Enabled() bool { return t != nil && (t.tp != nil || t.mp != nil) }

// Handler returns the Prometheus /metrics handler, or nil unless
// Options.Prometheus (or OTEL_METRICS_EXPORTER=prometheus) asked for it.
// The caller serves it behind the front's authentication.
func (t *Telemetry) Handler() http.Handler {
	if t == nil {
		return nil
	}
	return t.handler
}

// TracerProvider returns the tracer provider, for instrumenting libraries;
// a no-op one when traces are off. It is never installed globally.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil || t.tp == nil {
		return tracenoop.NewTracerProvider()
	}
	return t.tp
}

// MeterProvider returns the meter provider, for instrumenting libraries; a
// no-op one when metrics are off. It is never installed globally.
func (t *Telemetry) MeterProvider() metric.MeterProvider {
	if t == nil || t.mp == nil {
		return metricnoop.NewMeterProvider()
	}
	return t.mp
}

// ForceFlush exports the spans and metrics recorded so far.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.ForceFlush(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}

// Shutdown flushes and stops the exporters and their goroutines. Give ctx
// a deadline: an unreachable OTLP receiver holds Shutdown until ctx ends
// (or the exporter's own 10 s timeout). Later calls return the first one's
// result. Spans and metrics recorded after Shutdown are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.shutdownOnce.Do(func() {
		var errs []error
		if t.tp != nil {
			errs = append(errs, t.tp.Shutdown(ctx))
		}
		if t.mp != nil {
			errs = append(errs, t.mp.Shutdown(ctx))
		}
		t.shutdownErr = errors.Join(errs...)
	})
	return t.shutdownErr
}

package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSignals checks which signals Options and the OTEL_* variables turn
// on, and where they go.
func TestSignals(t *testing.T) {
	t.Parallel()
	type got struct {
		Traces, TracesOTLP, Metrics, MetricsOTLP, Prometheus bool
		TraceEndpoint, MetricEndpoint, Protocol              string
	}
	for _, tc := range []struct {
		name string
		opts Options
		env  map[string]string
		want got
	}{
		{"off by default", Options{}, nil, got{}},
		{"unrelated variables", Options{}, map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, got{}},
		{"Options traces", Options{Traces: true}, nil,
			got{Traces: true, TracesOTLP: true, TraceEndpoint: "http://localhost:4318/v1/traces", Protocol: "http/protobuf"}},
		{"Options metrics", Options{Metrics: true}, nil,
			got{Metrics: true, MetricsOTLP: true, MetricEndpoint: "http://localhost:4318/v1/metrics"}},
		{"Options Prometheus only", Options{Prometheus: true}, nil, got{Metrics: true, Prometheus: true}},
		{"Options endpoint", Options{Traces: true, Metrics: true, OTLPEndpoint: "https://otel.example:4318/"}, nil,
			got{Traces: true, TracesOTLP: true, Metrics: true, MetricsOTLP: true, Protocol: "http/protobuf",
				TraceEndpoint: "https://otel.example:4318/v1/traces", MetricEndpoint: "https://otel.example:4318/v1/metrics"}},
		{"Options grpc", Options{Traces: true, OTLPProtocol: "grpc"}, nil,
			got{Traces: true, TracesOTLP: true, TraceEndpoint: "http://localhost:4317", Protocol: "grpc"}},
		{"OTEL_EXPORTER_OTLP_ENDPOINT turns both on", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			got{Traces: true, TracesOTLP: true, Metrics: true, MetricsOTLP: true, Protocol: "http/protobuf",
				TraceEndpoint: "http://c:4318/v1/traces", MetricEndpoint: "http://c:4318/v1/metrics"}},
		{"signal endpoint is used as is", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:9/t"},
			got{Traces: true, TracesOTLP: true, TraceEndpoint: "http://c:9/t", Protocol: "http/protobuf"}},
		{"OTEL_TRACES_EXPORTER=otlp", Options{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"},
			got{Traces: true, TracesOTLP: true, TraceEndpoint: "http://localhost:4318/v1/traces", Protocol: "http/protobuf"}},
		{"exporter none wins over endpoint", Options{}, map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			got{Metrics: true, MetricsOTLP: true, MetricEndpoint: "http://c:4318/v1/metrics"}},
		{"variables never turn off Options", Options{Traces: true}, map[string]string{"OTEL_TRACES_EXPORTER": "none"},
			got{Traces: true, TracesOTLP: true, TraceEndpoint: "http://localhost:4318/v1/traces", Protocol: "http/protobuf"}},
		{"OTEL_METRICS_EXPORTER=prometheus", Options{}, map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, got{Metrics: true, Prometheus: true}},
		{"OTEL_METRICS_EXPORTER=otlp,prometheus", Options{}, map[string]string{"OTEL_METRICS_EXPORTER": "otlp, prometheus"},
			got{Metrics: true, MetricsOTLP: true, Prometheus: true, MetricEndpoint: "http://localhost:4318/v1/metrics"}},
		{"grpc from variables", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"},
			got{Traces: true, TracesOTLP: true, Metrics: true, MetricsOTLP: true, Protocol: "grpc", TraceEndpoint: "http://c:4317", MetricEndpoint: "http://c:4317"}},
		{"Options endpoint wins", Options{OTLPEndpoint: "http://mine:4318"}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:4318/v1/traces"},
			got{Traces: true, TracesOTLP: true, TraceEndpoint: "http://mine:4318/v1/traces", Protocol: "http/protobuf"}},
		{"OTEL_SDK_DISABLED", Options{Traces: true, Metrics: true, Prometheus: true}, map[string]string{"OTEL_SDK_DISABLED": "TRUE"}, got{}},
		{"test exporters replace OTLP", Options{Traces: true, Metrics: true, SpanExporter: tracetest.NewInMemoryExporter(), MetricReader: sdkmetric.NewManualReader()}, nil,
			got{Traces: true, Metrics: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts
			o.LookupEnv = envOf(tc.env)
			p, err := resolve(&o)
			if err != nil {
				t.Fatal(err)
			}
			g := got{Traces: p.traces, TracesOTLP: p.tracesOTLP, Metrics: p.metrics, MetricsOTLP: p.metricsOTLP, Prometheus: p.prometheus,
				TraceEndpoint: p.traceOTLP.endpoint, MetricEndpoint: p.metricOTLP.endpoint, Protocol: p.traceOTLP.protocol}
			if g.Protocol == "" {
				g.Protocol = p.metricOTLP.protocol
				if !g.Traces || g.TraceEndpoint != "" {
					g.Protocol = p.traceOTLP.protocol
				}
			}
			if !tc.want.TracesOTLP && tc.want.Protocol == "" {
				g.Protocol = ""
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			tel, err := New(context.Background(), &o)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				// Nothing listens at the OTLP endpoints: do not wait for
				// the final export to time out.
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				defer cancel()
				_ = tel.Shutdown(ctx)
			}()
			if tel.Enabled() != (tc.want.Traces || tc.want.Metrics) || (tel.Handler() != nil) != tc.want.Prometheus {
				t.Errorf("Enabled %v, Handler %v", tel.Enabled(), tel.Handler() != nil)
			}
		})
	}
}

// TestSettings checks headers, resource, sampler and interval resolution.
func TestSettings(t *testing.T) {
	t.Parallel()
	o := &Options{
		Traces: true, Metrics: true, ServiceName: "mcphost", ServiceVersion: "1.2.3",
		OTLPHeaders: map[string]string{"X-Team": "core", "authorization": "Bearer opt"},
		LookupEnv: envOf(map[string]string{
			"OTEL_EXPORTER_OTLP_HEADERS":         "Authorization=Bearer%20abc, X-Team=env",
			"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "X-Metrics=1",
			"OTEL_RESOURCE_ATTRIBUTES":           "deployment.environment.name=prod,service.name=fromattrs",
			"OTEL_SERVICE_NAME":                  "gateway-eu",
			"OTEL_TRACES_SAMPLER":                "parentbased_traceidratio",
			"OTEL_TRACES_SAMPLER_ARG":            "0.25",
			"OTEL_METRIC_EXPORT_INTERVAL":        "5000",
		}),
	}
	p, err := resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"authorization": "Bearer opt", "X-Team": "core"}, p.traceOTLP.headers); diff != "" {
		t.Errorf("trace headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"authorization": "Bearer opt", "X-Team": "core", "X-Metrics": "1"}, p.metricOTLP.headers); diff != "" {
		t.Errorf("metric headers (-want +got):\n%s", diff)
	}
	want := map[string]string{"service.name": "gateway-eu", "service.version": "1.2.3", "deployment.environment.name": "prod"}
	if diff := cmp.Diff(want, attrMap(p.resource)); diff != "" {
		t.Errorf("resource (-want +got):\n%s", diff)
	}
	if got := p.sampler.Description(); got != "ParentBased{root:TraceIDRatioBased{0.25},remoteParentSampled:AlwaysOnSampler,remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}" {
		t.Errorf("sampler %s", got)
	}
	if p.metricInterval.Milliseconds() != 5000 {
		t.Errorf("interval %v", p.metricInterval)
	}

	o.SampleRatio = 0.5
	if p, _ := resolve(o); !strings.HasPrefix(p.sampler.Description(), "ParentBased{root:TraceIDRatioBased{0.5}") {
		t.Errorf("SampleRatio sampler %s", p.sampler.Description())
	}
}

// TestConfigErrors starts from valid settings and breaks one thing each;
// no error may quote a header value.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	const secret = "sk-SECRET-42"
	for _, tc := range []struct {
		name string
		opts Options
		env  map[string]string
		want string
	}{
		{"protocol", Options{Traces: true, OTLPProtocol: "http/json"}, nil, `OTLP protocol "http/json" is not supported`},
		{"env protocol", Options{Traces: true}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, `OTLP protocol "thrift"`},
		{"ratio", Options{Traces: true, SampleRatio: 1.5}, nil, "sample ratio 1.5 is not in (0, 1]"},
		{"exporter", Options{}, map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `"zipkin" is not supported (want otlp or none)`},
		{"metrics exporter", Options{}, map[string]string{"OTEL_METRICS_EXPORTER": "console"}, `"console" is not supported (want otlp, prometheus or none)`},
		{"endpoint", Options{Traces: true, OTLPEndpoint: "collector:4318"}, nil, "the OTLP endpoint is not an http:// or https:// URL"},
		{"env endpoint", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c"}, "OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL"},
		{"headers", Options{Traces: true}, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=b," + secret}, "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value"},
		{"header encoding", Options{Traces: true}, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=" + secret + "%zz"}, `the value of "Authorization" is not percent-encoded correctly`},
		{"sampler", Options{Traces: true}, map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, `OTEL_TRACES_SAMPLER="jaeger_remote" is not supported`},
		{"sampler arg", Options{Traces: true}, map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, `OTEL_TRACES_SAMPLER_ARG="2" is not a ratio`},
		{"interval", Options{Metrics: true}, map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "soon"}, `OTEL_METRIC_EXPORT_INTERVAL="soon"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts
			o.LookupEnv = envOf(tc.env)
			_, err := New(context.Background(), &o)
			if err == nil {
				t.Fatal("New succeeded")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error %v does not wrap ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error quotes a header value: %q", err)
			}
		})
	}
}

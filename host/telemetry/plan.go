package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ErrConfig is wrapped by every error New returns for bad Options or
// OTEL_* variables.
var ErrConfig = errors.New("telemetry configuration")

// plan is what Options and the environment resolve to: which signals are
// on and where they go. It is computed without side effects, so tests can
// check the resolution alone.
type plan struct {
	disabled bool // OTEL_SDK_DISABLED

	traces      bool // a tracer provider exists
	tracesOTLP  bool // it exports by OTLP
	metrics     bool // a meter provider exists
	metricsOTLP bool // it exports by OTLP
	prometheus  bool // the /metrics handler exists

	traceOTLP, metricOTLP otlpTarget

	sampler        sdktrace.Sampler
	metricInterval time.Duration
	resource       []attribute.KeyValue // beyond telemetry.sdk.*
}

// otlpTarget is where one signal is exported.
type otlpTarget struct {
	protocol string // ProtocolHTTP or ProtocolGRPC
	endpoint string // full URL (with the signal's path for http)
	headers  map[string]string
}

// Standard variable names.
const (
	envSDKDisabled     = "OTEL_SDK_DISABLED"
	envServiceName     = "OTEL_SERVICE_NAME"
	envResourceAttrs   = "OTEL_RESOURCE_ATTRIBUTES"
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envMetricsExporter = "OTEL_METRICS_EXPORTER"
	envSampler         = "OTEL_TRACES_SAMPLER"
	envSamplerArg      = "OTEL_TRACES_SAMPLER_ARG"
	envMetricInterval  = "OTEL_METRIC_EXPORT_INTERVAL"
	envOTLPPrefix      = "OTEL_EXPORTER_OTLP_"
)

// env reads variables through Options.LookupEnv; empty values count as
// unset, as the OpenTelemetry specification says.
type env func(string) (string, bool)

func (e env) get(name string) string {
	v, _ := e(name)
	return strings.TrimSpace(v)
}

// resolve computes the plan for o.
func resolve(o *Options) (*plan, error) {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	e := env(lookup)
	p := &plan{}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}

	if strings.EqualFold(e.get(envSDKDisabled), "true") {
		return &plan{disabled: true}, nil
	}
	switch o.OTLPProtocol {
	case "", ProtocolHTTP, ProtocolGRPC:
	default:
		bad("OTLP protocol %q is not supported (want %q or %q)", o.OTLPProtocol, ProtocolHTTP, ProtocolGRPC)
	}
	if o.SampleRatio < 0 || o.SampleRatio > 1 {
		bad("sample ratio %v is not in (0, 1]", o.SampleRatio)
	}

	traceExp, err := exporterList(e, envTracesExporter, "otlp")
	if err != nil {
		errs = append(errs, err)
	}
	metricExp, err := exporterList(e, envMetricsExporter, "otlp", "prometheus")
	if err != nil {
		errs = append(errs, err)
	}
	endpointSet := func(signal string) bool {
		return e.get(envOTLPPrefix+"ENDPOINT") != "" || e.get(envOTLPPrefix+signal+"_ENDPOINT") != ""
	}
	envTraces := traceExp["otlp"] || (traceExp == nil && endpointSet("TRACES"))
	envMetrics := metricExp["otlp"] || (metricExp == nil && endpointSet("METRICS"))

	p.tracesOTLP = (o.Traces || envTraces) && o.SpanExporter == nil
	p.traces = p.tracesOTLP || o.SpanExporter != nil
	p.prometheus = o.Prometheus || metricExp["prometheus"]
	p.metricsOTLP = (o.Metrics || envMetrics) && o.MetricReader == nil
	p.metrics = p.metricsOTLP || p.prometheus || o.MetricReader != nil

	if p.tracesOTLP {
		if p.traceOTLP, err = otlpFor(o, e, "TRACES", "/v1/traces"); err != nil {
			errs = append(errs, err)
		}
	}
	if p.metricsOTLP {
		if p.metricOTLP, err = otlpFor(o, e, "METRICS", "/v1/metrics"); err != nil {
			errs = append(errs, err)
		}
		p.metricInterval = 60 * time.Second
		if v := e.get(envMetricInterval); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				bad("%s=%q is not a positive number of milliseconds", envMetricInterval, v)
			} else {
				p.metricInterval = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if p.traces {
		if p.sampler, err = samplerFor(o, e); err != nil {
			errs = append(errs, err)
		}
	}
	if p.traces || p.metrics {
		if p.resource, err = resourceFor(o, e); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// exporterList parses an OTEL_*_EXPORTER list; nil means unset. "none"
// alone yields an empty, non-nil set.
func exporterList(e env, name string, supported ...string) (map[string]bool, error) {
	v := e.get(name)
	if v == "" {
		return nil, nil
	}
	set := map[string]bool{}
	for _, x := range strings.Split(v, ",") {
		x = strings.ToLower(strings.TrimSpace(x))
		switch {
		case x == "none" || x == "":
		case contains(supported, x):
			set[x] = true
		default:
			return nil, fmt.Errorf("%w: %s=%q: %q is not supported (want %s or none)", ErrConfig, name, v, x, strings.Join(supported, ", "))
		}
	}
	return set, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// otlpFor resolves one signal's OTLP target: Options, then the
// signal-specific variables, then the general ones, then the defaults.
func otlpFor(o *Options, e env, signal, path string) (otlpTarget, error) {
	t := otlpTarget{protocol: ProtocolHTTP}
	switch {
	case o.OTLPProtocol != "":
		t.protocol = o.OTLPProtocol
	case e.get(envOTLPPrefix+signal+"_PROTOCOL") != "":
		t.protocol = e.get(envOTLPPrefix + signal + "_PROTOCOL")
	case e.get(envOTLPPrefix+"PROTOCOL") != "":
		t.protocol = e.get(envOTLPPrefix + "PROTOCOL")
	}
	if t.protocol != ProtocolHTTP && t.protocol != ProtocolGRPC {
		return t, fmt.Errorf("%w: OTLP protocol %q is not supported for %s (want %q or %q)", ErrConfig, t.protocol, strings.ToLower(signal), ProtocolHTTP, ProtocolGRPC)
	}
	base := func(u string) string {
		if t.protocol == ProtocolGRPC {
			return u
		}
		return strings.TrimRight(u, "/") + path
	}
	var from string
	switch {
	case o.OTLPEndpoint != "":
		t.endpoint, from = base(o.OTLPEndpoint), "the OTLP endpoint"
	case e.get(envOTLPPrefix+signal+"_ENDPOINT") != "":
		from = envOTLPPrefix + signal + "_ENDPOINT"
		t.endpoint = e.get(from)
	case e.get(envOTLPPrefix+"ENDPOINT") != "":
		from = envOTLPPrefix + "ENDPOINT"
		t.endpoint = base(e.get(from))
	case t.protocol == ProtocolGRPC:
		t.endpoint = "http://localhost:4317"
	default:
		t.endpoint = "http://localhost:4318" + path
	}
	if u, err := url.Parse(t.endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return t, fmt.Errorf("%w: %s is not an http:// or https:// URL", ErrConfig, from)
	}

	t.headers = map[string]string{}
	for _, name := range []string{envOTLPPrefix + "HEADERS", envOTLPPrefix + signal + "_HEADERS"} {
		if err := parseKeyValues(e.get(name), name, t.headers); err != nil {
			return t, err
		}
	}
	for k, v := range o.OTLPHeaders {
		for old := range t.headers { // header names are case-insensitive
			if strings.EqualFold(old, k) {
				delete(t.headers, old)
			}
		}
		t.headers[k] = v
	}
	return t, nil
}

// parseKeyValues parses the W3C-baggage-like list "k1=v1,k2=v2" (values
// percent-encoded) that OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES use, into dst. Errors never quote a value.
func parseKeyValues(s, name string, dst map[string]string) error {
	if s == "" {
		return nil
	}
	for i, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%w: %s: entry %d is not key=value", ErrConfig, name, i+1)
		}
		v, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%w: %s: the value of %q is not percent-encoded correctly", ErrConfig, name, k)
		}
		dst[k] = v
	}
	return nil
}

// samplerFor resolves the sampler: Options.SampleRatio, then
// OTEL_TRACES_SAMPLER(_ARG), then parent-based always-on.
func samplerFor(o *Options, e env) (sdktrace.Sampler, error) {
	if o.SampleRatio > 0 {
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.SampleRatio)), nil
	}
	name := strings.ToLower(e.get(envSampler))
	ratio := 1.0
	if arg := e.get(envSamplerArg); arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("%w: %s=%q is not a ratio in [0, 1]", ErrConfig, envSamplerArg, arg)
		}
		ratio = r
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, fmt.Errorf("%w: %s=%q is not supported", ErrConfig, envSampler, name)
}

// resourceFor resolves the resource attributes: service.name and
// service.version from Options, overridden by OTEL_RESOURCE_ATTRIBUTES,
// service.name overridden by OTEL_SERVICE_NAME.
func resourceFor(o *Options, e env) ([]attribute.KeyValue, error) {
	kv := map[string]string{"service.name": "mcphost"}
	if o.ServiceName != "" {
		kv["service.name"] = o.ServiceName
	}
	if o.ServiceVersion != "" {
		kv["service.version"] = o.ServiceVersion
	}
	if err := parseKeyValues(e.get(envResourceAttrs), envResourceAttrs, kv); err != nil {
		return nil, err
	}
	if v := e.get(envServiceName); v != "" {
		kv["service.name"] = v
	}
	attrs := make([]attribute.KeyValue, 0, len(kv))
	for k, v := range kv {
		attrs = append(attrs, attribute.String(k, v))
	}
	return attrs, nil
}

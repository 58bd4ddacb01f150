package telemetry

import (
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// OTLP protocols, for [Options].OTLPProtocol and OTEL_EXPORTER_OTLP_PROTOCOL.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Options configure [New]. The zero value, with no OTEL_* variable set,
// turns telemetry off.
//
// A signal is on when Options turn it on or when the standard variables ask
// for an exporter: OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER naming
// "otlp" (or "prometheus" for metrics), or, when those are unset, an
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT.
// The variables never turn off what Options turn on, except
// OTEL_SDK_DISABLED=true, which turns everything off. Explicit Options win
// over the variables where both give a value.
type Options struct {
	// ServiceName is the default service.name (OPTIONAL; "mcphost").
	// OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES,
	// override it.
	ServiceName string
	// ServiceVersion is service.version (OPTIONAL).
	ServiceVersion string

	// OTLPEndpoint is the base URL of the OTLP receiver, "http://host:4318"
	// or "https://…" (OPTIONAL). For http/protobuf, "/v1/traces" and
	// "/v1/metrics" are appended. When empty, the OTEL_EXPORTER_OTLP_*
	// variables decide, else the OTLP default (localhost:4318, or :4317 for
	// grpc).
	OTLPEndpoint string
	// OTLPProtocol is ProtocolHTTP (the default) or ProtocolGRPC
	// (OPTIONAL; else OTEL_EXPORTER_OTLP_PROTOCOL).
	OTLPProtocol string
	// OTLPHeaders are added to every export request, over those of
	// OTEL_EXPORTER_OTLP_HEADERS (OPTIONAL). They may hold credentials: they
	// are never recorded nor quoted in errors.
	OTLPHeaders map[string]string

	// Traces exports spans by OTLP.
	Traces bool
	// Metrics exports metrics by OTLP.
	Metrics bool
	// Prometheus serves metrics at [Telemetry.Handler], from a registry of
	// its own that also holds the Go runtime and process collectors.
	Prometheus bool

	// SampleRatio is the fraction of new traces sampled, in (0, 1]
	// (OPTIONAL). Zero means OTEL_TRACES_SAMPLER(_ARG), else 1. A sampled
	// or unsampled parent is always followed.
	SampleRatio float64

	// LookupEnv reads the OTEL_* variables (OPTIONAL; os.LookupEnv). The
	// OTLP exporters also read their own variables (certificates,
	// compression, timeouts) from the process environment.
	LookupEnv func(string) (string, bool)

	// SpanExporter, for tests, receives the spans instead of OTLP and turns
	// traces on (OPTIONAL).
	SpanExporter sdktrace.SpanExporter
	// MetricReader, for tests, reads the metrics instead of OTLP (the
	// Prometheus handler is kept) and turns metrics on (OPTIONAL).
	MetricReader sdkmetric.Reader
}

package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newOTLPSpanExporter builds the OTLP span exporter for t: the OTLP
// exporters' client, with spanExporter's conversion. The endpoint URL's
// scheme decides TLS (http: plain, https: system roots).
func newOTLPSpanExporter(ctx context.Context, t otlpTarget) (sdktrace.SpanExporter, error) {
	if t.protocol == ProtocolGRPC {
		return newSpanExporter(ctx, otlptracegrpc.NewClient(otlptracegrpc.WithEndpointURL(t.endpoint), otlptracegrpc.WithHeaders(t.headers)))
	}
	return newSpanExporter(ctx, otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(t.endpoint), otlptracehttp.WithHeaders(t.headers)))
}

// newOTLPMetricExporter builds the OTLP metric exporter for t.
func newOTLPMetricExporter(ctx context.Context, t otlpTarget) (sdkmetric.Exporter, error) {
	if t.protocol == ProtocolGRPC {
		return otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(t.endpoint), otlpmetricgrpc.WithHeaders(t.headers))
	}
	return otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(t.endpoint), otlpmetrichttp.WithHeaders(t.headers))
}

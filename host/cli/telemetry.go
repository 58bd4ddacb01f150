package cli

import (
	"context"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/telemetry"
)

// startTelemetry starts OpenTelemetry as the configuration's telemetry
// block and the standard OTEL_* variables say: off unless one of them
// turns it on. Spans and metrics are exported by OTLP only where an
// endpoint is given (otlp_endpoint, or the OTEL_EXPORTER_OTLP_* variables);
// prometheus = true serves the metrics at /metrics of the HTTP front. The
// returned stop flushes and stops the exporters.
func (a *app) startTelemetry(ctx context.Context, cfg *config.Config) (*telemetry.Telemetry, func(), error) {
	o := &telemetry.Options{ServiceVersion: host.Version, LookupEnv: a.lookupEnv}
	if t := cfg.Telemetry; t != nil {
		o.ServiceName = t.ServiceName
		o.OTLPEndpoint, o.OTLPProtocol, o.OTLPHeaders = t.OTLPEndpoint, t.OTLPProtocol, t.OTLPHeaders
		// Without an endpoint, the block asks for no OTLP export (the
		// variables may still).
		o.Traces = t.Traces && t.OTLPEndpoint != ""
		o.Metrics = t.Metrics && t.OTLPEndpoint != ""
		o.Prometheus = t.Prometheus
		o.SampleRatio = t.SampleRatio
	}
	tel, err := telemetry.New(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	return tel, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		tel.Shutdown(sctx)
	}, nil
}

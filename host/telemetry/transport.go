package telemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport returns an http.RoundTripper that adds the W3C trace context of
// each request's context (traceparent, tracestate, baggage) to its headers,
// replacing any there, then sends it with base (nil: http.DefaultTransport).
// When traces are off it returns base itself.
//
// It only propagates: the upstream MCP request already has its CLIENT span
// (StartUpstream), which is the parent the MCP conventions want on the
// other side, so an HTTP client span per POST (what otelhttp would add)
// would be noise, cost more on the hot path and bring in another module.
// A request without trace context passes through untouched; one with it is
// cloned first, since a RoundTripper must not modify its request.
func (t *Telemetry) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if t == nil || t.tracer == nil {
		return base
	}
	return &injectTransport{base: base}
}

// injectTransport is Transport's RoundTripper.
type injectTransport struct{ base http.RoundTripper }

// RoundTrip sends req with its trace context in the headers. It may be
// called concurrently.
func (tr *injectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() && baggage.FromContext(ctx).Len() == 0 {
		return tr.base.RoundTrip(req)
	}
	req = req.Clone(ctx)
	w3c.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return tr.base.RoundTrip(req)
}

// CloseIdleConnections closes base's idle connections, if it can.
func (tr *injectTransport) CloseIdleConnections() {
	if c, ok := tr.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

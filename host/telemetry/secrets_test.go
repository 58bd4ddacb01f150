package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
)

// TestNoSecretsInTelemetry passes a secret-looking value everywhere a
// caller might hand one over (headers, _meta members, error messages) and
// checks that it appears in no exported span, attribute, status, event,
// link, resource or metric, nor on /metrics.
func TestNoSecretsInTelemetry(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-SECRET-0123456789"
	r := newRecorder(t)
	prom, err := New(context.Background(), &Options{Prometheus: true, LookupEnv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Shutdown(context.Background())

	errs := []error{
		errors.New("token " + secret + " rejected"),
		fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32603, Message: "db password " + secret}),
		fmt.Errorf("deciding for %s: %w", secret, namedError{}),
		fmt.Errorf("%s: %w", secret, context.DeadlineExceeded),
	}
	for _, tel := range []*Telemetry{r.Telemetry, prom} {
		for _, e := range errs {
			ctx := tel.ExtractHTTP(context.Background(), http.Header{
				"Authorization": {"Bearer " + secret}, "Cookie": {"s=" + secret}, "Traceparent": {httpTraceparent},
			})
			ctx, req := tel.StartRequest(ctx, "tools/call", "weather", RequestInfo{
				Meta: map[string]any{"traceparent": clientTraceparent, "api_key": secret, "progressToken": secret},
			})
			callCtx, call := tel.StartToolCall(ctx, "srv", "weather")
			_, dec := tel.StartDecision(callCtx, "weather")
			dec.EndDecision("deny")
			upCtx, up := tel.StartUpstream(callCtx, "srv", "tools/call", "weather", RequestInfo{})
			meta := tel.InjectMeta(upCtx, map[string]any{"arguments": secret})
			if meta["arguments"] != secret {
				t.Error("InjectMeta changed another _meta member")
			}
			up.End(e)
			call.End(e)
			req.End(e)
			tel.RecordCall(ctx, "srv", "weather", time.Millisecond, ErrorType(e))
			tel.RecordRequest(ctx, "tools/call", "weather", time.Millisecond, ErrorType(e))
		}
	}

	check := func(where, s string) {
		t.Helper()
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret: %q", where, s)
		}
	}
	checkAttrs := func(where string, kvs []attribute.KeyValue) {
		t.Helper()
		for _, kv := range kvs {
			check(where+" attribute "+string(kv.Key), kv.Value.Emit())
		}
	}
	spans := r.ended(t)
	if len(spans) == 0 {
		t.Fatal("no spans")
	}
	for _, s := range spans {
		check("span name", s.Name)
		check(s.Name+" status", s.Status.Description)
		checkAttrs(s.Name, s.Attributes)
		checkAttrs(s.Name+" resource", s.Resource.Attributes())
		for _, ev := range s.Events {
			check(s.Name+" event", ev.Name)
			checkAttrs(s.Name+" event", ev.Attributes)
		}
		for _, l := range s.Links {
			checkAttrs(s.Name+" link", l.Attributes)
			check(s.Name+" link tracestate", l.SpanContext.TraceState().String())
		}
	}
	check("metrics", fmt.Sprintf("%+v", r.collect(t)))

	rec := httptest.NewRecorder()
	prom.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "mcp_client_operation_duration_seconds") {
		t.Fatal("/metrics has no call metric")
	}
	check("/metrics", rec.Body.String())
}

package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
)

// TestMetaRoundTrip injects a span's context into _meta and extracts it on
// the other side, as an upstream server would.
func TestMetaRoundTrip(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	bag, _ := baggage.Parse("tenant=acme")
	ctx := baggage.ContextWithBaggage(context.Background(), bag)
	ctx, s := r.StartUpstream(ctx, "srv", "tools/call", "x", RequestInfo{})
	defer s.End(nil)

	meta := r.InjectMeta(ctx, map[string]any{"progressToken": 1})
	sc := s.SpanContext()
	want := map[string]any{
		"progressToken": 1,
		"traceparent":   fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID()),
		"baggage":       "tenant=acme",
	}
	if diff := cmp.Diff(want, meta); diff != "" {
		t.Errorf("InjectMeta (-want +got):\n%s", diff)
	}

	got := r.ExtractMeta(context.Background(), meta)
	if gsc := trace.SpanContextFromContext(got); !gsc.IsRemote() || gsc.TraceID() != sc.TraceID() || gsc.SpanID() != sc.SpanID() || !gsc.IsSampled() {
		t.Errorf("ExtractMeta span context = %+v, want remote %v", gsc, sc)
	}
	if v := baggage.FromContext(got).Member("tenant").Value(); v != "acme" {
		t.Errorf("ExtractMeta baggage tenant = %q", v)
	}
}

// TestMetaW3C checks interoperability with W3C trace context written by
// another implementation (the example of the MCP conventions).
func TestMetaW3C(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	for _, tc := range []struct {
		name      string
		meta      map[string]any
		wantValid bool
	}{
		{"traceparent and tracestate", map[string]any{"traceparent": clientTraceparent, "tracestate": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}, true},
		{"invalid traceparent", map[string]any{"traceparent": "00-zz-00f067aa0ba902b7-01"}, false},
		{"not a string", map[string]any{"traceparent": 42}, false},
		{"none", map[string]any{"progressToken": "p"}, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := r.ExtractMeta(context.Background(), tc.meta)
			sc := trace.SpanContextFromContext(ctx)
			if sc.IsValid() != tc.wantValid {
				t.Fatalf("valid = %v, want %v", sc.IsValid(), tc.wantValid)
			}
			if !tc.wantValid {
				return
			}
			if sc.TraceID().String() != clientTraceID || sc.SpanID().String() != clientSpanID || !sc.IsSampled() {
				t.Errorf("span context %v", sc)
			}
			// Re-injected without a span of ours, the context is unchanged.
			out := r.InjectMeta(ctx, nil)
			if diff := cmp.Diff(tc.meta, out); diff != "" {
				t.Errorf("re-injected (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetaOff checks that a disabled Telemetry leaves _meta alone.
func TestMetaOff(t *testing.T) {
	t.Parallel()
	on := newRecorder(t)
	ctx, s := on.StartUpstream(context.Background(), "srv", "ping", "", RequestInfo{})
	defer s.End(nil)
	for _, off := range []*Telemetry{nil, {}} {
		meta := map[string]any{"traceparent": clientTraceparent}
		if got := off.InjectMeta(ctx, meta); got["traceparent"] != clientTraceparent {
			t.Errorf("disabled InjectMeta replaced traceparent: %v", got)
		}
		if got := off.InjectMeta(ctx, nil); got != nil {
			t.Errorf("disabled InjectMeta(nil) = %v", got)
		}
		if got := off.ExtractMeta(context.Background(), meta); trace.SpanContextFromContext(got).IsValid() {
			t.Error("disabled ExtractMeta extracted")
		}
	}
}

// TestTransport checks that an upstream HTTP server on 127.0.0.1 receives
// the upstream span's traceparent, and nothing when there is no span.
func TestTransport(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got <- req.Header.Clone()
	}))
	defer srv.Close()
	client := &http.Client{Transport: r.Transport(nil)}

	send := func(ctx context.Context) (http.Header, http.Header) {
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Traceparent", "00-11111111111111111111111111111111-2222222222222222-01")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return req.Header, <-got
	}

	ctx, s := r.StartUpstream(context.Background(), "srv", "tools/call", "x", RequestInfo{Transport: TransportTCP})
	sent, h := send(ctx)
	s.End(nil)
	sc := s.SpanContext()
	if want := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID()); h.Get("Traceparent") != want {
		t.Errorf("server got traceparent %q, want %q", h.Get("Traceparent"), want)
	}
	if sent.Get("Traceparent") != "00-11111111111111111111111111111111-2222222222222222-01" {
		t.Error("Transport modified the caller's request")
	}

	_, h = send(context.Background())
	if h.Get("Traceparent") != "00-11111111111111111111111111111111-2222222222222222-01" {
		t.Errorf("without a span, traceparent = %q, want the caller's untouched", h.Get("Traceparent"))
	}

	// The server side of the same propagation.
	sctx := r.ExtractHTTP(context.Background(), http.Header{"Traceparent": {clientTraceparent}})
	if sc := trace.SpanContextFromContext(sctx); sc.TraceID().String() != clientTraceID {
		t.Errorf("ExtractHTTP = %v", sc)
	}
}

func TestTransportOff(t *testing.T) {
	t.Parallel()
	base := &http.Transport{}
	for _, off := range []*Telemetry{nil, {}} {
		if got := off.Transport(base); got != base {
			t.Errorf("disabled Transport wrapped base: %T", got)
		}
	}
	if got := (*Telemetry)(nil).Transport(nil); got != http.DefaultTransport {
		t.Errorf("Transport(nil) = %T, want http.DefaultTransport", got)
	}
}

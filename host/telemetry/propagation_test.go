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

// TestTraceMembers checks that TraceMembers writes what InjectMeta puts in
// an empty _meta, encoded as JSON members in key order (the direct path of
// a plain span context included), and that it takes one allocation there.
func TestTraceMembers(t *testing.T) { // (not parallel: AllocsPerRun)
	r := newRecorder(t)
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	remote := func(flags trace.TraceFlags, state string) context.Context {
		ts, err := trace.ParseTraceState(state)
		if err != nil {
			t.Fatal(err)
		}
		return trace.ContextWithRemoteSpanContext(context.Background(),
			trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: ts, Remote: true}))
	}
	started, span := r.StartUpstream(context.Background(), "srv", "tools/call", "x", RequestInfo{})
	defer span.End(nil)
	bag, _ := baggage.Parse("tenant=acme")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"none", context.Background(), ""},
		{"sampled", remote(trace.FlagsSampled, ""), `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`},
		{"not sampled", remote(0, ""), `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"`},
		{"random, other flags dropped", remote(trace.FlagsSampled|trace.FlagsRandom|0x80, ""), `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03"`},
		{"tracestate", remote(trace.FlagsSampled, "v=1,w=2"), `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"v=1,w=2"`},
		{"baggage", baggage.ContextWithBaggage(remote(trace.FlagsSampled, ""), bag), `"baggage":"tenant=acme","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`},
		{"baggage alone", baggage.ContextWithBaggage(context.Background(), bag), `"baggage":"tenant=acme"`},
		{"a started span", started, fmt.Sprintf(`"traceparent":"00-%s-%s-01"`, span.SpanContext().TraceID(), span.SpanContext().SpanID())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.TraceMembers(tc.ctx)
			if string(got) != tc.want {
				t.Errorf("TraceMembers = %s, want %s", got, tc.want)
			}
			if viaMap := encodeMembers(r.InjectMeta(tc.ctx, nil)); string(viaMap) != string(got) {
				t.Errorf("TraceMembers = %s, InjectMeta encoded = %s", got, viaMap)
			}
			if (*Telemetry)(nil).TraceMembers(tc.ctx) != nil {
				t.Error("a nil Telemetry wrote members")
			}
		})
	}
	if n := testing.AllocsPerRun(100, func() { r.TraceMembers(started) }); n != 1 {
		t.Errorf("TraceMembers allocates %v times, want 1", n)
	}
}

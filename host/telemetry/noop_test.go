package telemetry

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// hop makes every telemetry call of one tools/call through the gateway.
func hop(tel *Telemetry, ctx context.Context, meta map[string]any, h http.Header, err error) {
	ctx = tel.ExtractHTTP(ctx, h)
	ctx, req := tel.StartRequest(ctx, "tools/call", "github.create_issue", RequestInfo{RequestID: "1", SessionID: "s", Transport: TransportTCP, Server: "github", Meta: meta})
	callCtx, call := tel.StartToolCall(ctx, "github", "github.create_issue")
	_, dec := tel.StartDecision(callCtx, "github.create_issue")
	dec.EndDecision("allow")
	tel.RecordDecision(callCtx, "allow")
	upCtx, up := tel.StartUpstream(callCtx, "github", "tools/call", "create_issue", RequestInfo{Transport: TransportPipe})
	_ = tel.InjectMeta(upCtx, nil)
	up.End(err)
	tel.RecordCall(callCtx, "github", "github.create_issue", time.Millisecond, ErrorType(err))
	call.End(err)
	req.End(err)
	tel.RecordRequest(ctx, "tools/call", "github.create_issue", time.Millisecond, ErrorType(err))
}

// TestDisabledIsFree checks that a nil or disabled Telemetry costs no
// allocation on the hot path, and that every method is a no-op.
func TestDisabledIsFree(t *testing.T) {
	disabled, err := New(context.Background(), &Options{LookupEnv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	sdkOff, err := New(context.Background(), &Options{Traces: true, Metrics: true, Prometheus: true,
		LookupEnv: envOf(map[string]string{"OTEL_SDK_DISABLED": "true"})})
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"traceparent": clientTraceparent}
	h := http.Header{"Traceparent": {httpTraceparent}}
	for name, tel := range map[string]*Telemetry{"nil": nil, "disabled": disabled, "OTEL_SDK_DISABLED": sdkOff} {
		t.Run(name, func(t *testing.T) {
			if tel.Enabled() || tel.Handler() != nil {
				t.Error("Enabled or Handler on a disabled Telemetry")
			}
			ctx := context.Background()
			if n := testing.AllocsPerRun(100, func() { hop(tel, ctx, meta, h, nil) }); n != 0 {
				t.Errorf("hop allocates %v times, want 0", n)
			}
			if n := testing.AllocsPerRun(100, func() { hop(tel, ctx, meta, h, context.DeadlineExceeded) }); n != 0 {
				t.Errorf("failed hop allocates %v times, want 0", n)
			}
			tel.ObserveConnections(func(func(string, int)) { t.Error("observed while disabled") })
			tel.RecordReconnect(ctx, "s")
			tel.RecordPluginRestart(ctx, "p")
			tel.RecordTokenRefresh(ctx, "s", "ok")
			tel.RecordReload(ctx, ReloadApplied)
			if n := testing.AllocsPerRun(100, func() { tel.TraceDecision(ctx, "t", "allow") }); n != 0 {
				t.Errorf("TraceDecision allocates %v times, want 0", n)
			}
			if _, s := tel.StartPluginRPC(ctx, "p", "/a.B/C"); s.SpanContext().IsValid() {
				t.Error("span from a disabled Telemetry")
			}
			if tel.TracerProvider() == nil || tel.MeterProvider() == nil || tel.Propagator() == nil {
				t.Error("nil provider or propagator")
			}
			if err := tel.ForceFlush(ctx); err != nil {
				t.Error(err)
			}
			if err := tel.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

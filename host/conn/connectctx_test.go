package conn

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

type foreignKey struct{}

// TestConnectContext: a connect's context keeps the caller's trace span
// and cancellation (with its cause), and drops every other value (the
// go-sdk server's request values would reach its client's requests).
func TestConnectContext(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	parent := trace.ContextWithSpanContext(context.WithValue(context.Background(), foreignKey{}, "2026-07-28"), sc)
	cause := errors.New("the caller gave up")
	for _, tc := range []struct {
		name   string
		cancel bool
	}{{"live", false}, {"cancelled", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(parent)
			defer cancel(nil)
			d, end := connectContext(ctx)
			defer end()
			if d.Value(foreignKey{}) != nil {
				t.Error("a value of the caller's context reached the connect")
			}
			if got := trace.SpanContextFromContext(d); !got.Equal(sc) {
				t.Errorf("span context %v, want %v", got, sc)
			}
			if tc.cancel {
				cancel(cause)
				<-d.Done()
				if !errors.Is(context.Cause(d), cause) {
					t.Errorf("cause %v, want %v", context.Cause(d), cause)
				}
			} else if d.Err() != nil {
				t.Errorf("a live caller's connect context is done: %v", d.Err())
			}
		})
	}
}

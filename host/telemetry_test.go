package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestCallSpanTree: one tool call through the host to a streamable HTTP
// server on 127.0.0.1 makes the span tree execute_tool → (permission
// decision, upstream tools/call), and the upstream HTTP request carries
// the W3C trace context of the upstream span (traceparent header and
// params._meta.traceparent).
func TestCallSpanTree(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var headers, metas []string
	srv := demoserver.New(&demoserver.Options{Name: "web"})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				if tp, ok := req.GetParams().GetMeta()["traceparent"].(string); ok {
					mu.Lock()
					metas = append(metas, tp)
					mu.Unlock()
				}
			}
			return next(ctx, method, req)
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" && r.Method == http.MethodPost {
			mu.Lock()
			headers = append(headers, tp)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), &telemetry.Options{SpanExporter: exp, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	cfg := &config.Config{DefaultMode: "allow_all", Servers: []*config.Server{{Name: "web", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 10 * time.Second}}}
	hst, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	defer hst.Close()
	ctx := context.Background()
	if _, err := hst.CallTool(ctx, "mcp__web__echo", map[string]any{"message": "sk-CANARY-secret"}, nil); err != nil {
		t.Fatal(err)
	}
	tel.ForceFlush(ctx)

	spans := exp.GetSpans()
	var call, decision, upstream *tracetest.SpanStub
	for i := range spans {
		s := &spans[i]
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.Emit(), "CANARY") {
				t.Errorf("span %s attribute %s holds an argument value", s.Name, a.Key)
			}
		}
		switch {
		case strings.HasPrefix(s.Name, "execute_tool"):
			call = s
		case strings.Contains(s.Name, "permission"):
			decision = s
		case s.SpanKind == trace.SpanKindClient && strings.HasPrefix(s.Name, "tools/call"):
			upstream = s
		}
	}
	if call == nil || decision == nil || upstream == nil {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("spans %v: want execute_tool, the permission decision and the upstream tools/call", names)
	}
	for _, child := range []*tracetest.SpanStub{decision, upstream} {
		if child.Parent.SpanID() != call.SpanContext.SpanID() || child.SpanContext.TraceID() != call.SpanContext.TraceID() {
			t.Errorf("%s is not a child of %s", child.Name, call.Name)
		}
	}
	want := upstream.SpanContext.TraceID().String()
	mu.Lock()
	defer mu.Unlock()
	if len(headers) == 0 || !strings.Contains(headers[len(headers)-1], want) {
		t.Errorf("traceparent headers at the server %v, want trace %s", headers, want)
	}
	if len(metas) == 0 || !strings.Contains(metas[len(metas)-1], upstream.SpanContext.SpanID().String()) {
		t.Errorf("_meta traceparent at the server %v, want the upstream span %s", metas, upstream.SpanContext.SpanID())
	}
}

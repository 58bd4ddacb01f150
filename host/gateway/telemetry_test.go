package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// The gateway's telemetry (telemetry.go), end to end: a real gateway over
// the demo server, with the OTel SDK's in-memory span exporter and a
// manual metric reader, and go-sdk clients over stdio pipes and streamable
// HTTP on loopback.

const (
	// telSecret is an argument value that must appear in no attribute.
	telSecret = "sk-live-TELEMETRY-SECRET-4242"
	// Trace contexts a client sends: in params._meta, in HTTP headers.
	metaTraceID   = "0af7651916cd43dd8448eb211c80319c"
	metaParent    = "00-" + metaTraceID + "-b7ad6b7169203331-01"
	headerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	headerParent  = "00-" + headerTraceID + "-00f067aa0ba902b7-01"
)

// telRecorder is a Telemetry whose spans and metrics a test reads.
type telRecorder struct {
	tel    *telemetry.Telemetry
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newTelRecorder(t testing.TB) *telRecorder {
	t.Helper()
	r := &telRecorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel, err := telemetry.New(context.Background(), &telemetry.Options{
		SpanExporter: r.spans,
		MetricReader: r.reader,
		LookupEnv:    func(string) (string, bool) { return "", false }, // (not the process's OTEL_*)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	r.tel = tel
	return r
}

// ended returns the spans ended so far.
func (r *telRecorder) ended(t *testing.T) tracetest.SpanStubs {
	t.Helper()
	if err := r.tel.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r.spans.GetSpans()
}

// servers returns the SERVER spans named name.
func (r *telRecorder) servers(t *testing.T, name string) []tracetest.SpanStub {
	t.Helper()
	var out []tracetest.SpanStub
	for _, s := range r.ended(t) {
		if s.Name == name && s.SpanKind == trace.SpanKindServer {
			out = append(out, s)
		}
	}
	return out
}

// waitServer waits for a SERVER span named name (a relayed call's span
// ends just after its answer is written, so possibly after the client
// has it), then, after a moment for a second one to show, returns them all.
func (r *telRecorder) waitServer(t *testing.T, name string) []tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(r.servers(t, name)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no SERVER span %q; spans: %v", name, spanNames(r.ended(t)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	return r.servers(t, name)
}

func spanNames(spans tracetest.SpanStubs) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name + " (" + s.SpanKind.String() + ")"
	}
	return names
}

// durations returns the mcp.server.operation.duration points.
func (r *telRecorder) durations(t *testing.T) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is a %T", m.Name, m.Data)
			}
			return h.DataPoints
		}
	}
	return nil
}

// count is how many requests the histogram counted whose attributes
// include want (an absent error.type: none).
func (r *telRecorder) count(t *testing.T, want map[string]string) uint64 {
	t.Helper()
	var n uint64
points:
	for _, p := range r.durations(t) {
		got := attrs(p.Attributes.ToSlice())
		for k, v := range want {
			if got[k] != v {
				continue points
			}
		}
		if _, ok := want["error.type"]; !ok && got["error.type"] != "" {
			continue
		}
		n += p.Count
	}
	return n
}

// secretFree fails if telSecret is in any exported attribute: of spans,
// their links and events, their status, or metric points.
func (r *telRecorder) secretFree(t *testing.T) {
	t.Helper()
	check := func(where string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			if strings.Contains(kv.Value.Emit(), "TELEMETRY-SECRET") {
				t.Errorf("%s: attribute %s = %q holds the argument's value", where, kv.Key, kv.Value.Emit())
			}
		}
	}
	for _, s := range r.ended(t) {
		if strings.Contains(s.Name, "TELEMETRY-SECRET") {
			t.Errorf("span name %q holds the argument's value", s.Name)
		}
		check("span "+s.Name, s.Attributes)
		check("span "+s.Name+" resource", s.Resource.Attributes())
		for _, l := range s.Links {
			check("link of "+s.Name, l.Attributes)
		}
		for _, e := range s.Events {
			check("event of "+s.Name, e.Attributes)
		}
		if strings.Contains(s.Status.Description, "TELEMETRY-SECRET") {
			t.Errorf("span %s: status %q holds the argument's value", s.Name, s.Status.Description)
		}
	}
	for _, p := range r.durations(t) {
		check("mcp.server.operation.duration", p.Attributes.ToSlice())
	}
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// telGateway is a gateway over the demo server "a", host and gateway
// both with tel.
func telGateway(t testing.TB, tel *telemetry.Telemetry, rules ...config.PermissionRule) *gateway.Gateway {
	t.Helper()
	return telGatewayOf(t, tel, &config.Config{Servers: []*config.Server{demo("a")}, Permissions: rules, DefaultMode: "allow_all"})
}

// telGatewayOf is a gateway of cfg, host and gateway both with tel (nil:
// off).
func telGatewayOf(t testing.TB, tel *telemetry.Telemetry, cfg *config.Config) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{Telemetry: tel})
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	return g
}

// telStdio connects a go-sdk client to g over stdio pipes.
func telStdio(t *testing.T, g *gateway.Gateway) *mcp.ClientSession {
	t.Helper()
	w, r := servePipes(t, g)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tel-stdio"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// traceHeader adds a W3C traceparent header to every request.
type traceHeader struct{}

func (traceHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Traceparent", headerParent)
	return http.DefaultTransport.RoundTrip(r)
}

// telHTTP connects a go-sdk client of protocol version to g over
// streamable HTTP on loopback, its requests carrying headerParent.
func telHTTP(t *testing.T, g *gateway.Gateway, version string) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tel-http"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: traceHeader{}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestTelemetryToolCall: every tools/call the gateway answers — relayed,
// through the go-sdk server, or passed from the relay to the go-sdk
// server — has one SERVER span "tools/call {tool}" whose context the
// host's spans of the call are under, and is counted once in
// mcp.server.operation.duration; no argument value is in any attribute.
func TestTelemetryToolCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		transport string // "stdio" or "http"
		version   string // HTTP: the client's protocol version
		tool      string
		meta      mcp.Meta                // params._meta: a progress token takes the go-sdk path
		rules     []config.PermissionRule // askEcho: the relay passes the call to the go-sdk server
		relayed   bool                    // by the relay path (g.RelayedCalls)
		errType   string                  // error.type ("": success)
		parent    string                  // the trace id of the span's parent ("": a root)
		link      string                  // the trace id of its link ("": none)
	}{
		{name: "stdio relay", transport: "stdio", tool: "mcp__a__echo", relayed: true},
		{name: "stdio relay tool error", transport: "stdio", tool: "mcp__a__fail", relayed: true, errType: telemetry.ErrorTypeToolError},
		{name: "stdio relay traced", transport: "stdio", tool: "mcp__a__echo", meta: mcp.Meta{"traceparent": metaParent}, relayed: true, parent: metaTraceID},
		{name: "stdio go-sdk", transport: "stdio", tool: "mcp__a__echo", meta: mcp.Meta{"traceparent": metaParent, "progressToken": "p"}, parent: metaTraceID},
		{name: "stdio passed on", transport: "stdio", tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, errType: telemetry.ErrorTypeToolError},
		{name: "http relay", transport: "http", version: oldProtocol, tool: "mcp__a__echo", relayed: true, parent: headerTraceID},
		{name: "http relay stateless", transport: "http", version: newProtocol, tool: "mcp__a__echo", relayed: true, parent: headerTraceID},
		{name: "http relay tool error", transport: "http", version: oldProtocol, tool: "mcp__a__fail", relayed: true, errType: telemetry.ErrorTypeToolError, parent: headerTraceID},
		{name: "http relay traced", transport: "http", version: oldProtocol, tool: "mcp__a__echo", meta: mcp.Meta{"traceparent": metaParent}, relayed: true, parent: metaTraceID, link: headerTraceID},
		{name: "http relay traced stateless", transport: "http", version: newProtocol, tool: "mcp__a__echo", meta: mcp.Meta{"traceparent": metaParent, "tracestate": "v=1"}, relayed: true, parent: metaTraceID, link: headerTraceID},
		{name: "http go-sdk", transport: "http", version: oldProtocol, tool: "mcp__a__echo", meta: mcp.Meta{"traceparent": metaParent, "progressToken": "p"}, parent: metaTraceID, link: headerTraceID},
		{name: "http go-sdk stateless", transport: "http", version: newProtocol, tool: "mcp__a__echo", meta: mcp.Meta{"traceparent": metaParent, "progressToken": "p"}, parent: metaTraceID, link: headerTraceID},
		{name: "http passed on", transport: "http", version: oldProtocol, tool: "mcp__a__echo", rules: []config.PermissionRule{askEcho}, errType: telemetry.ErrorTypeToolError, parent: headerTraceID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newTelRecorder(t)
			g := telGateway(t, rec.tel, tc.rules...)
			var cs *mcp.ClientSession
			transport := telemetry.TransportPipe
			if tc.transport == "stdio" {
				cs = telStdio(t, g)
			} else {
				cs = telHTTP(t, g, tc.version)
				transport = telemetry.TransportTCP
			}
			before := g.RelayedCalls()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"message": telSecret}, Meta: tc.meta})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != (tc.errType == telemetry.ErrorTypeToolError) {
				t.Fatalf("isError %v: %s", res.IsError, textOf(res))
			}
			if relayed := g.RelayedCalls() - before; relayed != map[bool]uint64{true: 1}[tc.relayed] {
				t.Fatalf("%d calls relayed, want relayed %v", relayed, tc.relayed)
			}

			name := "tools/call " + tc.tool
			spans := rec.waitServer(t, name)
			if len(spans) != 1 {
				t.Fatalf("%d SERVER spans %q, want 1", len(spans), name)
			}
			s := spans[0]
			got := attrs(s.Attributes)
			want := map[string]string{
				"mcp.method.name":       "tools/call",
				"gen_ai.tool.name":      tc.tool,
				"gen_ai.operation.name": "execute_tool",
				"network.transport":     transport,
				"error.type":            tc.errType,
			}
			if tc.transport == "http" {
				want["mcp.protocol.version"] = tc.version
				want["mcp.session.id"] = gateway.LogSessionID(cs.ID())
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("attribute %s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			if got["jsonrpc.request.id"] == "" || got["mcp.protocol.version"] == "" {
				t.Errorf("no jsonrpc.request.id or mcp.protocol.version: %v", got)
			}
			// The span is started with its server (RequestInfo.Server), among
			// the attributes of its start, not given it later by the host
			// (which adds an attribute at the end, copying the list).
			if got["mcphost.server.name"] != "a" || attrIndex(s.Attributes, "mcphost.server.name") > attrIndex(s.Attributes, "jsonrpc.request.id") {
				t.Errorf("mcphost.server.name not set at the span's start: %v", s.Attributes)
			}
			if wantStatus := map[bool]codes.Code{true: codes.Error}[tc.errType != ""]; s.Status.Code != wantStatus || s.Status.Description != tc.errType {
				t.Errorf("status %v %q, want %v %q", s.Status.Code, s.Status.Description, wantStatus, tc.errType)
			}
			switch {
			case tc.parent == "" && s.Parent.IsValid():
				t.Errorf("parent %v, want none", s.Parent)
			case tc.parent != "" && (s.Parent.TraceID().String() != tc.parent || !s.Parent.IsRemote()):
				t.Errorf("parent %v, want a remote one of trace %s", s.Parent, tc.parent)
			}
			var links []string
			for _, l := range s.Links {
				links = append(links, l.SpanContext.TraceID().String())
			}
			if wantLinks := map[bool][]string{true: {tc.link}}[tc.link != ""]; strings.Join(links, ",") != strings.Join(wantLinks, ",") {
				t.Errorf("links to traces %v, want %v", links, wantLinks)
			}

			// The host's spans of the call are under the server span.
			var children []string
			for _, c := range rec.ended(t) {
				if c.Parent.SpanID() == s.SpanContext.SpanID() {
					children = append(children, c.Name)
				}
			}
			if len(children) == 0 {
				t.Errorf("no span under the server span; spans: %v", spanNames(rec.ended(t)))
			}

			wantCount := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": tc.tool}
			if tc.errType != "" {
				wantCount["error.type"] = tc.errType
			}
			if n := rec.count(t, wantCount); n != 1 {
				t.Errorf("mcp.server.operation.duration counted %d calls %v, want 1 (points: %v)", n, wantCount, rec.durations(t))
			}
			rec.secretFree(t)
		})
	}
}

// TestRelayTraceContext: a client's W3C trace context in params._meta keeps
// a tools/call on the relay path, and reaches the upstream server (a
// streamable HTTP one on loopback, by the relay's HTTP lane): as the client
// sent it with telemetry off, and as the gateway's own upstream span's
// context, in the client's trace, with telemetry on.
func TestRelayTraceContext(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "telemetry off", true: "telemetry on"}[on], func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []string
			srv := demoserver.New(&demoserver.Options{Name: "web"})
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/call" {
						tp, _ := req.GetParams().GetMeta()["traceparent"].(string)
						mu.Lock()
						got = append(got, tp)
						mu.Unlock()
					}
					return next(ctx, method, req)
				}
			})
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
			t.Cleanup(hs.Close)
			var rec *telRecorder
			var tel *telemetry.Telemetry
			if on {
				rec = newTelRecorder(t)
				tel = rec.tel
			}
			g := telGatewayOf(t, tel, &config.Config{DefaultMode: "allow_all", Servers: []*config.Server{{
				Name: "web", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 10 * time.Second,
			}}})
			cs := telStdio(t, g)

			before := g.RelayedCalls()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__web__echo",
				Arguments: map[string]any{"message": "hi"}, Meta: mcp.Meta{"traceparent": metaParent}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %v", err, res)
			}
			if n := g.RelayedCalls() - before; n != 1 {
				t.Fatalf("%d calls relayed, want 1", n)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 {
				t.Fatalf("the server got %d calls, want 1", len(got))
			}
			if !on {
				if got[0] != metaParent {
					t.Errorf("traceparent at the server %q, want the client's %q", got[0], metaParent)
				}
				return
			}
			var up *tracetest.SpanStub
			for _, s := range rec.ended(t) {
				if s.SpanKind == trace.SpanKindClient && s.Name == "tools/call echo" {
					up = &s
				}
			}
			if up == nil {
				t.Fatalf("no upstream span; spans: %v", spanNames(rec.ended(t)))
			}
			want := "00-" + metaTraceID + "-" + up.SpanContext.SpanID().String() + "-01"
			if got[0] != want {
				t.Errorf("traceparent at the server %q, want the upstream span's %q (the client's trace)", got[0], want)
			}
		})
	}
}

// TestTelemetryOtherRequests: requests other than tools/call have their
// SERVER span and duration too — a list by its method alone, prompts/get
// by its prompt — and the histogram counts each.
func TestTelemetryOtherRequests(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			rec := newTelRecorder(t)
			g := telGateway(t, rec.tel)
			// The client's first request: a 2026-07-28 client's over
			// stdio, a 2025-11-25 one's over HTTP.
			var cs *mcp.ClientSession
			want, first := telemetry.TransportPipe, "server/discover"
			if transport == "stdio" {
				cs = telStdio(t, g)
			} else {
				cs = telHTTP(t, g, oldProtocol)
				want, first = telemetry.TransportTCP, "initialize"
			}
			ctx := context.Background()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__a__greet", Arguments: map[string]string{"name": telSecret}}); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				span, method, target string
			}{
				{first, first, ""},
				{"tools/list", "tools/list", ""},
				{"prompts/get mcp__a__greet", "prompts/get", "mcp__a__greet"},
			} {
				spans := rec.waitServer(t, tc.span)
				if len(spans) != 1 {
					t.Errorf("%d SERVER spans %q, want 1", len(spans), tc.span)
					continue
				}
				got := attrs(spans[0].Attributes)
				if got["mcp.method.name"] != tc.method || got["network.transport"] != want || got["gen_ai.prompt.name"] != tc.target || got["jsonrpc.request.id"] == "" {
					t.Errorf("span %q: attributes %v", tc.span, got)
				}
				wantCount := map[string]string{"mcp.method.name": tc.method}
				if tc.target != "" {
					wantCount["gen_ai.prompt.name"] = tc.target
				}
				if n := rec.count(t, wantCount); n != 1 {
					t.Errorf("mcp.server.operation.duration counted %d %v, want 1", n, wantCount)
				}
			}
			for _, s := range rec.ended(t) {
				if strings.HasPrefix(s.Name, "notifications/") {
					t.Errorf("a span for a notification: %s", s.Name)
				}
			}
			rec.secretFree(t)
		})
	}
}

// TestTelemetryInternalHeaders: a client cannot set the gateway's internal
// headers (the request id, the stdio mark, a carried span's token) over
// HTTP: its span is a tcp one with the request's own id.
func TestTelemetryInternalHeaders(t *testing.T) {
	t.Parallel()
	rec := newTelRecorder(t)
	g := telGateway(t, rec.tel)
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	t.Cleanup(srv.Close)
	headers := map[string]string{
		"Mcp-Protocol-Version":         newProtocol,
		"Mcp-Method":                   "tools/list",
		"Mcphost-Telemetry-Request-Id": "forged",
		"Mcphost-Telemetry-Pipe":       "1",
		"Mcphost-Telemetry-Carry":      "1",
	}
	// A stateless 2026-07-28 tools/list (the go-sdk path).
	resp, body := post(t, srv.URL, `{"jsonrpc":"2.0","id":"real-id","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+newProtocol+`","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, headers)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	spans := rec.waitServer(t, "tools/list")
	if len(spans) != 1 {
		t.Fatalf("%d SERVER spans, want 1", len(spans))
	}
	got := attrs(spans[0].Attributes)
	if got["jsonrpc.request.id"] != "real-id" || got["network.transport"] != telemetry.TransportTCP {
		t.Errorf("attributes %v", got)
	}
}

// BenchmarkRelayStdioRawTelemetry is BenchmarkRelayStdioRaw with telemetry
// on (gateway and host, every span sampled, to an in-memory exporter): what
// tracing and measuring a relayed call costs.
func BenchmarkRelayStdioRawTelemetry(b *testing.B) {
	rec := newTelRecorder(b)
	g := telGateway(b, rec.tel)
	w, r := servePipes(b, g)
	relayRawCalls(b, g, w, r)
}

// attrIndex is the position of the attribute key in attrs, -1 if absent.
func attrIndex(attrs []attribute.KeyValue, key string) int {
	return slices.IndexFunc(attrs, func(kv attribute.KeyValue) bool { return string(kv.Key) == key })
}

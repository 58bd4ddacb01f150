package telemetry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP receiver (HTTP and gRPC) that keeps what it gets.
type receiver struct {
	mu       sync.Mutex
	spans    []string // span names
	metrics  []string // metric names
	services []string // service.name of each export
	auth     []string // Authorization of each export
}

func (r *receiver) resource(res *resourcepb.Resource) {
	for _, kv := range res.GetAttributes() {
		if kv.GetKey() == "service.name" {
			r.services = append(r.services, kv.GetValue().GetStringValue())
		}
	}
}

func (r *receiver) traces(req *coltracepb.ExportTraceServiceRequest, auth string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = append(r.auth, auth)
	for _, rs := range req.GetResourceSpans() {
		r.resource(rs.GetResource())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, s.GetName())
			}
		}
	}
}

func (r *receiver) metricsReq(req *colmetricpb.ExportMetricsServiceRequest, auth string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = append(r.auth, auth)
	for _, rm := range req.GetResourceMetrics() {
		r.resource(rm.GetResource())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				r.metrics = append(r.metrics, m.GetName())
			}
		}
	}
}

// ServeHTTP is OTLP/HTTP with binary protobuf: POST /v1/traces and
// /v1/metrics.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.Method != "POST" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		var m coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.traces(&m, req.Header.Get("Authorization"))
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var m colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.metricsReq(&m, req.Header.Get("Authorization"))
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, req)
		return
	}
	b, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

// grpcReceiver adapts receiver to the OTLP gRPC services.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	r *receiver
}

func (g grpcReceiver) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.r.traces(req, authOf(ctx))
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetricReceiver struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *receiver
}

func (g grpcMetricReceiver) Export(ctx context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	g.r.metricsReq(req, authOf(ctx))
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func authOf(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// startHTTPReceiver starts an OTLP/HTTP receiver on 127.0.0.1.
func startHTTPReceiver(t *testing.T) (*receiver, string) {
	r := &receiver{}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// startGRPCReceiver starts an OTLP/gRPC receiver on 127.0.0.1.
func startGRPCReceiver(t *testing.T) (*receiver, string) {
	r := &receiver{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, grpcReceiver{r: r})
	colmetricpb.RegisterMetricsServiceServer(s, grpcMetricReceiver{r: r})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(l)
	}()
	t.Cleanup(func() {
		s.Stop()
		<-done
	})
	return r, "http://" + l.Addr().String()
}

// TestOTLPExport sends one call's spans and metrics to real OTLP receivers
// on 127.0.0.1, configured by Options and by the OTEL_* variables.
func TestOTLPExport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		start   func(*testing.T) (*receiver, string)
		options func(url string) *Options
		service string
		auth    string
	}{
		{"Options, http/protobuf", startHTTPReceiver, func(url string) *Options {
			return &Options{Traces: true, Metrics: true, OTLPEndpoint: url, ServiceName: "gw",
				OTLPHeaders: map[string]string{"Authorization": "Bearer opt"}, LookupEnv: envOf(nil)}
		}, "gw", "Bearer opt"},
		{"variables, http/protobuf", startHTTPReceiver, func(url string) *Options {
			return &Options{LookupEnv: envOf(map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": url,
				"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Bearer%20env",
				"OTEL_SERVICE_NAME":           "from-env",
			})}
		}, "from-env", "Bearer env"},
		{"Options, grpc", startGRPCReceiver, func(url string) *Options {
			return &Options{Traces: true, Metrics: true, OTLPProtocol: ProtocolGRPC, OTLPEndpoint: url,
				OTLPHeaders: map[string]string{"authorization": "Bearer grpc"}, LookupEnv: envOf(nil)}
		}, "mcphost", "Bearer grpc"},
		{"variables, grpc", startGRPCReceiver, func(url string) *Options {
			return &Options{LookupEnv: envOf(map[string]string{
				"OTEL_TRACES_EXPORTER":        "otlp",
				"OTEL_METRICS_EXPORTER":       "otlp",
				"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_EXPORTER_OTLP_ENDPOINT": url,
			})}
		}, "mcphost", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, url := tc.start(t)
			tel, err := New(context.Background(), tc.options(url))
			if err != nil {
				t.Fatal(err)
			}
			hop(tel, context.Background(), nil, nil, nil)
			tel.RecordReload(context.Background(), ReloadApplied)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}

			r.mu.Lock()
			defer r.mu.Unlock()
			for _, name := range []string{"tools/call github.create_issue", DecisionSpanName, "tools/call create_issue"} {
				if !slices.Contains(r.spans, name) {
					t.Errorf("span %q not received; got %q", name, r.spans)
				}
			}
			for _, name := range []string{"mcp.server.operation.duration", "mcp.client.operation.duration", MetricDecisions, MetricReloads} {
				if !slices.Contains(r.metrics, name) {
					t.Errorf("metric %q not received; got %q", name, r.metrics)
				}
			}
			if len(r.services) == 0 || slices.ContainsFunc(r.services, func(s string) bool { return s != tc.service }) {
				t.Errorf("service.name %q, want all %q", r.services, tc.service)
			}
			if slices.ContainsFunc(r.auth, func(s string) bool { return s != tc.auth }) {
				t.Errorf("Authorization %q, want all %q", r.auth, tc.auth)
			}
		})
	}
}

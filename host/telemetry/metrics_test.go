package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// recordAll records one of everything the host records.
func recordAll(tel *Telemetry) {
	ctx := context.Background()
	tel.RecordCall(ctx, "github", "create_issue", 20*time.Millisecond, "")
	tel.RecordCall(ctx, "github", "create_issue", 3*time.Millisecond, "")
	tel.RecordCall(ctx, "github", "create_issue", time.Second, ErrorTypeToolError)
	tel.RecordRequest(ctx, "tools/call", "github.create_issue", 25*time.Millisecond, "")
	tel.RecordRequest(ctx, "tools/list", "", time.Millisecond, "")
	tel.RecordRequest(ctx, "tools/call", "github.create_issue", 2*time.Millisecond, "permission_denied")
	tel.RecordDecision(ctx, "allow")
	tel.RecordDecision(ctx, "allow")
	tel.RecordDecision(ctx, "deny")
	tel.RecordReconnect(ctx, "github")
	tel.RecordPluginRestart(ctx, "oauth")
	tel.RecordTokenRefresh(ctx, "github", "ok")
	tel.RecordReload(ctx, ReloadApplied)
	tel.RecordReload(ctx, ReloadRejected)
	tel.ObserveConnections(func(yield func(string, int)) {
		yield("ready", 3)
		yield("reconnecting", 1)
	})
}

// point is one data point: its attributes as text and its value (a sum, a
// gauge, or a histogram's count).
type point struct {
	Attrs string
	Value float64
}

// points flattens the metrics of rm by name.
func points(t *testing.T, rm metricdata.ResourceMetrics) (map[string][]point, map[string]string) {
	t.Helper()
	pts, units := map[string][]point{}, map[string]string{}
	render := func(s attribute.Set) string {
		var parts []string
		for _, kv := range s.ToSlice() {
			parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
		}
		return strings.Join(parts, ",")
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			units[m.Name] = m.Unit
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					pts[m.Name] = append(pts[m.Name], point{render(p.Attributes), float64(p.Count)})
					if diff := cmp.Diff(durationBuckets, p.Bounds); diff != "" {
						t.Errorf("%s bounds (-want +got):\n%s", m.Name, diff)
					}
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					pts[m.Name] = append(pts[m.Name], point{render(p.Attributes), float64(p.Value)})
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	for _, p := range pts {
		sort.Slice(p, func(i, j int) bool { return p[i].Attrs < p[j].Attrs })
	}
	return pts, units
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	recordAll(r.Telemetry)
	pts, units := points(t, r.collect(t))

	wantUnits := map[string]string{
		"mcp.client.operation.duration": "s",
		"mcp.server.operation.duration": "s",
		MetricDecisions:                 "{decision}",
		MetricConnections:               "{connection}",
		MetricReconnects:                "{reconnect}",
		MetricPluginRestarts:            "{restart}",
		MetricTokenRefreshes:            "{refresh}",
		MetricReloads:                   "{reload}",
	}
	if diff := cmp.Diff(wantUnits, units); diff != "" {
		t.Errorf("metrics and units (-want +got):\n%s", diff)
	}
	want := map[string][]point{
		"mcp.client.operation.duration": {
			{"error.type=tool_error,gen_ai.operation.name=execute_tool,gen_ai.tool.name=create_issue,mcp.method.name=tools/call,mcphost.server.name=github", 1},
			{"gen_ai.operation.name=execute_tool,gen_ai.tool.name=create_issue,mcp.method.name=tools/call,mcphost.server.name=github", 2},
		},
		"mcp.server.operation.duration": {
			{"error.type=permission_denied,gen_ai.operation.name=execute_tool,gen_ai.tool.name=github.create_issue,mcp.method.name=tools/call", 1},
			{"gen_ai.operation.name=execute_tool,gen_ai.tool.name=github.create_issue,mcp.method.name=tools/call", 1},
			{"mcp.method.name=tools/list", 1},
		},
		MetricDecisions:      {{"mcphost.outcome=allow", 2}, {"mcphost.outcome=deny", 1}},
		MetricConnections:    {{"mcphost.connection.state=ready", 3}, {"mcphost.connection.state=reconnecting", 1}},
		MetricReconnects:     {{"mcphost.server.name=github", 1}},
		MetricPluginRestarts: {{"mcphost.plugin.name=oauth", 1}},
		MetricTokenRefreshes: {{"mcphost.outcome=ok,mcphost.server.name=github", 1}},
		MetricReloads:        {{"mcphost.outcome=applied", 1}, {"mcphost.outcome=rejected", 1}},
	}
	if diff := cmp.Diff(want, pts); diff != "" {
		t.Errorf("data points (-want +got):\n%s", diff)
	}

	// A later ObserveConnections replaces the source; nil removes it.
	r.ObserveConnections(func(yield func(string, int)) { yield("failed", 2) })
	if pts, _ := points(t, r.collect(t)); !cmp.Equal(pts[MetricConnections], []point{{"mcphost.connection.state=failed", 2}}) {
		t.Errorf("after replacing: %v", pts[MetricConnections])
	}
	r.ObserveConnections(nil)
	if pts, _ := points(t, r.collect(t)); len(pts[MetricConnections]) != 0 {
		t.Errorf("after removing: %v", pts[MetricConnections])
	}
}

// TestPrometheusHandler parses /metrics with the Prometheus text parser
// and checks the names Prometheus sees (internal/testing/testprom scrapes it with
// a real Prometheus).
func TestPrometheusHandler(t *testing.T) {
	t.Parallel()
	tel, err := New(context.Background(), &Options{Prometheus: true, ServiceName: "gw", LookupEnv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	if !tel.Enabled() || tel.Handler() == nil {
		t.Fatal("Prometheus on, but no handler")
	}
	recordAll(tel)

	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	labels := func(m *dto.Metric) map[string]string {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		return l
	}
	for _, tc := range []struct {
		family string
		typ    dto.MetricType
		labels map[string]string // of one of its series
		value  float64           // its value, or count for a histogram
	}{
		{"mcp_client_operation_duration_seconds", dto.MetricType_HISTOGRAM, map[string]string{
			"error_type": "tool_error", "gen_ai_operation_name": "execute_tool", "gen_ai_tool_name": "create_issue",
			"mcp_method_name": "tools/call", "mcphost_server_name": "github",
		}, 1},
		{"mcp_server_operation_duration_seconds", dto.MetricType_HISTOGRAM, map[string]string{"mcp_method_name": "tools/list"}, 1},
		{"mcphost_permission_decisions_total", dto.MetricType_COUNTER, map[string]string{"mcphost_outcome": "allow"}, 2},
		{"mcphost_connection_count", dto.MetricType_GAUGE, map[string]string{"mcphost_connection_state": "ready"}, 3},
		{"mcphost_server_reconnects_total", dto.MetricType_COUNTER, map[string]string{"mcphost_server_name": "github"}, 1},
		{"mcphost_plugin_restarts_total", dto.MetricType_COUNTER, map[string]string{"mcphost_plugin_name": "oauth"}, 1},
		{"mcphost_token_refreshes_total", dto.MetricType_COUNTER, map[string]string{"mcphost_server_name": "github", "mcphost_outcome": "ok"}, 1},
		{"mcphost_config_reloads_total", dto.MetricType_COUNTER, map[string]string{"mcphost_outcome": "rejected"}, 1},
		{"target_info", dto.MetricType_GAUGE, nil, 1},
		{"go_goroutines", dto.MetricType_GAUGE, nil, -1},
		{"process_open_fds", dto.MetricType_GAUGE, nil, -1},
	} {
		f, ok := fams[tc.family]
		if !ok {
			t.Errorf("no metric family %s", tc.family)
			continue
		}
		if f.GetType() != tc.typ {
			t.Errorf("%s: type %v, want %v", tc.family, f.GetType(), tc.typ)
		}
		if tc.labels == nil {
			if tc.family == "target_info" && labels(f.Metric[0])["service_name"] != "gw" {
				t.Errorf("target_info labels %v, want service_name gw", labels(f.Metric[0]))
			}
			continue
		}
		found := false
		for _, m := range f.Metric {
			if !cmp.Equal(labels(m), tc.labels) {
				continue
			}
			found = true
			got := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			if got != tc.value {
				t.Errorf("%s%v = %v, want %v", tc.family, tc.labels, got, tc.value)
			}
		}
		if !found {
			t.Errorf("%s: no series %v in %v", tc.family, tc.labels, f.Metric)
		}
	}
}

// TestSetCacheBounded checks that the attribute sets cached for the
// per-call metrics stay bounded when a client sends ever new tool names,
// and that measurements past the bound are recorded all the same.
// (Series are bounded by the SDK's cardinality limit.)
func TestSetCacheBounded(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	n := maxCachedSets + 100
	for i := range n {
		r.RecordRequest(context.Background(), "tools/call", fmt.Sprintf("no-such-tool-%d", i), time.Millisecond, "")
	}
	r.RecordRequest(context.Background(), "tools/call", "no-such-tool-0", time.Millisecond, "")
	if got := r.sets.len(); got != maxCachedSets {
		t.Errorf("%d sets cached, want the bound %d", got, maxCachedSets)
	}
	counts := map[string]uint64{}
	for _, sm := range r.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v, _ := dp.Attributes.Value("gen_ai.tool.name")
				counts[v.AsString()] += dp.Count
			}
		}
	}
	// (The SDK folds series past its cardinality limit into one overflow
	// series, without the tool's name: count them all.)
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total != uint64(n+1) || counts["no-such-tool-0"] != 2 {
		t.Errorf("%d requests recorded (want %d); no-such-tool-0: %d (want 2)", total, n+1, counts["no-such-tool-0"])
	}
}

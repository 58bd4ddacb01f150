package ops

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/testprom"
)

// TestMetricsScrapedByPrometheus: a real Prometheus (Debian's) scrapes the
// gateway's /metrics (telemetry { prometheus = true }, no token) and sees
// the calls by server and tool, the errors (a tool's isError result too),
// the permission decisions and
// the connections by state; no argument value is in the metrics.
func TestMetricsScrapedByPrometheus(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "telemetry {\n  prometheus = true\n}\npermissions {\n  default_mode = \"allow_all\"\n  deny = [\"mcp__demo__add\"]\n}\n"+demoServer("demo"))
	cs := g.connect(t)
	defer cs.Close()
	ctx := context.Background()
	const secret = "sk-live-CANARY-0123456789"
	for range 3 {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"message": secret}}); err != nil {
			t.Fatal(err)
		}
	}
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__fail", Arguments: map[string]any{"message": "x"}})
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__add", Arguments: map[string]any{"a": 1, "b": 2}}) // denied

	resp, err := http.Get(g.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "CANARY") {
		t.Fatalf("/metrics: %d, or an argument value in it", resp.StatusCode)
	}

	prom := testprom.Start(t, testprom.Target{URL: g.base + "/metrics", Job: "mcphost"})
	for _, q := range []struct {
		promql string
		ok     func(float64) bool
	}{
		{`sum(mcp_client_operation_duration_seconds_count{job="mcphost",mcphost_server_name="demo",gen_ai_tool_name="echo"})`, func(v float64) bool { return v == 3 }},
		{`sum(mcp_client_operation_duration_seconds_count{job="mcphost",gen_ai_tool_name="fail",error_type!=""})`, func(v float64) bool { return v == 1 }},
		{`sum(mcphost_permission_decisions_total{job="mcphost",mcphost_outcome="allow"})`, func(v float64) bool { return v >= 4 }},
		{`sum(mcphost_connection_count{job="mcphost",mcphost_connection_state="connected"})`, func(v float64) bool { return v == 1 }},
		{`go_goroutines{job="mcphost"}`, func(v float64) bool { return v > 0 }},
	} {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		v, err := prom.Await(wctx, q.promql, q.ok)
		cancel()
		if err != nil {
			t.Errorf("%s = %v: %v\nmetrics:\n%s\nprometheus log:\n%s", q.promql, v, err, body, prom.Log())
		}
	}
}

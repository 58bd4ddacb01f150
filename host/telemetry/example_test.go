package telemetry_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcphost/mcphost/host/telemetry"
)

// noEnv reads no environment variable.
func noEnv(string) (string, bool) { return "", false }

// A downstream client's trace context, from the request's params._meta,
// continues upstream in the upstream request's params._meta.
func ExampleTelemetry_InjectMeta() {
	ctx := context.Background()
	tel, err := telemetry.New(ctx, &telemetry.Options{SpanExporter: tracetest.NewNoopExporter(), LookupEnv: noEnv})
	if err != nil {
		panic(err)
	}
	defer tel.Shutdown(ctx)

	ctx, req := tel.StartRequest(ctx, "tools/call", "github.create_issue", telemetry.RequestInfo{
		Meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	})
	defer req.End(nil)
	ctx, up := tel.StartUpstream(ctx, "github", "tools/call", "create_issue", telemetry.RequestInfo{})
	defer up.End(nil)

	meta := tel.InjectMeta(ctx, map[string]any{"progressToken": 1})
	traceparent := meta["traceparent"].(string)
	fmt.Println("trace:", strings.Split(traceparent, "-")[1])
	fmt.Println("parent is the upstream span:", strings.Split(traceparent, "-")[2] == up.SpanContext().SpanID().String())
	// Output:
	// trace: 4bf92f3577b34da6a3ce929d0e0e4736
	// parent is the upstream span: true
}

// Metrics on the Prometheus handler: the count of a histogram is the
// number of calls.
func ExampleTelemetry_Handler() {
	ctx := context.Background()
	tel, err := telemetry.New(ctx, &telemetry.Options{Prometheus: true, LookupEnv: noEnv})
	if err != nil {
		panic(err)
	}
	defer tel.Shutdown(ctx)

	tel.RecordCall(ctx, "github", "create_issue", 12*time.Millisecond, "")
	tel.RecordCall(ctx, "github", "create_issue", 30*time.Millisecond, telemetry.ErrorTypeToolError)

	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "mcp_client_operation_duration_seconds_count") {
			fmt.Println(line)
		}
	}
	// Unordered output:
	// mcp_client_operation_duration_seconds_count{error_type="tool_error",gen_ai_operation_name="execute_tool",gen_ai_tool_name="create_issue",mcp_method_name="tools/call",mcphost_server_name="github"} 1
	// mcp_client_operation_duration_seconds_count{gen_ai_operation_name="execute_tool",gen_ai_tool_name="create_issue",mcp_method_name="tools/call",mcphost_server_name="github"} 1
}

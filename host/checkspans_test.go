package host_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/telemetry"
)

// TestToolCallCheckSpans: every check of a tools/call has its
// mcphost.check span under the call's span — the PreToolUse and
// PostToolUse hooks and the request and response interceptors — for a
// library call (no DecisionNote) and a relayed one; and the Elicitation
// hooks of a server's question during a library call.
func TestToolCallCheckSpans(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"library", "relay", "elicitation"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			exp := tracetest.NewInMemoryExporter()
			tel, err := telemetry.New(context.Background(), &telemetry.Options{SpanExporter: exp, LookupEnv: func(string) (string, bool) { return "", false }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tel.Shutdown(context.Background()) })
			if path == "elicitation" {
				elicitSpans(t, exp, tel)
				return
			}
			k := &evChecker{decide: func(*intercept.Call, intercept.Phase) (intercept.Verdict, error) { return intercept.Verdict{}, nil }}
			var entries []*intercept.Entry
			for _, ev := range []string{"PreToolUse", "PostToolUse"} {
				e, err := intercept.HookEntry(&config.Hook{Event: ev, Matcher: "mcp__one__echo", Command: "true", Approved: true}, k)
				if err != nil {
					t.Fatal(err)
				}
				entries = append(entries, e)
			}
			entries = append(entries, evEntry(t, "guard", k, []string{intercept.EventToolsCall}, ""))
			h := evHost(t, &host.Options{Telemetry: tel}, entries...)
			ctx := context.Background()
			var parentName string
			switch path {
			case "library":
				if _, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "hi"}, nil); err != nil {
					t.Fatal(err)
				}
				parentName = "execute_tool"
			default:
				rctx, span := tel.StartRequest(ctx, "tools/call", "mcp__one__echo", telemetry.RequestInfo{})
				if _, _, err := h.Serving().RelayCall(rctx, "mcp__one__echo", []byte(`{"message":"hi"}`), host.RelayOptions{}); err != nil {
					t.Fatal(err)
				}
				span.End(nil)
				parentName = "tools/call mcp__one__echo"
			}
			if err := tel.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			var parent *tracetest.SpanStub
			var names []string
			for i := range spans {
				names = append(names, spans[i].Name)
				if strings.HasPrefix(spans[i].Name, parentName) && parent == nil {
					parent = &spans[i]
				}
			}
			if parent == nil {
				t.Fatalf("spans %v: no %s", names, parentName)
			}
			var events []string
			for _, s := range spans {
				if s.Name != telemetry.CheckSpanName {
					continue
				}
				attrs := map[string]string{}
				for _, a := range s.Attributes {
					attrs[string(a.Key)] = a.Value.Emit()
				}
				events = append(events, attrs["mcphost.check.kind"]+" "+attrs["mcphost.check.event"])
				if s.Parent.SpanID() != parent.SpanContext.SpanID() {
					t.Errorf("the check span %v is not a child of %s", attrs, parent.Name)
				}
			}
			slices.Sort(events)
			want := []string{"builtin tools/call/request", "builtin tools/call/response", "hook tools/call/request", "hook tools/call/response"}
			if !slices.Equal(events, want) {
				t.Errorf("check spans %q, want %q", events, want)
			}
		})
	}
}

// elicitSpans: the Elicitation and ElicitationResult hooks of a server's
// question during a library call have their spans under the call's.
func elicitSpans(t *testing.T, exp *tracetest.InMemoryExporter, tel *telemetry.Telemetry) {
	k := &evChecker{decide: func(*intercept.Call, intercept.Phase) (intercept.Verdict, error) { return intercept.Verdict{}, nil }}
	var entries []*intercept.Entry
	for _, ev := range []string{"Elicitation", "ElicitationResult"} {
		e, err := intercept.HookEntry(&config.Hook{Event: ev, Matcher: "one", Command: "true", Approved: true}, k)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	h := evHost(t, &host.Options{Telemetry: tel, OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, entries...)
	ctx := context.Background()
	if _, err := h.CallTool(ctx, "mcp__one__ask", map[string]any{"question": "?"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tel.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	var parent *tracetest.SpanStub
	spans := exp.GetSpans()
	for i := range spans {
		if strings.HasPrefix(spans[i].Name, "execute_tool") {
			parent = &spans[i]
		}
	}
	if parent == nil {
		t.Fatal("no execute_tool span")
	}
	n := 0
	for _, s := range spans {
		if s.Name != telemetry.CheckSpanName {
			continue
		}
		n++
		if s.Parent.SpanID() != parent.SpanContext.SpanID() {
			t.Errorf("the check span %v is not a child of the call's", s.Attributes)
		}
	}
	if n != 2 {
		t.Errorf("%d check spans, want 2 (Elicitation, ElicitationResult)", n)
	}
}

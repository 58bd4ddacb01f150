package telemetry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	// A W3C example parent, as a downstream client would send it.
	clientTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	clientTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID      = "00f067aa0ba902b7"
	// Another parent, in the HTTP headers of the same request.
	httpTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	httpTraceID     = "0af7651916cd43dd8448eb211c80319c"
)

// TestCallSpanTree follows one tools/call through the gateway: the
// downstream request (which is the call through the host's span too), the
// permission decision, a plugin RPC and the upstream request, and checks
// names, kinds, attributes and the parent/child structure.
func TestCallSpanTree(t *testing.T) {
	t.Parallel()
	r := newRecorder(t)
	ctx := r.ExtractHTTP(context.Background(), http.Header{"Traceparent": {httpTraceparent}})

	ctx, req := r.StartRequest(ctx, "tools/call", "github.create_issue", RequestInfo{
		RequestID: "7", SessionID: "sess-1", ProtocolVersion: "2025-06-18", Transport: TransportTCP,
		Meta: map[string]any{"traceparent": clientTraceparent, "progressToken": 3},
	})
	callCtx, call := r.StartToolCall(ctx, "github", "github.create_issue")
	_, dec := r.StartDecision(callCtx, "github.create_issue")
	dec.EndDecision("allow")
	_, rpc := r.StartPluginRPC(callCtx, "oauth", "/mcphost.plugin.v1.Auth/Token")
	rpc.End(nil)
	upCtx, up := r.StartUpstream(callCtx, "github", "tools/call", "create_issue", RequestInfo{Transport: TransportPipe})
	meta := r.InjectMeta(upCtx, nil)
	up.End(nil)
	call.End(nil)
	req.End(nil)

	spans := byName(t, r.ended(t))
	type want struct {
		kind   trace.SpanKind
		parent string // name of the parent span; "" for the remote parent
		attrs  map[string]string
	}
	wants := map[string]want{
		// The downstream tools/call is the tool call's span too (no
		// execute_tool span under it): it gains mcphost.server.name.
		"tools/call github.create_issue": {trace.SpanKindServer, "", map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "github.create_issue",
			"jsonrpc.request.id": "7", "mcp.session.id": "sess-1", "mcp.protocol.version": "2025-06-18", "network.transport": "tcp",
			"mcphost.server.name": "github",
		}},
		DecisionSpanName: {trace.SpanKindInternal, "tools/call github.create_issue", map[string]string{
			"gen_ai.tool.name": "github.create_issue", "mcphost.outcome": "allow",
		}},
		"mcphost.plugin.v1.Auth/Token": {trace.SpanKindClient, "tools/call github.create_issue", map[string]string{
			"rpc.system.name": "grpc", "rpc.method": "mcphost.plugin.v1.Auth/Token", "mcphost.plugin.name": "oauth",
		}},
		"tools/call create_issue": {trace.SpanKindClient, "tools/call github.create_issue", map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "create_issue",
			"mcphost.server.name": "github", "network.transport": "pipe",
		}},
	}
	if len(spans) != len(wants) {
		t.Fatalf("got %d spans, want %d", len(spans), len(wants))
	}
	for name, w := range wants {
		s, ok := spans[name]
		if !ok {
			t.Errorf("no span %q", name)
			continue
		}
		if s.SpanKind != w.kind {
			t.Errorf("%s: kind %v, want %v", name, s.SpanKind, w.kind)
		}
		if diff := cmp.Diff(w.attrs, attrMap(s.Attributes)); diff != "" {
			t.Errorf("%s: attributes (-want +got):\n%s", name, diff)
		}
		if got := s.SpanContext.TraceID().String(); got != clientTraceID {
			t.Errorf("%s: trace %s, want the client's %s", name, got, clientTraceID)
		}
		if s.Status.Code != codes.Unset {
			t.Errorf("%s: status %v, want unset", name, s.Status)
		}
		wantParent := clientSpanID
		if w.parent != "" {
			wantParent = spans[w.parent].SpanContext.SpanID().String()
		}
		if got := s.Parent.SpanID().String(); got != wantParent {
			t.Errorf("%s: parent %s, want %s (%q)", name, got, wantParent, w.parent)
		}
	}

	// The HTTP request's own context is a link of the server span, not its
	// parent (MCP conventions: the _meta context wins).
	links := spans["tools/call github.create_issue"].Links
	if len(links) != 1 || links[0].SpanContext.TraceID().String() != httpTraceID {
		t.Errorf("server span links = %v, want one to trace %s", links, httpTraceID)
	}
	// The upstream request carries the upstream span's context.
	upSC := spans["tools/call create_issue"].SpanContext
	if want := fmt.Sprintf("00-%s-%s-01", upSC.TraceID(), upSC.SpanID()); meta["traceparent"] != want {
		t.Errorf("injected _meta = %v, want traceparent %s", meta, want)
	}
}

// TestToolCallSpan checks the tool call's own span: an execute_tool span
// with the decision and upstream spans under it when no downstream
// tools/call span is current (the host library, `mcphost call`, or a call
// made under another span), and the downstream span shared otherwise — a
// failure recorded on it, ended once, by the request, and a relay's
// abandoned attempt leaving it untouched.
func TestToolCallSpan(t *testing.T) {
	t.Parallel()
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		r := newRecorder(t)
		ctx, call := r.StartToolCall(context.Background(), "github", "github.create_issue")
		_, dec := r.StartDecision(ctx, "github.create_issue")
		dec.EndDecision("deny")
		call.End(errors.New("denied"))
		spans := byName(t, r.ended(t))
		exec, ok := spans["execute_tool github.create_issue"]
		if !ok || len(spans) != 2 {
			t.Fatalf("spans %v, want execute_tool and the decision", slices.Collect(maps.Keys(spans)))
		}
		if exec.SpanKind != trace.SpanKindInternal || exec.Parent.IsValid() || exec.Status.Code != codes.Error {
			t.Errorf("execute_tool: kind %v, parent %v, status %v; want an internal root span, failed", exec.SpanKind, exec.Parent, exec.Status)
		}
		if got := spans[DecisionSpanName].Parent.SpanID(); got != exec.SpanContext.SpanID() {
			t.Errorf("decision's parent %s, want execute_tool %s", got, exec.SpanContext.SpanID())
		}
	})
	t.Run("under another span", func(t *testing.T) {
		t.Parallel()
		r := newRecorder(t)
		ctx, req := r.StartRequest(context.Background(), "tools/call", "a", RequestInfo{})
		ctx, up := r.StartUpstream(ctx, "s", "tools/call", "b", RequestInfo{})
		_, call := r.StartToolCall(ctx, "s", "a")
		call.End(nil)
		up.End(nil)
		req.End(nil)
		if spans := byName(t, r.ended(t)); len(spans) != 3 {
			t.Errorf("spans %v, want the request, the upstream and an execute_tool of its own", slices.Collect(maps.Keys(spans)))
		}
	})
	for _, tc := range []struct {
		name       string
		end        func(Span)
		wantStatus codes.Code
		wantType   string
	}{
		{"shared, succeeded", func(s Span) { s.End(nil) }, codes.Unset, ""},
		{"shared, failed", func(s Span) { s.End(context.DeadlineExceeded) }, codes.Error, "timeout"},
		{"shared, tool error", func(s Span) { s.EndWith(ErrorTypeToolError) }, codes.Error, ErrorTypeToolError},
		{"shared, abandoned by the relay", func(s Span) { s.Abandon("relay_not_taken") }, codes.Unset, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRecorder(t)
			ctx, req := r.StartRequest(context.Background(), "tools/call", "github.create_issue", RequestInfo{RequestID: "1"})
			callCtx, call := r.StartToolCall(ctx, "github", "github.create_issue")
			if callCtx != ctx {
				t.Error("a shared tool call span changed the context")
			}
			tc.end(call)
			if n := len(r.ended(t)); n != 0 {
				t.Fatalf("%d spans ended before the request's End, want 0", n)
			}
			req.End(nil)
			spans := r.ended(t)
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want the request's alone", len(spans))
			}
			s := spans[0]
			attrs := attrMap(s.Attributes)
			if s.Status.Code != tc.wantStatus || attrs["error.type"] != tc.wantType {
				t.Errorf("status %v, error.type %q; want %v, %q", s.Status, attrs["error.type"], tc.wantStatus, tc.wantType)
			}
			if attrs["mcphost.server.name"] != "github" {
				t.Errorf("mcphost.server.name = %q, want github", attrs["mcphost.server.name"])
			}
		})
	}
}

// TestToolCallSpanStartedWithServer checks a downstream tools/call span
// started with the server its tool resolves to (RequestInfo.Server): the
// tool call shares it and adds nothing when the server is the same (no
// allocation: the span's attributes are not copied), and records its own
// server otherwise. (Not parallel: AllocsPerRun.)
func TestToolCallSpanStartedWithServer(t *testing.T) {
	for _, tc := range []struct {
		name, started, called string
		wantAllocs            float64 // of StartToolCall; -1: not checked
	}{
		{"same server", "github", "github", 0},
		{"another server", "github", "gitlab", -1},
		{"none at start", "", "github", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(t)
			ctx, req := r.StartRequest(context.Background(), "tools/call", "create_issue", RequestInfo{RequestID: "1", Server: tc.started})
			callCtx, call := r.StartToolCall(ctx, tc.called, "github.create_issue")
			if callCtx != ctx || !call.SpanContext().Equal(req.SpanContext()) {
				t.Fatal("the tool call did not share the request's span")
			}
			if tc.wantAllocs >= 0 {
				if n := testing.AllocsPerRun(100, func() { r.StartToolCall(ctx, tc.called, "github.create_issue") }); n != tc.wantAllocs {
					t.Errorf("StartToolCall allocates %v times, want %v", n, tc.wantAllocs)
				}
			}
			call.End(nil)
			req.End(nil)
			spans := r.ended(t)
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want the request's alone", len(spans))
			}
			if got := attrMap(spans[0].Attributes)["mcphost.server.name"]; got != tc.called {
				t.Errorf("mcphost.server.name = %q, want %q", got, tc.called)
			}
		})
	}
}

// TestTraceDecision checks the span of a decision taken before its gate:
// the decision span StartDecision and EndDecision make, under the same
// parent, with fewer allocations (its outcome is an attribute from its
// start). (Not parallel: AllocsPerRun.)
func TestTraceDecision(t *testing.T) {
	for _, outcome := range []string{"allow", "deny", "ask"} {
		t.Run(outcome, func(t *testing.T) {
			r := newRecorder(t)
			ctx, call := r.StartToolCall(context.Background(), "github", "github.create_issue")
			r.TraceDecision(ctx, "github.create_issue", outcome)
			_, dec := r.StartDecision(ctx, "github.create_issue")
			dec.EndDecision(outcome)
			call.End(nil)
			var decisions tracetest.SpanStubs
			for _, s := range r.ended(t) {
				if s.Name == DecisionSpanName {
					decisions = append(decisions, s)
				}
			}
			if len(decisions) != 2 {
				t.Fatalf("got %d decision spans, want 2", len(decisions))
			}
			traced, started := decisions[0], decisions[1]
			want := map[string]string{"gen_ai.tool.name": "github.create_issue", "mcphost.outcome": outcome}
			for _, s := range decisions {
				if diff := cmp.Diff(want, attrMap(s.Attributes)); diff != "" {
					t.Errorf("attributes (-want +got):\n%s", diff)
				}
			}
			if traced.SpanKind != started.SpanKind || traced.Parent.SpanID() != started.Parent.SpanID() {
				t.Errorf("traced: kind %v, parent %v; want %v, %v as started", traced.SpanKind, traced.Parent.SpanID(), started.SpanKind, started.Parent.SpanID())
			}
			tr := testing.AllocsPerRun(100, func() { r.TraceDecision(ctx, "github.create_issue", outcome) })
			st := testing.AllocsPerRun(100, func() {
				_, dec := r.StartDecision(ctx, "github.create_issue")
				dec.EndDecision(outcome)
			})
			if tr >= st {
				t.Errorf("TraceDecision allocates %v times, StartDecision and EndDecision %v; want fewer", tr, st)
			}
		})
	}
}

// TestRequestSpans checks span names and attributes per method, as the MCP
// conventions name them.
func TestRequestSpans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		method, target string
		info           RequestInfo
		wantName       string
		wantAttrs      map[string]string
	}{
		{"initialize", "initialize", "", RequestInfo{RequestID: "0", Transport: TransportPipe}, "initialize",
			map[string]string{"mcp.method.name": "initialize", "jsonrpc.request.id": "0", "network.transport": "pipe"}},
		{"tool call", "tools/call", "weather", RequestInfo{}, "tools/call weather",
			map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "weather", "gen_ai.operation.name": "execute_tool"}},
		{"prompt", "prompts/get", "review", RequestInfo{RequestID: "a-1"}, "prompts/get review",
			map[string]string{"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "review", "jsonrpc.request.id": "a-1"}},
		{"resource URI never names a span", "resources/read", "file:///home/me/secret.txt", RequestInfo{}, "resources/read",
			map[string]string{"mcp.method.name": "resources/read"}},
		{"notification", "notifications/initialized", "", RequestInfo{SessionID: "s"}, "notifications/initialized",
			map[string]string{"mcp.method.name": "notifications/initialized", "mcp.session.id": "s"}},
		{"unknown method", "x/hack-0001", "t", RequestInfo{}, "_OTHER",
			map[string]string{"mcp.method.name": "_OTHER"}},
		{"tool call resolved to its server", "tools/call", "weather", RequestInfo{Server: "wx"}, "tools/call weather",
			map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "weather", "gen_ai.operation.name": "execute_tool", "mcphost.server.name": "wx"}},
		{"server read for tools/call only", "prompts/get", "review", RequestInfo{Server: "wx"}, "prompts/get review",
			map[string]string{"mcp.method.name": "prompts/get", "gen_ai.prompt.name": "review"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRecorder(t)
			_, s := r.StartRequest(context.Background(), tc.method, tc.target, tc.info)
			s.End(nil)
			spans := r.ended(t)
			if len(spans) != 1 {
				t.Fatalf("got %d spans", len(spans))
			}
			if spans[0].Name != tc.wantName {
				t.Errorf("name %q, want %q", spans[0].Name, tc.wantName)
			}
			if spans[0].SpanKind != trace.SpanKindServer {
				t.Errorf("kind %v, want server", spans[0].SpanKind)
			}
			if spans[0].Parent.IsValid() {
				t.Errorf("parent %v, want a root span", spans[0].Parent)
			}
			if diff := cmp.Diff(tc.wantAttrs, attrMap(spans[0].Attributes)); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
		})
	}
}

// namedError names its class, as a host package may.
type namedError struct{}

func (namedError) Error() string     { return "denied by rule 3 for user alice" }
func (namedError) ErrorType() string { return "permission_denied" }

// TestSpanErrors checks how a span ends for each kind of error.
func TestSpanErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		end       func(Span)
		wantAttrs map[string]string
	}{
		{"success", func(s Span) { s.End(nil) }, map[string]string{}},
		{"timeout", func(s Span) { s.End(fmt.Errorf("calling: %w", context.DeadlineExceeded)) },
			map[string]string{"error.type": "timeout"}},
		{"canceled", func(s Span) { s.End(context.Canceled) }, map[string]string{"error.type": "canceled"}},
		{"JSON-RPC error", func(s Span) {
			s.End(fmt.Errorf("upstream: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad x"}))
		}, map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602"}},
		{"named error", func(s Span) { s.End(fmt.Errorf("deciding: %w", namedError{})) },
			map[string]string{"error.type": "permission_denied"}},
		{"Go type", func(s Span) { s.End(fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: errors.New("refused")})) },
			map[string]string{"error.type": "*net.OpError"}},
		{"tool error", func(s Span) { s.EndWith(ErrorTypeToolError) }, map[string]string{"error.type": "tool_error"}},
		{"EndWith success", func(s Span) { s.EndWith("") }, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRecorder(t)
			_, s := r.StartUpstream(context.Background(), "srv", "ping", "", RequestInfo{})
			tc.end(s)
			spans := r.ended(t)
			if len(spans) != 1 {
				t.Fatalf("got %d spans", len(spans))
			}
			got := attrMap(spans[0].Attributes)
			delete(got, "mcp.method.name")
			delete(got, "mcphost.server.name")
			if diff := cmp.Diff(tc.wantAttrs, got); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
			wantStatus := codes.Unset
			if tc.wantAttrs["error.type"] != "" {
				wantStatus = codes.Error
			}
			if st := spans[0].Status; st.Code != wantStatus || st.Description != tc.wantAttrs["error.type"] {
				t.Errorf("status %v, want %v %q", st, wantStatus, tc.wantAttrs["error.type"])
			}
			if len(spans[0].Events) != 0 {
				t.Errorf("events %v, want none (an error's message may hold secrets)", spans[0].Events)
			}
		})
	}
}

func TestErrorType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", context.Canceled)), "canceled"},
		{&jsonrpc.Error{Code: -32601}, "-32601"},
		{namedError{}, "permission_denied"},
		{errors.New("token sk-123 leaked"), "*errors.errorString"},
	} {
		if got := ErrorType(tc.err); got != tc.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

package telemetry

import (
	"context"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// RequestInfo describes one MCP request for its span. Every field is
// OPTIONAL; empty ones are not recorded.
type RequestInfo struct {
	// RequestID is the JSON-RPC id as text; "" for a notification.
	RequestID string
	// SessionID is the MCP session id (Mcp-Session-Id).
	SessionID string
	// ProtocolVersion is the negotiated MCP protocol version.
	ProtocolVersion string
	// Transport is network.transport: TransportPipe for stdio,
	// TransportTCP for HTTP.
	Transport string
	// Server is mcphost.server.name of a downstream tools/call whose tool
	// the front has resolved to an upstream server already (StartRequest
	// only). Its SERVER span, which is the tool call's (see StartToolCall),
	// then has it from its start: StartToolCall, given the same server,
	// adds nothing to it, which spares the span's attributes a copy.
	Server string
	// Meta is the request's params._meta. StartRequest continues the trace
	// context it carries; only traceparent, tracestate and baggage are read.
	Meta map[string]any
}

// Span kinds as start options, made once (an option made per span costs an
// allocation).
var (
	kindServer   = trace.WithSpanKind(trace.SpanKindServer)
	kindClient   = trace.WithSpanKind(trace.SpanKindClient)
	kindInternal = trace.WithSpanKind(trace.SpanKindInternal)
)

// Span is one span of an MCP request, a tool call, a permission decision or
// a plugin RPC. The zero Span, which a disabled Telemetry returns, is a
// no-op. A Span is ended once, by one of its End methods.
type Span struct {
	s trace.Span
	// shared is set on a tool call's Span that is the SERVER span of the
	// downstream tools/call (see StartToolCall): its End methods record a
	// failure on it but leave ending it to the request's own Span.
	shared bool
}

// toolRequestKey is the context key under which StartRequest keeps the
// SERVER span of a downstream tools/call, for StartToolCall: the
// trace.Span itself, or a toolRequest if it was started with
// mcphost.server.name (a span alone is kept as it is, unboxed: no
// allocation).
type toolRequestKey struct{}

// toolRequest is the SERVER span of a downstream tools/call started with
// mcphost.server.name server.
type toolRequest struct {
	span   trace.Span
	server string
}

// StartRequest starts the SERVER span of a downstream request: method is
// mcp.method.name (MethodOther unless a known MCP method); target is the tool (tools/call) or prompt (prompts/get)
// name, and is ignored for other methods. The span's parent is the trace
// context in info.Meta if it has one (the ambient context in ctx, e.g.
// from ExtractHTTP, becomes a link), else the context in ctx.
func (t *Telemetry) StartRequest(ctx context.Context, method, target string, info RequestInfo) (context.Context, Span) {
	if t == nil || t.tracer == nil {
		return ctx, Span{}
	}
	parent := ctx
	var opts []trace.SpanStartOption
	if ambient := trace.SpanContextFromContext(ctx); info.Meta != nil {
		parent = t.ExtractMeta(ctx, info.Meta)
		if sc := trace.SpanContextFromContext(parent); ambient.IsValid() && !sc.Equal(ambient) {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
		}
	}
	method = methodName(method)
	var server attribute.KeyValue
	if method != MethodToolsCall {
		info.Server = ""
	} else if info.Server != "" {
		server = AttrServerName.String(info.Server)
	}
	attrs := requestAttrs(method, target, info, server)
	opts = append(opts, kindServer, trace.WithAttributes(attrs...))
	name := t.starts.get(startKey{kind: startRequest, a: method, b: target}, func() spanStart {
		return spanStart{name: spanName(method, target)}
	}).name
	ctx, s := t.tracer.Start(parent, name, opts...)
	if method == MethodToolsCall {
		var v any = s
		if info.Server != "" {
			v = toolRequest{span: s, server: info.Server}
		}
		ctx = context.WithValue(ctx, toolRequestKey{}, v)
	}
	return ctx, Span{s: s}
}

// StartToolCall starts the INTERNAL GenAI span "execute_tool {tool}" of a
// tool call through the host, to server's tool (the registry's canonical
// name). The decision, upstream and plugin spans go under it.
//
// When ctx's current span is the SERVER span StartRequest started for a
// downstream tools/call (the gateway serving a client's call), that span
// is the tool call's: it already is an execute_tool span by its attributes,
// and the MCP conventions ask that a tool execution already traced get no
// second span but the first one the MCP attributes. StartToolCall then adds
// mcphost.server.name to it (unless it was started with it:
// RequestInfo.Server) and returns it as a shared Span, whose End records a
// failure without ending it.
func (t *Telemetry) StartToolCall(ctx context.Context, server, tool string) (context.Context, Span) {
	if t == nil || t.tracer == nil {
		return ctx, Span{}
	}
	var req toolRequest
	switch v := ctx.Value(toolRequestKey{}).(type) {
	case trace.Span:
		req.span = v
	case toolRequest:
		req = v
	}
	if req.span != nil {
		if cur, sc := trace.SpanContextFromContext(ctx), req.span.SpanContext(); cur.SpanID() == sc.SpanID() && cur.TraceID() == sc.TraceID() {
			if req.server != server {
				req.span.SetAttributes(AttrServerName.String(server))
			}
			return ctx, Span{s: req.span, shared: true}
		}
	}
	ctx, s := t.tracer.Start(ctx, "execute_tool "+tool,
		kindInternal,
		trace.WithAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(tool),
			AttrServerName.String(server),
		))
	return ctx, Span{s: s}
}

// DecisionSpanName is the name of a permission decision's span.
const DecisionSpanName = "mcphost.permission.decide"

// StartDecision starts the INTERNAL span of the permission decision on
// tool; end it with EndDecision.
func (t *Telemetry) StartDecision(ctx context.Context, tool string) (context.Context, Span) {
	if t == nil || t.tracer == nil {
		return ctx, Span{}
	}
	st := t.starts.get(startKey{kind: startDecision, a: tool}, func() spanStart {
		return spanStart{opts: []trace.SpanStartOption{kindInternal, trace.WithAttributes(semconv.GenAIToolName(tool))}}
	})
	ctx, s := t.tracer.Start(ctx, DecisionSpanName, st.opts...)
	return ctx, Span{s: s}
}

// TraceDecision records the span of a permission decision on tool taken
// before (a decision held for the call, whose outcome is known): started
// with its outcome, ended at once. Like EndDecision, it records no metric.
func (t *Telemetry) TraceDecision(ctx context.Context, tool, outcome string) {
	if t == nil || t.tracer == nil {
		return
	}
	st := t.starts.get(startKey{kind: startDecided, a: tool, b: outcome}, func() spanStart {
		return spanStart{opts: []trace.SpanStartOption{kindInternal, trace.WithAttributes(semconv.GenAIToolName(tool), AttrOutcome.String(outcome))}}
	})
	_, s := t.tracer.Start(ctx, DecisionSpanName, st.opts...)
	s.End()
}

// StartUpstream starts the CLIENT span of a request to upstream server,
// named and attributed like StartRequest's (info.Meta is not read). Inject
// its context into the request with InjectMeta, and into HTTP with
// Transport.
func (t *Telemetry) StartUpstream(ctx context.Context, server, method, target string, info RequestInfo) (context.Context, Span) {
	if t == nil || t.tracer == nil {
		return ctx, Span{}
	}
	method = methodName(method)
	build := func() spanStart {
		attrs := requestAttrs(method, target, info, AttrServerName.String(server))
		return spanStart{name: spanName(method, target), opts: []trace.SpanStartOption{kindClient, trace.WithAttributes(attrs...)}}
	}
	var st spanStart
	if info.RequestID == "" && info.SessionID == "" { // (what the host sends: the same for every call of a tool)
		st = t.starts.get(startKey{kind: startUpstream, a: server, b: method, c: target, d: info.ProtocolVersion, e: info.Transport}, build)
	} else {
		st = build()
	}
	ctx, s := t.tracer.Start(ctx, st.name, st.opts...)
	return ctx, Span{s: s}
}

// StartPluginRPC starts the CLIENT span "{rpc.method}" of a gRPC call to
// plugin; rpc is the full method, "mcphost.plugin.v1.Transport/Send" (a
// leading "/" is dropped).
func (t *Telemetry) StartPluginRPC(ctx context.Context, plugin, rpc string) (context.Context, Span) {
	if t == nil || t.tracer == nil {
		return ctx, Span{}
	}
	rpc = strings.TrimPrefix(rpc, "/")
	ctx, s := t.tracer.Start(ctx, rpc,
		kindClient,
		trace.WithAttributes(
			semconv.RPCSystemNameGRPC,
			semconv.RPCMethod(rpc),
			AttrPluginName.String(plugin),
		))
	return ctx, Span{s: s}
}

// End ends the span; a non-nil err marks it failed with error.type =
// ErrorType(err) (and rpc.response.status_code for a JSON-RPC error).
// err's message is not recorded. (Mind that "defer span.End(err)" reads
// err at the defer; use "defer func() { span.End(err) }()".)
func (s Span) End(err error) {
	if s.s == nil {
		return
	}
	if err != nil {
		if code, ok := jsonrpcCode(err); ok {
			s.s.SetAttributes(semconv.RPCResponseStatusCode(strconv.FormatInt(code, 10)))
		}
		s.fail(ErrorType(err))
	}
	if !s.shared {
		s.s.End()
	}
}

// EndWith ends the span; a non-empty errType (a class such as
// ErrorTypeToolError, never a message) marks it failed.
func (s Span) EndWith(errType string) {
	if s.s == nil {
		return
	}
	if errType != "" {
		s.fail(errType)
	}
	if !s.shared {
		s.s.End()
	}
}

// Abandon ends the span of a tool call that did not take place on this
// path, the caller making it again by another (in a span of its own): a
// span of its own ends failed with error.type reason; a shared one (see
// StartToolCall) is left as it is, for the retry shares it too.
func (s Span) Abandon(reason string) {
	if s.s == nil || s.shared {
		return
	}
	s.fail(reason)
	s.s.End()
}

// EndDecision ends a decision span with its outcome ("allow", "deny",
// "ask", …). It records no metric: call RecordDecision for that.
func (s Span) EndDecision(outcome string) {
	if s.s == nil {
		return
	}
	s.s.SetAttributes(AttrOutcome.String(outcome))
	s.s.End()
}

// SpanContext returns the span's identity (invalid for the zero Span).
func (s Span) SpanContext() trace.SpanContext {
	if s.s == nil {
		return trace.SpanContext{}
	}
	return s.s.SpanContext()
}

func (s Span) fail(errType string) {
	s.s.SetAttributes(semconv.ErrorTypeKey.String(errType))
	s.s.SetStatus(codes.Error, errType)
}

// spanStart is the name and start options of a span whose attributes
// at start are the same for every call of a tool: made once, they cost
// no allocation per span (see Telemetry.starts).
type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

// startKey identifies a spanStart: the span (kind) and the values of its
// name and attributes, as the kinds say.
type startKey struct {
	kind          uint8
	a, b, c, d, e string
}

// The span kinds of a startKey.
const (
	startRequest  uint8 = iota + 1 // name only; a: method, b: target
	startDecision                  // a: tool
	startUpstream                  // a: server, b: method, c: target, d: protocol version, e: transport
	startDecided                   // a: tool, b: outcome
	startCheck                     // a: name, b: kind, c: event, d: decision
)

// spanName is "{method} {target}" when target names a tool or a prompt,
// else "{method}".
func spanName(method, target string) string {
	if target != "" && (method == MethodToolsCall || method == MethodPromptsGet) {
		return method + " " + target
	}
	return method
}

// requestAttrs are the attributes of a request span (server or client).
func requestAttrs(method, target string, info RequestInfo, extra attribute.KeyValue) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 9)
	attrs = append(attrs, semconv.McpMethodNameKey.String(method))
	attrs = appendTarget(attrs, method, target)
	if extra.Key != "" {
		attrs = append(attrs, extra)
	}
	if info.RequestID != "" {
		attrs = append(attrs, semconv.JSONRPCRequestID(info.RequestID))
	}
	if info.SessionID != "" {
		attrs = append(attrs, semconv.McpSessionID(info.SessionID))
	}
	if info.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(info.ProtocolVersion))
	}
	if info.Transport != "" {
		attrs = append(attrs, semconv.NetworkTransportKey.String(info.Transport))
	}
	return attrs
}

// appendTarget appends the target's attributes: gen_ai.tool.name and
// gen_ai.operation.name for tools/call, gen_ai.prompt.name for prompts/get.
func appendTarget(attrs []attribute.KeyValue, method, target string) []attribute.KeyValue {
	switch method {
	case MethodToolsCall:
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool)
		if target != "" {
			attrs = append(attrs, semconv.GenAIToolName(target))
		}
	case MethodPromptsGet:
		if target != "" {
			attrs = append(attrs, semconv.GenAIPromptName(target))
		}
	}
	return attrs
}

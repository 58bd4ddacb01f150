// Package telemetry is mcphost's OpenTelemetry instrumentation: the spans of
// a downstream request and of a tool call through the host, W3C trace
// context carried upstream (HTTP headers, and params._meta for every
// transport), and the host's metrics, exported by OTLP and, optionally, on a
// Prometheus /metrics handler.
//
// Telemetry is off unless the host's configuration ([Options]) or the
// standard OTEL_* variables ask for it. A nil or disabled *[Telemetry] is
// valid: every method is a no-op that neither allocates nor locks, so the
// host calls it unconditionally on its hot path.
//
// # Semantic conventions
//
// Names follow the OpenTelemetry semantic conventions v1.41.0 (package
// go.opentelemetry.io/otel/semconv/v1.41.0), the last release that carries
// the Model Context Protocol conventions in the main repository (later
// releases moved them to the GenAI conventions repository, unchanged in
// substance). Both MCP and GenAI conventions are at status "Development".
//
//   - A downstream request is a SERVER span "{mcp.method.name} {target}"
//     (target: gen_ai.tool.name for tools/call, gen_ai.prompt.name for
//     prompts/get — TargetUnknown for a name that names nothing the
//     caller is served; no target otherwise, so no resource URI ever names
//     a span) with mcp.method.name, jsonrpc.request.id, mcp.session.id,
//     mcp.protocol.version, network.transport and, for tools/call,
//     gen_ai.operation.name=execute_tool. Its parent is the trace context in
//     the request's params._meta; an ambient context (from the HTTP headers)
//     becomes a link, as the MCP conventions say.
//   - A tool call through the host is an INTERNAL GenAI span
//     "execute_tool {gen_ai.tool.name}" with mcphost.server.name; its
//     children are the permission decision ("mcphost.permission.decide",
//     INTERNAL, mcphost.outcome), each hook and interceptor that ran
//     ("mcphost.check", INTERNAL, mcphost.check.name, .kind, .event and
//     .decision), the upstream request (CLIENT, named like
//     the server span) and plugin RPCs (CLIENT "{rpc.method}",
//     rpc.system.name=grpc, mcphost.plugin.name). When the call serves a
//     downstream tools/call, that request's SERVER span — an execute_tool
//     span by its attributes already — is the tool call's span: it gains
//     mcphost.server.name and the children, and no second span is made
//     (the MCP conventions: a tool execution already traced gets no
//     separate span, its span gets the MCP attributes).
//   - A failed span has status Error, error.type (a JSON-RPC error code, a
//     classification such as "timeout" or "tool_error", or a Go type name:
//     see [ErrorType]) and, for JSON-RPC errors, rpc.response.status_code.
//     The status description is error.type too: an error's message, which
//     may quote arguments or credentials, is never recorded.
//
// Metrics (OTel name, Prometheus name):
//
//	mcp.server.operation.duration  mcp_server_operation_duration_seconds  histogram, downstream requests by mcp.method.name, gen_ai.tool.name, error.type
//	mcp.client.operation.duration  mcp_client_operation_duration_seconds  histogram, tool calls sent upstream by mcphost.server.name, gen_ai.tool.name, error.type
//	mcphost.permission.decisions   mcphost_permission_decisions_total     counter by mcphost.outcome
//	mcphost.connection.count       mcphost_connection_count               gauge of upstream connections by mcphost.connection.state
//	mcphost.server.reconnects      mcphost_server_reconnects_total        counter by mcphost.server.name
//	mcphost.plugin.restarts        mcphost_plugin_restarts_total          counter by mcphost.plugin.name
//	mcphost.token.refreshes        mcphost_token_refreshes_total          counter by mcphost.server.name, mcphost.outcome
//	mcphost.config.reloads         mcphost_config_reloads_total           counter by mcphost.outcome
//
// A histogram's count is the number of calls; the count with error.type set
// is the number of failed ones, e.g. in PromQL
// sum by (mcphost_server_name, gen_ai_tool_name) (rate(mcp_client_operation_duration_seconds_count{error_type!=""}[5m])).
// The Prometheus handler also serves the Go runtime and process collectors
// (go_goroutines, process_open_fds, …) from its own registry.
//
// No attribute carries an argument value, a result, a token, a header or a
// user identity: the API takes names (server, tool, prompt, plugin, method),
// outcomes and error classes only.
//
// # Cost
//
// Spans are exported in batches by the SDK's batch span processor (its
// limits, defaults and OTEL_BSP_* variables), by the OTLP exporters'
// clients, with a conversion to OTLP messages of mcphost's own that
// allocates a batch's messages in blocks and converts each attribute value
// of the per-call spans once (request and session ids excepted). The names,
// start options and metric attribute sets of the per-call spans and
// measurements are made once per tool (in bounded caches), and the raw
// lane's trace context is written without a map. A front that knows a
// tools/call's server passes it in RequestInfo.Server, so that the SERVER
// span starts with every attribute it ends with (an attribute added to a
// started span copies them all); the permission decision's span is
// started with its outcome for the same reason. BenchmarkHop measures
// one gateway hop's telemetry; host/gateway's BenchmarkTelemetryCost a
// relayed call through a gateway with telemetry off and on.
//
// # Trace context
//
// [Telemetry.InjectMeta] and [Telemetry.ExtractMeta] carry W3C traceparent,
// tracestate and baggage in params._meta, as the MCP conventions recommend
// for every transport; [Telemetry.Transport] and [Telemetry.ExtractHTTP]
// carry them in HTTP headers.
package telemetry

package telemetry

import "go.opentelemetry.io/otel/attribute"

// Attribute keys that the semantic conventions do not define. They are
// namespaced "mcphost." per the OpenTelemetry attribute naming rules; in
// Prometheus the dots become underscores (mcphost_server_name, …).
const (
	// AttrServerName is the configured name of an upstream MCP server.
	AttrServerName = attribute.Key("mcphost.server.name")
	// AttrPluginName is the name of a plugin.
	AttrPluginName = attribute.Key("mcphost.plugin.name")
	// AttrOutcome is the outcome of a permission decision, a token refresh
	// or a configuration reload.
	AttrOutcome = attribute.Key("mcphost.outcome")
	// AttrConnectionState is the state of an upstream connection.
	AttrConnectionState = attribute.Key("mcphost.connection.state")
)

// Values of network.transport (semantic conventions: "pipe" for stdio,
// "tcp" for HTTP).
const (
	TransportPipe = "pipe"
	TransportTCP  = "tcp"
)

// Outcomes of a configuration reload, for [Telemetry.RecordReload].
const (
	ReloadApplied   = "applied"
	ReloadRejected  = "rejected"
	ReloadUnchanged = "unchanged"
)

// MCP methods whose target names a span ("tools/call {tool}",
// "prompts/get {prompt}").
const (
	MethodToolsCall  = "tools/call"
	MethodPromptsGet = "prompts/get"
)

package telemetry

// MethodOther replaces a method name that is not a known MCP method, in
// span names and attributes, so that a peer cannot grow the number of span
// names and metric series at will (the rule the HTTP conventions give for
// http.request.method).
const MethodOther = "_OTHER"

// TargetUnknown replaces, in span names and attributes, a tool or prompt
// name (gen_ai.tool.name, gen_ai.prompt.name) that names nothing the
// caller is served: a made-up name, or one hidden from that caller. Only
// names the registry holds become label values, so that a client cannot
// grow the metric series at will, nor learn by them what it is not shown.
const TargetUnknown = "_unknown"

// knownMethods are the MCP methods and notifications: those of the
// semantic conventions v1.41.0 and those the go-sdk v1.8.0 handles.
var knownMethods = map[string]bool{
	"completion/complete":                      true,
	"elicitation/create":                       true,
	"initialize":                               true,
	"logging/setLevel":                         true,
	"notifications/cancelled":                  true,
	"notifications/elicitation/complete":       true,
	"notifications/initialized":                true,
	"notifications/message":                    true,
	"notifications/progress":                   true,
	"notifications/prompts/list_changed":       true,
	"notifications/resources/list_changed":     true,
	"notifications/resources/updated":          true,
	"notifications/roots/list_changed":         true,
	"notifications/subscriptions/acknowledged": true,
	"notifications/tools/list_changed":         true,
	"ping":                                     true,
	"prompts/get":                              true,
	"prompts/list":                             true,
	"resources/list":                           true,
	"resources/read":                           true,
	"resources/subscribe":                      true,
	"resources/templates/list":                 true,
	"resources/unsubscribe":                    true,
	"roots/list":                               true,
	"sampling/createMessage":                   true,
	"server/discover":                          true,
	"subscriptions/listen":                     true,
	"tools/call":                               true,
	"tools/list":                               true,
}

// methodName returns method if it is a known MCP method, else MethodOther.
func methodName(method string) string {
	if knownMethods[method] {
		return method
	}
	return MethodOther
}

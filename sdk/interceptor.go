package sdk

import (
	"context"
	"encoding/json"
)

// Interceptor checks the operations that pass through the host: the request
// (client to upstream) and the response (upstream to client) of tools/call,
// prompts/get, resources/read and the list methods. It passes, denies with
// a reason, or mutates the payload. Intercept is called concurrently.
//
// A problem with the configuration (a bad option) is reported as an error
// diagnostic, which makes the host refuse the operation (fail closed,
// unless the user's block sets fail_open); an error return means the plugin
// broke, with the same effect.
type Interceptor interface {
	Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResponse, error)
}

// InterceptScoper is an Interceptor that says, per configuration, which
// phases it needs, so that the host never calls it for the others (a
// request-only check costs no RPC on the response). OPTIONAL: without it the
// host calls Intercept in every phase the user's block names.
//
// The host calls Scope once per configuration and plugin process and
// caches the answer. Error diagnostics make every operation the block
// checks fail closed.
type InterceptScoper interface {
	Scope(ctx context.Context, config json.RawMessage) (request, response bool, diags Diagnostics)
}

// InterceptPhase is the request or the response of an operation.
type InterceptPhase int

// The phases.
const (
	// PhaseRequest: the payload is the request's.
	PhaseRequest InterceptPhase = iota + 1
	// PhaseResponse: the payload is the result object.
	PhaseResponse
)

// String returns "request" or "response".
func (p InterceptPhase) String() string {
	switch p {
	case PhaseRequest:
		return "request"
	case PhaseResponse:
		return "response"
	}
	return "unspecified"
}

// InterceptAction is what an interceptor decided.
type InterceptAction int

// The actions. The zero value is ActionPass's meaning too: a response
// without an action passes.
const (
	// ActionPass lets the operation go on unchanged.
	ActionPass InterceptAction = iota + 1
	// ActionDeny refuses the operation (PhaseRequest) or replaces its
	// result with an error (PhaseResponse); Reason says why, to the client.
	ActionDeny
	// ActionMutate replaces the payload with InterceptResponse.Payload.
	ActionMutate
)

// String returns "pass", "deny" or "mutate".
func (a InterceptAction) String() string {
	switch a {
	case ActionPass, 0:
		return "pass"
	case ActionDeny:
		return "deny"
	case ActionMutate:
		return "mutate"
	}
	return "unknown"
}

// Events an interceptor sees (InterceptRequest.Event).
const (
	EventToolsCall     = "tools/call"
	EventToolsList     = "tools/list"
	EventPromptsGet    = "prompts/get"
	EventPromptsList   = "prompts/list"
	EventResourcesRead = "resources/read"
	EventResourcesList = "resources/list"
	EventTemplatesList = "resources/templates/list"
)

// InterceptRequest is one phase of one operation.
type InterceptRequest struct {
	// Interceptor is the name of the user's interceptor block.
	Interceptor string
	// Event is the operation (EventToolsCall, …).
	Event string
	Phase InterceptPhase
	// Payload is what this phase checks: tools/call's arguments object,
	// prompts/get's {"name","arguments"}, resources/read's {"uri"} in
	// PhaseRequest; the result object in PhaseResponse.
	Payload json.RawMessage
	// Config is the block's options as a JSON object.
	Config json.RawMessage
	// Request is, in PhaseResponse, the request payload the result answers.
	Request json.RawMessage
	// ServerName is the upstream server; Name the operation's name: the
	// canonical tool name (mcp__SERVER__TOOL), the prompt's name or the
	// resource's URI.
	ServerName string
	Name       string
	// Principal is the gateway user; nil for the host's own user. Its
	// Token is never set.
	Principal *Principal
}

// InterceptResponse is an interceptor's decision.
type InterceptResponse struct {
	Action InterceptAction
	// Reason says why, on ActionDeny; the client sees it.
	Reason string
	// Payload is the new payload, on ActionMutate.
	Payload json.RawMessage
	// Diagnostics with an error say the configuration is unusable.
	Diagnostics Diagnostics
}

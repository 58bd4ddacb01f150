// Package intercept is the engine of hooks and interceptors: the checks an
// organization puts between a client's request and an upstream, and between
// the upstream's result and the client.
//
// A Chain holds every configured check (Entry) in declared order; it is
// immutable and replaced on reload. For one call, Chain.ForTool (ForEvent,
// ForElicit) returns the Plan of the checks that match, or nil when none
// does, so a call matched by nothing pays one map load. A Plan runs its
// Claude Code hooks (Pre), its request interceptors (Request) and its
// response interceptors and hooks (Response).
package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// Events: SEP-2624 lifecycle events; hooks map onto tools/call and
// elicitation/create.
const (
	EventToolsCall     = "tools/call"
	EventToolsList     = "tools/list"
	EventPromptsGet    = "prompts/get"
	EventPromptsList   = "prompts/list"
	EventResourcesRead = "resources/read"
	EventResourcesList = "resources/list"
	EventTemplatesList = "resources/templates/list"
	// EventElicit is for hooks only: Elicitation (Request) and
	// ElicitationResult (Response).
	EventElicit = "elicitation/create"
)

// Phase is the request (client → upstream) or the response (upstream →
// client) of an operation. Phases combine as a bit set.
type Phase uint8

// The phases.
const (
	Request Phase = 1 << iota
	Response
)

// Kind is what runs a check.
type Kind string

// The kinds of checks.
const (
	KindHook    Kind = "hook"    // a Claude Code hook: a command or an HTTP POST
	KindPlugin  Kind = "plugin"  // an interceptor plugin (go-plugin)
	KindServer  Kind = "server"  // a SEP-2624 interceptor server
	KindBuiltin Kind = "builtin" // validate_input, validate_output, secrets
)

// Mode says whether a check's decisions apply (Enforce) or are only
// recorded (Audit).
type Mode uint8

// The modes.
const (
	Enforce Mode = iota
	Audit
)

// Call is one operation as a check sees it. Payload is the request params'
// part (tools/call: the arguments object; prompts/get: {"name","arguments"};
// resources/read: {"uri"}) in Request, the result object in Response; Err
// is set in Response for a failed call.
type Call struct {
	// Event is one of the Event constants.
	Event string
	// Server is the upstream server's name; Name the canonical mcp__S__T
	// (a prompt's registry name, a resource's URI); Original the name on
	// the server.
	Server, Name, Original string
	// Tool is the registry tool of a tools/call (its schemas); nil otherwise.
	Tool *registry.Tool
	// Who is the gateway user; nil: the host's own user.
	Who *inbound.Principal
	// Session is the client session in audit.SessionRef form, or a
	// per-process id (CLI, library).
	Session string
	// Endpoint is the gateway endpoint's name (""), Front the front end:
	// "cli", "library", "stdio" or "http".
	Endpoint, Front string
	// ID is the tool_use_id: one per call, the same in every phase.
	ID string
	// Args is the (possibly updated) request payload, in Response too.
	Args json.RawMessage
	// Payload is what this phase checks.
	Payload json.RawMessage
	// Err is a failed call's error (Response).
	Err error
	// IsError says the result is a tool error result (Response).
	IsError bool
	// Duration is how long the upstream took (Response).
	Duration time.Duration
	// Elicit is the question of an EventElicit.
	Elicit *mcp.ElicitParams
	// PreContext is the PreToolUse hooks' additionalContext, appended to
	// the result by Response.
	PreContext []string
}

// Action is what a check decided.
type Action uint8

// The actions.
const (
	Pass   Action = iota // no decision: the call goes on unchanged
	Allow                // a hook's permissionDecision allow
	Ask                  // a hook's permissionDecision ask
	Deny                 // refuse (Request) or turn the result into an error (Response)
	Mutate               // replace the payload with Verdict.Payload
)

// String returns the action's audit word.
func (a Action) String() string {
	switch a {
	case Pass:
		return "pass"
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	case Mutate:
		return "mutate"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// Verdict is one check's outcome for one phase of one call.
type Verdict struct {
	Action Action
	// Reason is told to the client on Deny; it never goes into the audit
	// line.
	Reason string
	// Payload is the new payload of a Mutate; with Allow or Ask from a
	// hook, its updatedInput.
	Payload json.RawMessage
	// Context is a hook's additionalContext.
	Context string
	// Code is, for a Deny in Request, a JSON-RPC error code (validate_input:
	// -32602); 0 refuses a tools/call with a tool error result. A Deny in
	// Response (a hook's decision "block", continue false) turns the result
	// into an error result with Reason.
	Code int64
}

// Checker runs one check.
type Checker interface {
	Check(ctx context.Context, c *Call, p Phase) (Verdict, error)
}

// Entry is one configured hook or interceptor.
type Entry struct {
	Name string
	Kind Kind
	// Hook is the Claude Code event name, for hooks.
	Hook string
	// Events and Phases are what the entry checks.
	Events []string
	Phases Phase
	Match  Match
	Mode   Mode
	// FailOpen lets a call go on when the check fails (an error, a crash,
	// a timeout); by default such a call is refused.
	FailOpen bool
	// Timeout bounds one run of a Blocking check (0: none beyond the
	// call's context); an in-process check runs to its end.
	Timeout time.Duration
	// Source is where the entry was declared: "user scope, /x/config.hcl:12"
	// (for Rule.Source, logs).
	Source string
	// DedupKey identifies identical hook handlers (command, shell and
	// environment, or URL and headers): within one event they run once.
	// It is "" for interceptors.
	DedupKey string
	// Blocking says the check runs code out of process (hooks, plugins,
	// servers), so it must not run on a read loop.
	Blocking bool
	Checker  Checker
}

// Match selects the calls an entry checks. Every set part must match.
type Match struct {
	// Matcher is a hook's Claude Code matcher over the canonical name (the
	// server name for Elicitation events); nil matches all.
	Matcher func(name string) bool
	// Servers are server names; Tools permission-rule patterns
	// (permissions.Match).
	Servers, Tools []string
	Principals     *permissions.Principals
}

// Record is what the audit line and the span get of one check.
type Record struct {
	Name string
	Kind Kind
	// Event is the event and the phase: "tools/call/request".
	Event string
	// Decision is pass, allow, ask, deny, mutate, error, timeout,
	// would_deny or would_mutate.
	Decision   string
	Mode       Mode
	Start, End time.Time
}

// ErrRefused is matched by every *RefusedError.
var ErrRefused = errors.New("refused by a check")

// RefusedError is a call refused by a check.
type RefusedError struct {
	// By is the entry's name, Kind its kind.
	By   string
	Kind Kind
	// Reason is the check's reason, told to the client.
	Reason string
	// Code is the JSON-RPC error code the client gets; 0 refuses a
	// tools/call with a tool error result.
	Code int64
}

func (e *RefusedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("refused by %s %s", e.Kind, e.By)
	}
	return fmt.Sprintf("refused by %s %s: %s", e.Kind, e.By, e.Reason)
}

// Is makes a RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

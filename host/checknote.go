package host

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/intercept"
)

// CallInfo is what a front end tells the gate about a call, for hooks and
// interceptors (their input's session, endpoint and front).
type CallInfo struct {
	// Session is the client session in audit.SessionRef form ("" for none).
	Session string
	// Endpoint is the gateway endpoint's name ("" for the default one).
	Endpoint string
	// Front is FrontStdio or FrontHTTP (gateway fronts) or FrontCLI (the
	// CLI's call command); "" means the caller is the library
	// (FrontLibrary).
	Front string
}

type callInfoKey struct{}

// WithCallInfo returns ctx whose calls carry info.
func WithCallInfo(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, info)
}

// CallInfoOf returns the CallInfo ctx carries (WithCallInfo, or a
// CallContext), and whether it carries one.
func CallInfoOf(ctx context.Context) (CallInfo, bool) {
	switch v := ctx.Value(callInfoKey{}).(type) {
	case CallInfo:
		return v, true
	case *CallContext:
		return v.info(), true
	}
	return CallInfo{}, false
}

// CallContext is a context whose calls carry a CallInfo (CallInfoOf), for
// a front that tells the checks about its calls at no cost to a call that
// no check matches: it embeds a CallContext in the value it already
// allocates per call (no context.WithValue), and the session's
// audit.SessionRef is computed only when a check asks for the CallInfo.
type CallContext struct {
	context.Context // the call's parent context
	// SessionID is the client session's raw id ("" for none).
	SessionID string
	// Endpoint and Front are CallInfo's.
	Endpoint, Front string
}

// Value returns c for CallInfoOf's key, else the parent's value of key.
func (c *CallContext) Value(key any) any {
	if _, ok := key.(callInfoKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// info is c's CallInfo.
func (c *CallContext) info() CallInfo {
	return CallInfo{Session: audit.SessionRef(c.SessionID), Endpoint: c.Endpoint, Front: c.Front}
}

// Checks returns the records of the hooks and interceptors that ran for
// the call, in the order they ran (for the audit line and the spans).
func (n *DecisionNote) Checks() []intercept.Record {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.records)
}

// addChecks appends the records of checks that ran.
func (n *DecisionNote) addChecks(recs []intercept.Record) {
	if n == nil || len(recs) == 0 {
		return
	}
	n.mu.Lock()
	n.records = append(n.records, recs...)
	n.mu.Unlock()
}

// callChecks is what a call's checks decided before it was sent, kept in
// its DecisionNote so that the steps that gate one call (the relay's try,
// the full path, the rounds of one request) run the PreToolUse hooks and
// the request interceptors once, and tell every check the same
// tool_use_id. The steps of a call run one after the other: its fields
// are used without a lock.
type callChecks struct {
	chain *intercept.Chain // the checks they were run under
	tool  string
	id    string // tool_use_id
	// pre is the PreToolUse hooks' outcome (preRan: they ran).
	pre    intercept.PreOutcome
	preRan bool
	// reqArgs and reqErr are the request interceptors' outcome (reqRan:
	// they ran).
	reqArgs json.RawMessage
	reqErr  error
	reqRan  bool
}

// callChecks returns the checks of the call of tool under chain that n
// holds, else new ones (held by n). A nil n holds none.
func (n *DecisionNote) callChecks(chain *intercept.Chain, tool string) *callChecks {
	if n == nil {
		return &callChecks{chain: chain, tool: tool, id: newToolUseID()}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if c := n.checks; c != nil && c.chain == chain && c.tool == tool {
		return c
	}
	n.checks = &callChecks{chain: chain, tool: tool, id: newToolUseID()}
	return n.checks
}

// chain returns the hooks and interceptors in force (nil: none; a nil
// *intercept.Chain matches nothing).
func (h *Host) chain() *intercept.Chain { return h.checks.Load() }

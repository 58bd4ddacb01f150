package intercept

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/inbound"
)

// Chain is every configured check, in declared order. It is immutable; a
// reload builds a new one. A nil *Chain has no checks.
type Chain struct {
	entries []*Entry
}

// NewChain returns the chain of entries, or nil for none.
func NewChain(entries []*Entry) *Chain {
	if len(entries) == 0 {
		return nil
	}
	return &Chain{entries: entries}
}

// Plan is the checks that match one call, in declared order.
type Plan struct {
	entries []*Entry
}

// ForTool returns the plan of a tools/call of the canonical name on
// server by who, or nil when nothing matches.
func (c *Chain) ForTool(name, server string, who *inbound.Principal) *Plan {
	return nil // TODO(WP2)
}

// ForEvent returns the plan of event (prompts/get, resources/read, the list
// methods) for the item name on server, or nil when nothing matches.
func (c *Chain) ForEvent(event, server, name string, who *inbound.Principal) *Plan {
	return nil // TODO(WP2)
}

// ForElicit returns the plan of the Elicitation hooks for an elicitation
// from server, or nil when nothing matches.
func (c *Chain) ForElicit(server string, who *inbound.Principal) *Plan {
	return nil // TODO(WP2)
}

// Blocking reports whether a check of the plan runs out of process.
func (p *Plan) Blocking() bool { return false }

// HasRequest reports whether the plan checks the request.
func (p *Plan) HasRequest() bool { return false }

// HasResponse reports whether the plan checks the response.
func (p *Plan) HasResponse() bool { return false }

// PreOutcome is the merged outcome of a call's PreToolUse hooks.
type PreOutcome struct {
	// Hook is the merged decision (deny > defer > ask > allow): Pass when
	// no hook decided; HookBy the entry that decided it.
	Hook   Action
	HookBy *Entry
	Reason string
	// Args is the winning decision's updatedInput, or nil.
	Args json.RawMessage
	// Refused is set when a hook failed closed (or exited 2).
	Refused *RefusedError
	// Context is the hooks' additionalContext, in declared order.
	Context []string
	Records []Record
}

// Pre runs the plan's PreToolUse hooks, in parallel, and merges their
// decisions.
func (p *Plan) Pre(ctx context.Context, c *Call) PreOutcome { return PreOutcome{} }

// Request runs the plan's request interceptors in declared order and
// returns the payload they leave (c.Payload if none changed it). A refusal
// is a *RefusedError.
func (p *Plan) Request(ctx context.Context, c *Call) (json.RawMessage, []Record, error) {
	return c.Payload, nil, nil
}

// Response runs the plan's response interceptors in declared order, then
// the PostToolUse (or PostToolUseFailure) hooks, and returns the result
// they leave; changed says it differs from c.Payload. It appends
// c.PreContext and the Post hooks' additionalContext as text items.
func (p *Plan) Response(ctx context.Context, c *Call) (result json.RawMessage, changed bool, recs []Record, err error) {
	return c.Payload, false, nil, nil
}

// ElicitBefore runs the Elicitation hooks: a non-nil result answers the
// question without asking anyone.
func (p *Plan) ElicitBefore(ctx context.Context, c *Call) (*mcp.ElicitResult, []Record, error) {
	return nil, nil, nil
}

// ElicitAfter runs the ElicitationResult hooks on the answer res and
// returns the answer to send.
func (p *Plan) ElicitAfter(ctx context.Context, c *Call, res *mcp.ElicitResult) (*mcp.ElicitResult, []Record, error) {
	return res, nil, nil
}

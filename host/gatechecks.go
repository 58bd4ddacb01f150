package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// The gate's steps of hooks and interceptors (D1 of the design): a call's
// PreToolUse hooks run once per call — the relay's try and the full path
// after it share their outcome through the call's DecisionNote — and their
// decision is merged with the rules' as Claude Code merges them (deny > ask
// > allow; a hook's allow turns only the default mode's ask into allow,
// never a rule's ask); then the request interceptors check the arguments
// the hooks left, before anyone is asked about the call.

// callArgs are a call's arguments as its entry point has them: raw JSON
// (the relay) or a value (CallTool). They are encoded only for a call that
// hooks or interceptors check.
type callArgs struct {
	raw   json.RawMessage // set by the relay
	value any             // CallTool's args (json.RawMessage passes through)
}

// json returns the arguments as JSON (nil for none).
func (a callArgs) json() (json.RawMessage, error) {
	if a.raw != nil || a.value == nil {
		return a.raw, nil
	}
	switch v := a.value.(type) {
	case json.RawMessage:
		return v, nil
	case []byte:
		return json.RawMessage(v), nil
	}
	b, err := json.Marshal(a.value)
	if err != nil {
		return nil, fmt.Errorf("encoding the arguments: %w", err)
	}
	return b, nil
}

// HookRulePattern is the Rule.Pattern of a permission decision a
// PreToolUse hook made (Decision.Explain, ApprovalRequiredError and the
// audit line's rule name it); the rule's Source is where the hook was
// declared.
const HookRulePattern = "hook PreToolUse"

// checkPre runs plan's PreToolUse hooks on the call of t with the
// arguments in (their outcome is the one cc, the call's checks its note
// n holds, has, if the call ran them already) and merges their decision
// with the rules' d. It
// returns the merged decision and the call as the checks see it; a hook's
// deny is a refusal (a *intercept.RefusedError, matching ErrDenied).
func (h *Host) checkPre(ctx context.Context, cc *callChecks, n *DecisionNote, plan *intercept.Plan, t *registry.Tool, d permissions.Decision, in callArgs) (permissions.Decision, *intercept.Call, error) {
	call := h.toolCall(ctx, t, cc.id)
	args, err := in.json()
	if err != nil {
		return d, nil, fmt.Errorf("calling %s: %w", t.Name, err)
	}
	call.Args, call.Payload = args, args
	if !cc.preRan {
		cc.pre, cc.preRan = plan.Pre(ctx, call), true
		h.reportChecks(ctx, n, cc.pre.Records)
	}
	pre := cc.pre
	if pre.Args != nil {
		call.Args = pre.Args // updatedInput
	}
	call.Payload, call.PreContext = call.Args, pre.Context
	d = mergeHooks(d, pre)
	if d.Behavior == permissions.Deny {
		r := pre.Refused
		if r == nil {
			r = &intercept.RefusedError{By: entryName(pre.HookBy), Kind: intercept.KindHook, Reason: pre.Reason}
		}
		return d, call, &RefusedError{r}
	}
	return d, call, nil
}

// mergeHooks merges the PreToolUse hooks' outcome pre into the rules'
// decision d (which is not deny): deny if a hook denies (or failed
// closed); else ask if a hook asks, a rule asks or the managed
// configuration's default mode asks; else allow if a hook allows (the
// default mode's ask becomes allow); else d. A decision a hook
// made has a Rule of pattern HookRulePattern.
func mergeHooks(d permissions.Decision, pre intercept.PreOutcome) permissions.Decision {
	byHook := func(b permissions.Behavior) permissions.Decision {
		r := &permissions.Rule{Behavior: b, Pattern: HookRulePattern}
		if pre.HookBy != nil {
			r.Source = pre.HookBy.Source
		}
		return permissions.Decision{Behavior: b, Rule: r}
	}
	switch {
	case pre.Refused != nil || pre.Hook == intercept.Deny:
		return byHook(permissions.Deny)
	case d.Behavior == permissions.Deny:
		return d
	case pre.Hook == intercept.Ask:
		return byHook(permissions.Ask)
	case d.Behavior == permissions.Ask && d.Rule != nil:
		return d // a rule's ask: a hook's allow does not skip it
	case d.Behavior == permissions.Ask && d.ModeManaged:
		return d // the managed default mode's ask: managed policy
	case pre.Hook == intercept.Allow && d.Behavior == permissions.Ask:
		return byHook(permissions.Allow)
	}
	return d
}

// checkRequest runs plan's request interceptors on call: call.Args become
// the arguments they leave. A refusal is a *RefusedError. The outcome is
// kept in cc, the call's checks its note n holds: the full path after a
// relay's try that ran them does not run them again.
func (h *Host) checkRequest(ctx context.Context, cc *callChecks, n *DecisionNote, plan *intercept.Plan, call *intercept.Call) error {
	if !plan.HasRequest() {
		return nil
	}
	if cc.reqRan {
		if cc.reqErr == nil {
			call.Args = cc.reqArgs
		}
		call.Payload = call.Args
		return cc.reqErr
	}
	args, recs, err := plan.Request(ctx, call)
	h.reportChecks(ctx, n, recs)
	if err != nil {
		err = refusal(err)
	} else {
		call.Args = args
	}
	call.Payload = call.Args
	cc.reqRan, cc.reqArgs, cc.reqErr = true, args, err
	return err
}

// refusal returns err of a check, a *intercept.RefusedError, as a
// *RefusedError; another error (a check that failed without failing closed
// into a refusal) is a refusal all the same: a call a check could not
// clear is not sent.
func refusal(err error) error {
	if r, ok := errors.AsType[*intercept.RefusedError](err); ok {
		return &RefusedError{r}
	}
	return fmt.Errorf("%w: a check failed: %w", ErrDenied, err)
}

// RefusedError is a tool call a hook or an interceptor refused: it matches
// ErrDenied (the call was not allowed) and intercept.ErrRefused, and
// errors.As finds its *intercept.RefusedError. A refusal with a Code
// (validate_input: -32602) is also a *jsonrpc.Error of that code and the
// check's reason for errors.As: a gateway answers it as a JSON-RPC error;
// one without is told to the client as a tool error result with Error's
// text ("refused by hook PreToolUse: …").
type RefusedError struct {
	*intercept.RefusedError
}

// Unwrap returns the check's refusal.
func (e *RefusedError) Unwrap() error { return e.RefusedError }

// Is makes a RefusedError match ErrDenied and intercept.ErrRefused.
func (e *RefusedError) Is(target error) bool {
	return target == ErrDenied || target == intercept.ErrRefused
}

// As sets a **jsonrpc.Error target for a refusal with a Code.
func (e *RefusedError) As(target any) bool {
	p, ok := target.(**jsonrpc.Error)
	if !ok || e.Code == 0 {
		return false
	}
	msg := e.Reason
	if msg == "" {
		msg = e.RefusedError.Error()
	}
	*p = &jsonrpc.Error{Code: e.Code, Message: msg}
	return true
}

// entryName is e's name ("" for nil).
func entryName(e *intercept.Entry) string {
	if e == nil {
		return ""
	}
	return e.Name
}

// toolCall returns the intercept.Call of a call of t by ctx's caller, of
// tool_use_id id.
func (h *Host) toolCall(ctx context.Context, t *registry.Tool, id string) *intercept.Call {
	c := &intercept.Call{Event: intercept.EventToolsCall, Server: t.Server, Name: t.Name, Original: t.Original, Tool: t, ID: id}
	h.fillCallInfo(ctx, c)
	return c
}

// fillCallInfo sets c's caller, session, endpoint and front from ctx
// (CallInfo): a call whose caller set no front is the library's
// (FrontLibrary); the CLI's and the library's calls have the process's
// session id.
func (h *Host) fillCallInfo(ctx context.Context, c *intercept.Call) {
	c.Who = principalOf(ctx)
	info, _ := CallInfoOf(ctx)
	c.Session, c.Endpoint, c.Front = info.Session, info.Endpoint, info.Front
	if c.Front == "" {
		c.Front = FrontLibrary
	}
	if c.Session == "" && c.Front != FrontStdio && c.Front != FrontHTTP {
		c.Session = h.session
	}
}

// principalOf returns ctx's caller's principal, or nil.
func principalOf(ctx context.Context) *inbound.Principal {
	if c := CallerOf(ctx); c != nil {
		return c.Principal
	}
	return nil
}

// newToolUseID returns a tool_use_id: "mcphost_" and 16 hex digits.
func newToolUseID() string { return "mcphost_" + randomHex(8) }

// newSessionID returns the per-process session id of the CLI's and the
// library's calls, as hooks are told it.
func newSessionID() string { return "mcphost-" + randomHex(8) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

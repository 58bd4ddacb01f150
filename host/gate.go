package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// The call pipeline. Every tool call — the CLI's, the library's, the
// gateway's go-sdk path and its relay — passes the one gate below, in this
// order: lookup → pin → permission rules (a deny ends the call here) →
// PreToolUse hooks, merged with the rules' decision (deny > ask > allow;
// gatechecks.go) → request interceptors → ask → the login pseudo-tool →
// limits. Nothing reaches a server unless the gate passed it. After the
// call, the response interceptors and the PostToolUse hooks see the result
// before anything else does (call.go, relay.go).
// The steps of one call that gate it (the gateway's relay trying it, then
// the full path) share one permission decision: its DecisionNote.

// ApprovalRequiredError is returned for a call whose permission decision is
// ask when the caller asks its own user (CallOptions.CallerAsks), or when no
// one can be asked here. It matches ErrDenied.
type ApprovalRequiredError struct {
	Tool     *registry.Tool
	Decision permissions.Decision
	// Asker says whether Options.Ask exists (false: no one can be asked).
	asker bool
}

func (e *ApprovalRequiredError) Error() string {
	if !e.asker {
		return fmt.Sprintf("%s: %s needs approval (%s), and no one can be asked here; allow it with a permissions rule, e.g. allow = [%q]", ErrDenied, e.Tool.Name, e.Decision.Explain(), e.Tool.Name)
	}
	return fmt.Sprintf("%s: %s needs approval (%s)", ErrDenied, e.Tool.Name, e.Decision.Explain())
}

// Is makes an ApprovalRequiredError match ErrDenied.
func (e *ApprovalRequiredError) Is(target error) bool { return target == ErrDenied }

// LoginRequiredError is returned for a call of a needs-auth server's
// authenticate pseudo-tool when the caller presents logins itself
// (CallOptions.CallerAsks): the caller runs the login.
type LoginRequiredError struct {
	Server string
	Tool   *registry.Tool
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("%s needs a login: call %s or run `mcphost auth login %s`", e.Server, e.Tool.Name, e.Server)
}

// gated is a call that passed the gate.
type gated struct {
	tool *registry.Tool
	// gen is the session generation the tool was listed and checked on (see
	// listedGeneration).
	gen uint64
	// login is true for the authenticate pseudo-tool: the call is a login.
	login bool
	// idle and most are the call's limits: tool_timeout without a result or
	// progress, max_tool_duration in all.
	idle, most time.Duration
	server     *config.Server
	// plan is the hooks and interceptors that check the call (nil: none,
	// and call is nil too); call is the call as they see it: call.Args are
	// the arguments to send (the hooks' updatedInput, the request
	// interceptors' mutations).
	plan *intercept.Plan
	call *intercept.Call
	sent time.Time // when the call was sent (started), with a plan
}

// gateMode says what the gate may do for a call that needs a person.
type gateMode int

const (
	// gateAsk asks through Options.Ask (the CLI, the library).
	gateAsk gateMode = iota
	// gateCallerAsks returns *ApprovalRequiredError and *LoginRequiredError:
	// the caller asks its own user (the gateway's go-sdk path).
	gateCallerAsks
	// gateNoPerson refuses with errNotRelayable whatever would need a person,
	// a login or a refusal message (the relay, which then leaves the call to
	// the full path).
	gateNoPerson
	// gateNoWait is gateNoPerson that never waits: a tool whose server's
	// list is not held (the lookup would list it) is refused too (the
	// relay's start on a read loop).
	gateNoWait
)

// errNotRelayable is the relay's signal that the full path must take the call.
var errNotRelayable = fmt.Errorf("the call needs the full path")

// gate decides whether the call of the registry tool name with the
// arguments in may be sent, and with which limits (the arguments to send
// are in.'s, or, when hooks or interceptors check the call, g.call.Args).
// approved says the caller already asked about this very
// call and the answer was allow; it satisfies an ask, never a deny.
//
// server is name's server part, as registry.ParseName split it (a name
// is parsed once per call, by the call's entry point); ok is ParseName's.
func (h *Host) gate(ctx context.Context, name, server string, ok, approved bool, timeout time.Duration, mode gateMode, in callArgs) (*gated, error) {
	if !ok {
		if mode >= gateNoPerson {
			return nil, errNotRelayable
		}
		return nil, fmt.Errorf("%w %q: registry names look like mcp__SERVER__TOOL", registry.ErrNotFound, name)
	}
	gen := h.listedGeneration(ctx, server)
	reg := h.regFor(ctx, server)
	var t *registry.Tool
	noWait := mode == gateNoWait
	if noWait {
		held, ok := reg.LookupHeldOn(server, name)
		if !ok {
			return nil, errNotRelayable
		}
		t, mode = held, gateNoPerson
	} else {
		var err error
		if t, err = reg.LookupOn(ctx, server, name); err != nil {
			return nil, err
		}
	}
	if err := h.pins.check(t); err != nil {
		if mode == gateNoPerson {
			return nil, errNotRelayable
		}
		return nil, err // a changed definition never reaches the server until approved
	}
	note := DecisionNoteOf(ctx)
	d := h.decide(ctx, note, t.Name, mode)
	login := h.IsAuthTool(ctx, t.Server, t.Original)
	var plan *intercept.Plan
	chain := h.chain()
	if chain != nil && d.Behavior != permissions.Deny && !login {
		// (A call the rules deny starts no hook; the login pseudo-tool
		// sends nothing to the server.)
		plan = chain.ForTool(t.Name, t.Server, principalOf(ctx))
	}
	note.set(d, approved && d.Behavior == permissions.Ask)
	var call *intercept.Call
	if plan != nil {
		switch {
		case noWait && plan.Blocking():
			return nil, errNotRelayable // (a read loop runs no process: RelayCall will)
		case mode == gateNoPerson && d.Behavior == permissions.Ask && d.Rule != nil:
			return nil, errNotRelayable // asked whatever the hooks say
		}
		cc := note.callChecks(chain, t.Name)
		var err error
		d, call, err = h.checkPre(ctx, cc, note, plan, t, d, in)
		note.set(d, approved && d.Behavior == permissions.Ask) // (the hooks' decision, merged)
		if err != nil {
			if mode == gateNoPerson {
				return nil, errNotRelayable // (the full path refuses it)
			}
			return nil, err
		}
		if mode == gateNoPerson && d.Behavior != permissions.Allow {
			return nil, errNotRelayable
		}
		// The request interceptors see the arguments the hooks left, and
		// refuse bad ones before anyone is asked about the call.
		if err := h.checkRequest(ctx, cc, note, plan, call); err != nil {
			if mode == gateNoPerson {
				return nil, errNotRelayable
			}
			return nil, err
		}
	}
	switch d.Behavior {
	case permissions.Allow:
	case permissions.Deny:
		if mode == gateNoPerson {
			return nil, errNotRelayable
		}
		if whoOf(ctx) != nil {
			// A gateway user is not listed the tool: it is told neither
			// that it exists nor the rule (the audit log has the rule).
			return nil, &hiddenToolError{name: t.Name}
		}
		return nil, fmt.Errorf("%w: %s is %s", ErrDenied, t.Name, d.Explain())
	default: // ask
		switch {
		case approved:
		case mode == gateNoPerson:
			return nil, errNotRelayable
		case mode == gateCallerAsks:
			return nil, &ApprovalRequiredError{Tool: t, Decision: d, asker: true}
		case h.ask == nil:
			return nil, &ApprovalRequiredError{Tool: t, Decision: d}
		default:
			ok, err := h.ask(withAskArguments(ctx, in, call), t, d)
			if err != nil {
				return nil, fmt.Errorf("%w: asking about %s: %v", ErrDenied, t.Name, err)
			}
			if !ok {
				return nil, fmt.Errorf("%w: %s was declined", ErrDenied, t.Name)
			}
		}
	}
	g := &gated{tool: t, gen: gen, plan: plan, call: call}
	if login {
		switch mode {
		case gateNoPerson:
			return nil, errNotRelayable
		case gateCallerAsks:
			return nil, &LoginRequiredError{Server: t.Server, Tool: t}
		}
		g.login = true
		return g, nil
	}
	if c := h.conns.Get(t.Server); c != nil {
		g.server = c.Config()
	}
	g.idle, g.most = toolLimits(timeout, g.server)
	return g, nil
}

// hiddenToolError refuses a gateway user's call of a tool the permission
// rules deny it: as an unknown tool (registry.ErrNotFound), which it is
// to that user, and as ErrDenied for the host's own accounting.
type hiddenToolError struct{ name string }

func (e *hiddenToolError) Error() string { return fmt.Sprintf("unknown tool %q", e.name) }

func (e *hiddenToolError) Is(target error) bool {
	return target == ErrDenied || target == registry.ErrNotFound
}

// decide is the permission decision of a call of the tool name: the one
// the call took already (its DecisionNote holds it, taken under the rules
// in force) or one taken now. Its span and its count (telemetry) are
// recorded once per call, by the first gate that applies it — not by a
// relay's gate that refuses it (the full path then applies it).
func (h *Host) decide(ctx context.Context, n *DecisionNote, name string, mode gateMode) permissions.Decision {
	if !h.tel.Enabled() {
		return h.decision(ctx, n, name)
	}
	pol := h.policy.Load()
	d, held := n.held(pol, name)
	switch {
	case !held:
		// The rules are matched in memory, in well under a microsecond:
		// the span is recorded once the outcome is known, started with it
		// (a span given an attribute after its start copies its list).
		d = pol.DecideFor(name, whoOf(ctx))
		n.hold(pol, name, d)
		n.once(noteTraced)
		h.tel.TraceDecision(ctx, name, d.Behavior.String())
	case n.once(noteTraced):
		// Taken before any gate (the telemetry label): its span is the
		// gate's, all the same.
		h.tel.TraceDecision(ctx, name, d.Behavior.String())
	}
	if (mode < gateNoPerson || d.Behavior == permissions.Allow) && n.once(noteCounted) {
		h.tel.RecordDecision(ctx, d.Behavior.String())
	}
	return d
}

// decision returns the permission decision on the tool name for ctx's
// caller: n's, if n holds one taken on name under the rules in force,
// else one taken now (and kept in n). The rules are matched once per call
// however many steps ask (the relay's try, the full path, the telemetry
// label).
func (h *Host) decision(ctx context.Context, n *DecisionNote, name string) permissions.Decision {
	pol := h.policy.Load()
	if d, ok := n.held(pol, name); ok {
		return d
	}
	d := pol.DecideFor(name, whoOf(ctx))
	n.hold(pol, name, d)
	return d
}

// Decision returns the permission decision on the registry tool or prompt
// name for ctx's caller (nil: nobody in particular), taken once per call:
// the one ctx's DecisionNote holds, taken on name under the rules in force
// (by the call's telemetry label, its gate, an earlier round of the same
// request), else one taken now and kept in the note for the steps after.
// What reports on a call (an audit line) takes its decision here rather
// than from the rules again.
//
// Once a gate applied the decision, it is the one the gate applied, the
// hooks' decision merged in (DecisionNote.Get).
func (s *Serving) Decision(ctx context.Context, name string) permissions.Decision {
	n := DecisionNoteOf(ctx)
	d := s.h.decision(ctx, n, name)
	if m, _, ok := n.Get(); ok {
		return m // (held on name under the rules in force: see hold)
	}
	return d
}

// DecisionNote is the permission decision of one call: taken once, by
// the first step that needs it (the gateway's relay, its telemetry label,
// the call gate), and used by every later one — the full path after a
// relay that did not take the call decides nothing again — and by what
// reports on the call (the gateway's audit line, the span and the
// decision metric), which records the decision the gate applied rather
// than one taken again, possibly otherwise. A decision taken under rules
// since reloaded is taken again. Attach one to a call's context with
// WithDecisionNote. Its methods are safe for concurrent use; a nil
// *DecisionNote holds nothing.
type DecisionNote struct {
	mu     sync.Mutex
	policy *permissions.Policy // the rules decision was taken under (nil: none taken)
	tool   string              // the tool it was taken on
	// decision is the rules' decision (held: the next gate decides on
	// it, and merges the hooks' outcome again); merged is the decision a
	// gate applied, the hooks' merged in (Get: what the audit reads).
	decision permissions.Decision
	merged   permissions.Decision
	approved bool
	applied  bool // a gate applied it (Get)
	traced   bool // its span was recorded
	counted  bool // it was counted (telemetry.RecordDecision)
	// checks and records are the call's hooks and interceptors: their
	// outcome before the call was sent (checknote.go), and what they
	// decided, in the order they ran (Checks).
	checks  *callChecks
	records []intercept.Record
}

// Get returns the decision the gate applied; approved says the decision
// was ask and the caller's approval of this very call
// (CallOptions.Approved) satisfied it. ok is false if the call ended
// before the gate decided (an unknown tool, a changed definition). When
// a call was gated more than once (the relay's try, then the full path),
// the last decision is the one applied.
func (n *DecisionNote) Get() (d permissions.Decision, approved, ok bool) {
	if n == nil {
		return permissions.Decision{}, false, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.merged, n.approved, n.applied
}

// set records that a gate applied d.
func (n *DecisionNote) set(d permissions.Decision, approved bool) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.merged, n.approved, n.applied = d, approved, true
	n.mu.Unlock()
}

// held returns the decision n holds on tool under pol.
func (n *DecisionNote) held(pol *permissions.Policy, tool string) (permissions.Decision, bool) {
	if n == nil {
		return permissions.Decision{}, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.policy != pol || n.tool != tool {
		return permissions.Decision{}, false
	}
	return n.decision, true
}

// hold keeps d, taken on tool under pol; one taken under other rules, or
// on another tool, is forgotten with what was recorded of it (until a
// gate applies d, Get reports none applied).
func (n *DecisionNote) hold(pol *permissions.Policy, tool string, d permissions.Decision) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.policy == pol && n.tool == tool {
		return
	}
	n.policy, n.tool, n.decision, n.merged = pol, tool, d, d
	n.approved, n.applied, n.traced, n.counted = false, false, false, false
}

// What is recorded of a DecisionNote's decision, once (DecisionNote.once).
const (
	noteTraced  = iota // its span
	noteCounted        // its count (telemetry.RecordDecision)
)

// once reports whether what (noteTraced, noteCounted) was not recorded of
// n's decision yet, and marks it recorded; always true for a nil n
// (nothing is shared).
func (n *DecisionNote) once(what int) bool {
	if n == nil {
		return true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	f := &n.traced
	if what == noteCounted {
		f = &n.counted
	}
	if *f {
		return false
	}
	*f = true
	return true
}

type decisionNoteKey struct{}

// WithDecisionNote returns ctx whose tool calls take their permission
// decision once, in n, and record there the decision their gate applies.
func WithDecisionNote(ctx context.Context, n *DecisionNote) context.Context {
	return context.WithValue(ctx, decisionNoteKey{}, n)
}

// DecisionNoteOf returns the DecisionNote ctx carries, or nil.
func DecisionNoteOf(ctx context.Context) *DecisionNote {
	n, _ := ctx.Value(decisionNoteKey{}).(*DecisionNote)
	return n
}

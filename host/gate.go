package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// The call pipeline. Every tool call — the CLI's, the library's, the
// gateway's go-sdk path and its relay — passes the one gate below, in this
// order: lookup → pin → permission (allow, deny, or ask) → the login
// pseudo-tool → limits. Nothing reaches a server unless the gate passed it.

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

// gate decides whether the call of the registry tool name may be sent, and
// with which limits. approved says the caller already asked about this very
// call and the answer was allow; it satisfies an ask, never a deny.
func (h *Host) gate(ctx context.Context, name string, approved bool, timeout time.Duration, mode gateMode) (*gated, error) {
	gen := h.listedGeneration(ctx, name)
	server, _, _ := registry.ParseName(name)
	reg := h.regFor(ctx, server)
	var t *registry.Tool
	if mode == gateNoWait {
		held, ok := reg.LookupHeld(name)
		if !ok {
			return nil, errNotRelayable
		}
		t, mode = held, gateNoPerson
	} else {
		var err error
		if t, err = reg.Lookup(ctx, name); err != nil {
			return nil, err
		}
	}
	if err := h.pins.check(t); err != nil {
		if mode == gateNoPerson {
			return nil, errNotRelayable
		}
		return nil, err // a changed definition never reaches the server until approved
	}
	d := h.decide(ctx, t.Name, mode)
	note := decisionNoteOf(ctx)
	note.set(d, approved && d.Behavior == permissions.Ask)
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
			ok, err := h.ask(ctx, t, d)
			if err != nil {
				return nil, fmt.Errorf("%w: asking about %s: %v", ErrDenied, t.Name, err)
			}
			if !ok {
				return nil, fmt.Errorf("%w: %s was declined", ErrDenied, t.Name)
			}
		}
	}
	g := &gated{tool: t, gen: gen}
	if h.IsAuthTool(ctx, t.Server, t.Original) {
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

// decide is the permission decision of a call of the tool name, traced and
// counted (telemetry) by outcome — except a relay's that it refuses (the
// full path then decides again).
func (h *Host) decide(ctx context.Context, name string, mode gateMode) permissions.Decision {
	if !h.tel.Enabled() {
		return h.policy.Load().DecideFor(name, whoOf(ctx))
	}
	_, span := h.tel.StartDecision(ctx, name)
	d := h.policy.Load().DecideFor(name, whoOf(ctx))
	outcome := d.Behavior.String()
	span.EndDecision(outcome)
	if mode < gateNoPerson || d.Behavior == permissions.Allow {
		h.tel.RecordDecision(ctx, outcome)
	}
	return d
}

// DecisionNote receives the permission decision the call gate applied to
// a call (WithDecisionNote), so that what reports on the call (the
// gateway's audit line) records that decision rather than deciding again,
// possibly otherwise (the rules may be reloaded in between). Its methods
// are safe for concurrent use; a nil *DecisionNote records nothing.
type DecisionNote struct {
	mu       sync.Mutex
	decision permissions.Decision
	approved bool
	decided  bool
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
	return n.decision, n.approved, n.decided
}

func (n *DecisionNote) set(d permissions.Decision, approved bool) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.decision, n.approved, n.decided = d, approved, true
	n.mu.Unlock()
}

type decisionNoteKey struct{}

// WithDecisionNote returns ctx whose tool calls record in n the permission
// decision their gate applies.
func WithDecisionNote(ctx context.Context, n *DecisionNote) context.Context {
	return context.WithValue(ctx, decisionNoteKey{}, n)
}

// decisionNoteOf returns ctx's DecisionNote, or nil.
func decisionNoteOf(ctx context.Context) *DecisionNote {
	n, _ := ctx.Value(decisionNoteKey{}).(*DecisionNote)
	return n
}

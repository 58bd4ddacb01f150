package host

import (
	"context"

	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/telemetry"
)

// What is reported of the hooks and interceptors that ran for a call:
// their records go to the call's DecisionNote (for the gateway's audit
// line: DecisionNote.Checks) and become spans (telemetry.TraceCheck)
// under ctx's span, the tool call's or the request's.

// noteChecks reports recs, checks that ran for ctx's call: on its
// DecisionNote, if it carries one, and as spans with telemetry on. It
// costs nothing for no records.
func (h *Host) noteChecks(ctx context.Context, recs []intercept.Record) {
	if len(recs) == 0 {
		return
	}
	DecisionNoteOf(ctx).addChecks(recs)
	h.traceChecks(ctx, recs)
}

// reportChecks is noteChecks with the call's note n given (nil: none).
func (h *Host) reportChecks(ctx context.Context, n *DecisionNote, recs []intercept.Record) {
	if len(recs) == 0 {
		return
	}
	n.addChecks(recs)
	h.traceChecks(ctx, recs)
}

// traceChecks records one span per record of recs under ctx's span
// (mcphost.check), with telemetry on.
func (h *Host) traceChecks(ctx context.Context, recs []intercept.Record) {
	if !h.tel.Enabled() {
		return
	}
	for i := range recs {
		r := &recs[i]
		h.tel.TraceCheck(ctx, telemetry.CheckSpan{Name: r.Name, Kind: string(r.Kind), Event: r.Event,
			Decision: r.Decision, Start: r.Start, End: r.End})
	}
}

// The fronts a CallInfo names.
const (
	FrontStdio   = "stdio"   // the gateway's stdio front
	FrontHTTP    = "http"    // the gateway's streamable HTTP front
	FrontCLI     = "cli"     // the CLI's call command (mcphost call)
	FrontLibrary = "library" // the library: a caller that set no CallInfo
)

// HasChecks reports whether hooks or interceptors are configured (some
// call may be checked): a front tells them about its calls only then.
func (s *Serving) HasChecks() bool { return s.h.chain() != nil }

// SetChecksForTesting puts c in force as the hooks and interceptors (nil:
// none) until the next reload, which puts the configuration's back. It is
// for tests of what is built on a host (the gateway) with checks the
// configuration cannot express (test checkers); a program configures its
// checks.
func (s *Serving) SetChecksForTesting(c *intercept.Chain) { s.h.checks.Store(c) }

// ToolChecked reports whether a hook or interceptor checks a call of the
// registry tool name by ctx's caller (a nil plan: none does), so that a
// front keeps what only a checked call needs off the calls of every other
// tool.
func (s *Serving) ToolChecked(ctx context.Context, name string) bool {
	c := s.h.chain()
	if c == nil {
		return false
	}
	server, _, ok := registry.ParseName(name)
	return ok && c.ForTool(name, server, principalOf(ctx)) != nil
}

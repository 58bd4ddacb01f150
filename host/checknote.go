package host

import (
	"context"
	"slices"

	"github.com/mcphost/mcphost/host/intercept"
)

// CallInfo is what a front end tells the gate about a call, for hooks and
// interceptors (their input's session, endpoint and front).
type CallInfo struct {
	// Session is the client session in audit.SessionRef form ("" for none).
	Session string
	// Endpoint is the gateway endpoint's name ("" for the default one).
	Endpoint string
	// Front is "stdio" or "http" (gateway fronts); "" means the caller is
	// the CLI or the library.
	Front string
}

type callInfoKey struct{}

// WithCallInfo returns ctx whose calls carry info.
func WithCallInfo(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, info)
}

// CallInfoOf returns the CallInfo ctx carries, and whether it carries one.
func CallInfoOf(ctx context.Context) (CallInfo, bool) {
	info, ok := ctx.Value(callInfoKey{}).(CallInfo)
	return info, ok
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

// chain returns the hooks and interceptors in force (nil: none; a nil
// *intercept.Chain matches nothing).
func (h *Host) chain() *intercept.Chain { return h.checks.Load() }

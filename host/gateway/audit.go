package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// AuditRefusedRequest writes the audit line of a request a front refused
// before any method ran (Options.Audit), with its HTTP status and a fixed
// reason, never the token: for ctx's caller if it was authenticated, from
// remote, on session (the session id the client sent, or ""). It does
// nothing without an audit log.
func (g *Gateway) AuditRefusedRequest(ctx context.Context, status int, reason, remote, session string) {
	if g.audit == nil {
		return
	}
	rec := &audit.Record{Event: audit.EventRefused, Status: status, Reason: reason, Remote: remote}
	switch status {
	case statusUnauthorized:
		rec.Outcome = audit.OutcomeUnauthorized
	case statusForbidden:
		rec.Outcome = audit.OutcomeForbidden
	case statusNotFound:
		rec.Outcome = audit.OutcomeNotFound
	case statusTooManyRequests:
		rec.Outcome = audit.OutcomeRateLimited
	default:
		rec.Outcome = audit.OutcomeError
	}
	if c := host.CallerOf(ctx); c != nil {
		rec.Issuer, rec.Subject = c.Principal.Issuer, c.Principal.Subject
	}
	if session != "" {
		rec.Session = audit.SessionRef(session)
	}
	rec.Endpoint = g.endpoint
	g.audit.Write(rec)
}

// The HTTP statuses AuditRefusedRequest tells apart (RFC 9110), here
// so that the core does not import net/http.
const (
	statusUnauthorized    = 401
	statusForbidden       = 403
	statusNotFound        = 404
	statusTooManyRequests = 429
)

// callAudit is the audit line of one call in progress.
type callAudit struct {
	g     *Gateway
	rec   audit.Record
	start time.Time
	// err is the host's error for the call, which the answer may carry
	// as an error result (noteCallError).
	err error
	// note receives the permission decision the call's gate applies: the
	// line records that one, decided once (a tool call's). It is the note
	// the call's context carries already (the relay's, or the telemetry
	// middleware's: telemetry.go), else own.
	note *host.DecisionNote
	own  host.DecisionNote
	// declined is set when the client answered the gateway's question
	// about the call with no (the gate is not reached); asked is then the
	// decision that asked it, as the call took it (its note's).
	declined bool
	asked    permissions.Decision
}

// with returns ctx carrying a (noteCallError, declinedByClient) and its
// note of the gate's decision; ctx itself for a nil a (no audit log).
func (a *callAudit) with(ctx context.Context) context.Context {
	if a == nil {
		return ctx
	}
	ctx = context.WithValue(ctx, callAuditKey{}, a)
	if a.note = host.DecisionNoteOf(ctx); a.note != nil {
		return ctx // (the call's one decision: the line records it)
	}
	a.note = &a.own
	return host.WithDecisionNote(ctx, a.note)
}

// declinedByClient records, for the audit line of ctx's call, that the
// client declined the gateway's question about it.
func declinedByClient(ctx context.Context) {
	if a, ok := ctx.Value(callAuditKey{}).(*callAudit); ok {
		// The rule recorded is the one that asked the question: the
		// call's decision (taken once: the telemetry label's, or an
		// earlier round's of the same request, else taken here).
		a.declined, a.asked = true, a.g.h.Serving().Decision(ctx, a.rec.Tool)
	}
}

type callAuditKey struct{}

// noteCallError records, for the audit line of ctx's call, the error the
// host's call pipeline returned.
func noteCallError(ctx context.Context, err error) {
	if a, ok := ctx.Value(callAuditKey{}).(*callAudit); ok && err != nil {
		a.err = err
	}
}

// finish writes the line of a call answered with res or err (what
// noteCallError recorded decides the outcome first). The response size is
// that of res encoded.
func (a *callAudit) finish(res *mcp.CallToolResult, err error) {
	if a.err != nil {
		err = a.err
	}
	var te *host.ToolError
	if errors.As(err, &te) {
		err = nil // isError is the tool's answer: the call completed
	}
	n := 0
	if res != nil {
		if b, merr := json.Marshal(res); merr == nil {
			n = len(b)
		}
	}
	a.done(err, n)
}

// sessionID is a session's id, or "" (stdio, stateless).
func sessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return LogSessionID(ss.ID())
}

// auditCall starts the audit line of a call of the registry tool or prompt
// name (for a resource read: its URI) made
// for ctx's caller on session (its id, "" for none); nil without an audit
// log. The decision recorded is the permission rules' for the caller, as
// the call's gate takes it.
func (g *Gateway) auditCall(ctx context.Context, event, name, session, remote string, reqBytes int) *callAudit {
	if g.audit == nil {
		return nil
	}
	a := &callAudit{g: g, start: time.Now()}
	a.rec = audit.Record{Event: event, Tool: name, RequestBytes: reqBytes, Remote: remote}
	var p *inbound.Principal
	if c := host.CallerOf(ctx); c != nil {
		p = c.Principal
		a.rec.Issuer, a.rec.Subject = p.Issuer, p.Subject
	}
	if session != "" {
		a.rec.Session = audit.SessionRef(session)
	}
	if server, _, ok := registry.ParseName(name); ok && event != audit.EventResourceRead {
		a.rec.Server = server
		if event != audit.EventToolCall {
			// A prompt's: the call's one decision (its DecisionNote's),
			// which the host applies. (A tool call's is its gate's: see
			// done.)
			a.rec.Decision, a.rec.Rule = decisionFields(g.h.Serving().Decision(ctx, name))
		}
	}
	return a
}

// decisionFields are the decision and rule of an audit line for d.
func decisionFields(d permissions.Decision) (decision, rule string) {
	if d.Rule != nil {
		return d.Behavior.String(), d.Rule.String()
	}
	return d.Behavior.String(), "default mode " + string(d.Mode)
}

// done writes the line: the outcome of err (ok, denied, cancelled, error)
// and the response's size.
func (a *callAudit) done(err error, respBytes int) {
	if a == nil {
		return
	}
	a.rec.Duration = time.Since(a.start)
	a.rec.ResponseBytes = respBytes
	if a.rec.Event == audit.EventToolCall {
		// The decision the call's gate applied, as it applied it. (A
		// declined retry is not gated; the note may hold the applied
		// decision of the round that asked, in the same request.)
		if d, approved, ok := a.note.Get(); ok && !a.declined {
			a.rec.Decision, a.rec.Rule = decisionFields(d)
			if approved {
				a.rec.Decision, a.rec.Reason = permissions.Allow.String(), "approved by the client"
			}
		} else if a.declined {
			_, a.rec.Rule = decisionFields(a.asked)
			a.rec.Decision, a.rec.Reason = permissions.Deny.String(), "declined by the client"
		} else {
			a.rec.Decision = audit.DecisionNone
		}
	}
	// The hooks and interceptors that ran, with their decisions (never
	// their reasons).
	a.rec.Checks = auditChecks(a.note.Checks())
	var approval *host.ApprovalRequiredError
	switch {
	case err == nil:
		a.rec.Outcome = audit.OutcomeOK
	case errors.As(err, &approval):
		// The gateway asks the client; its answer comes with a retry,
		// which has a line of its own.
		a.rec.Outcome, a.rec.Decision = audit.OutcomeDenied, permissions.Ask.String()
		a.rec.Reason = "approval asked of the client"
	case errors.Is(err, host.ErrDenied), errors.Is(err, intercept.ErrRefused):
		// (Refused by the rules, the client, or a hook or interceptor.)
		a.rec.Outcome = audit.OutcomeDenied
	case errors.Is(err, registry.ErrNotFound):
		// No such tool (a per-user server's, or one gone since it was
		// listed): answered as unknown, and no rule decided.
		a.rec.Outcome, a.rec.Decision, a.rec.Rule = audit.OutcomeNotFound, audit.DecisionUnknown, ""
	case errors.Is(err, context.Canceled):
		a.rec.Outcome = audit.OutcomeCancelled
	default:
		a.rec.Outcome = audit.OutcomeError
	}
	a.rec.Endpoint = a.g.endpoint
	a.g.audit.Write(&a.rec)
}

// maxAuditedName caps, in characters, a tool name a client sent that names
// no tool, as its audit line records it.
const maxAuditedName = 128

// unknownToolMiddleware writes the audit line of a tools/call naming no
// tool the gateway serves, which the go-sdk server answers itself
// (unknownTool), on every path: the relay passes such calls to it. The
// line's decision is "unknown", its outcome not_found, its tool the name
// as sent, sanitized and capped. (A tool hidden from the caller is a
// served tool: Gateway.call writes its line, with the rule that hid it.)
func (g *Gateway) unknownToolMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cr, ok := req.(*mcp.CallToolRequest)
		if !ok || g.audit == nil || cr.Params == nil || g.servesTool(ctx, cr.Params.Name) {
			return next(ctx, method, req)
		}
		if _, retry := g.goneLoginRetry(ctx, cr.Params); retry {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		rec := &audit.Record{Event: audit.EventToolCall, Tool: registry.Cap(cr.Params.Name, maxAuditedName),
			Decision: audit.DecisionUnknown, Outcome: audit.OutcomeNotFound, RequestBytes: len(cr.Params.Arguments)}
		if c := host.CallerOf(ctx); c != nil {
			rec.Issuer, rec.Subject = c.Principal.Issuer, c.Principal.Subject
		}
		if id := sessionID(cr.Session); id != "" {
			rec.Session = audit.SessionRef(id)
		}
		rec.Duration = time.Since(start)
		rec.Endpoint = g.endpoint
		g.audit.Write(rec)
		return res, err
	}
}

// servesTool reports whether name is a tool the go-sdk server has a
// handler for: a served tool, a per-user server's (callerMiddleware), or
// one of tool search's.
func (g *Gateway) servesTool(ctx context.Context, name string) bool {
	if _, ok := g.canonicalTool(name); ok || g.userTool(ctx, name) {
		return true
	}
	return g.search != nil && (name == SearchToolName || name == CallToolName)
}

// reasonDuplicateID is the audit reason of a request refused because a
// request with its id is in flight.
const reasonDuplicateID = "a request with this id is in flight"

// strictReason is the audit reason of a message refused by the strict
// JSON scan (strictError).
func strictReason(err error) string {
	switch {
	case errors.Is(err, rawjson.ErrDuplicate):
		return "strict JSON: duplicate or case-variant member names"
	case errors.Is(err, rawjson.ErrName):
		return "strict JSON: member names must be ASCII, without escapes"
	case errors.Is(err, rawjson.ErrNotObject):
		return "strict JSON: not one JSON object"
	}
	return "strict JSON: parse error"
}

// refusedLine writes the audit line of a message refused on stdio before
// any method ran (the strict JSON scan, an invalid or duplicate id, not
// JSON-RPC): stdio has no HTTP status.
func (g *Gateway) refusedLine(reason string) {
	if g.audit == nil {
		return
	}
	g.audit.Write(&audit.Record{Event: audit.EventRefused, Endpoint: g.endpoint, Outcome: audit.OutcomeError, Reason: reason})
}

// LogSessionID is how logs, audit lines and spans name a session: a
// sealed id is the session's bearer and long, so it is named by a digest.
func LogSessionID(id string) string {
	if len(id) <= 64 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:12])
}

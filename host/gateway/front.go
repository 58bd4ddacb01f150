package gateway

import (
	"context"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// What a front uses. A front serves the gateway to its clients over one
// transport (host/gateway/stdio: one client on a pipe;
// host/gateway/streamable: the MCP endpoint over HTTP). It runs the go-sdk server (Gateway.Server) on its connections
// for everything but the calls it relays, and reaches the rest of the core
// only through what this file exports:
//
//   - the relay path: Relayable says whether a tools/call may take it,
//     StartRelaySpan starts its span, InitRelay and Relay.Start run it (the
//     lifecycle shared by the fronts, relaycall.go), behind the front's
//     RelayFront;
//   - the drain: Enter, Abortable, Aborted, Drain, AbortGrace;
//   - telemetry of what the relay passes on to the go-sdk server: CarrySpan,
//     AbandonSpan, PipeExtra, RequestIDKey;
//   - the audit line of a message refused before any method ran:
//     AuditRefused, with StrictReason and the Reason constants;
//   - a session's log level (SessionLogLevel) and the Requester that asks
//     a session's client (SessionRequester);
//   - for a front whose sessions outlive a request (streamable): what it
//     builds on (Host, Server, Keys, State, Replica, Telemetry), the
//     drain per request (Enter, Abortable, Track, Draining), the audit line of a
//     request refused with an HTTP status (AuditRefusedRequest), the
//     state the core keeps of sessions (SetSessionLogLevel,
//     SubscriptionDenied), listen streams' admission (AdmitListen), and
//     the session fronts' registration (AddSessionFront, fronts.go).
//
// Nothing here imports a front, nor is written for one alone.

// CodeTooManySessions is the JSON-RPC error code of a new session or
// subscription stream refused over a cap (streamable.Options.MaxSessions,
// MaxListenStreams; the implementation-defined server error range).
const CodeTooManySessions = -32000

// MaxMessageBytes caps one message from the downstream client.
const MaxMessageBytes = 4 << 20

// AbortGrace is how long, after the drain deadline cancelled the requests
// still in flight, a front waits for their error answers to be written.
const AbortGrace = abortGrace

// The audit reasons of messages a front refuses before any method ran
// (AuditRefused); see also StrictReason.
const (
	// ReasonInvalidID: the request's id is neither a string nor a number.
	ReasonInvalidID = "invalid request id"
	// ReasonDuplicateID: a request with its id is in flight.
	ReasonDuplicateID = reasonDuplicateID
	// ReasonNotJSONRPC: valid JSON that is not a JSON-RPC 2.0 message.
	ReasonNotJSONRPC = "not a JSON-RPC 2.0 message"
)

// StrictReason is the audit reason of a message wire.Parse refused with
// err.
func StrictReason(err error) string { return strictReason(err) }

// AuditRefused writes the audit line of a message refused for reason
// before any method ran, on a transport without HTTP status (stdio). It
// does nothing without an audit log.
func (g *Gateway) AuditRefused(reason string) { g.refusedLine(reason) }

// Enter registers a request with the drain, for a caller whose context
// already ends at the drain deadline (see Abortable). It returns the
// function to call when the request is answered; ok is false if the
// gateway is draining, and the request must be refused.
func (g *Gateway) Enter() (end func(), ok bool) { return g.enter() }

// Abortable returns a context of parent that is also cancelled when the
// drain deadline passes, and the function that releases it: one for all
// the requests of a connection.
func (g *Gateway) Abortable(parent context.Context) (context.Context, context.CancelFunc) {
	return g.abortable(parent)
}

// Aborted reports whether a request of the connection whose own context
// is parent (not the Abortable one) was cut short at the drain deadline,
// rather than ended by its caller.
func (g *Gateway) Aborted(parent context.Context) bool { return g.aborted(parent) }

// SessionLogLevel is the log level session ss's client set ("": none).
func (g *Gateway) SessionLogLevel(ss *mcp.ServerSession) mcp.LoggingLevel { return g.levels.of(ss) }

// SessionRequester is the Requester of a call made by session ss: what
// the server asks during the call goes to ss's client, as on the go-sdk
// path.
func (g *Gateway) SessionRequester(ss *mcp.ServerSession) conn.Requester {
	return sessionRequester{ss: ss, g: g}
}

// RelayRequest is a tools/call request that may take the relay path (see
// Gateway.Relayable).
type RelayRequest struct {
	ID      []byte // the request's raw id
	Exposed string // the tool's name as the client sent it
	Name    string // the tool's canonical name
	Args    []byte // the raw arguments (nil: none)
	Version string // the client's protocol version
	// Caps are the client's capabilities as the request's _meta names
	// them (nil: it does not).
	Caps []byte
	// Trace are the request's W3C trace context members of _meta
	// (traceparent, tracestate, baggage) as encoded JSON members without
	// braces, or nil: sent upstream as they are when telemetry is off, the
	// parent of the request's span when it is on.
	Trace []byte
	// Task is the task parameter of a 2025-11-25 task-augmented call
	// (nil: none).
	Task []byte
}

// Relayable reports whether the tools/call m may take the relay path:
// nothing about it needs the go-sdk (wire.ToolCall.Plain: params hold just
// name, arguments, protocol-reserved _meta and W3C trace context: no
// progress token, no log level, no multi-round-trip state), its id is a
// string or a number, and its tool is served (resolved once: the result is
// kept in m). The client's protocol version is version unless the
// request's _meta names one.
func (g *Gateway) Relayable(m *wire.Message, version string) (RelayRequest, bool) {
	return g.relayable(m, version)
}

// RelaySpan is the SERVER span of a relayed call (telemetry.go); the zero
// RelaySpan, with telemetry off, does nothing.
type RelaySpan struct{ rs *relaySpan }

// TelemetryEnabled reports whether the gateway traces and measures the
// requests it answers (Options.Telemetry).
func (g *Gateway) TelemetryEnabled() bool { return g.tel.Enabled() }

// StartRelaySpan starts, under ctx, the span of the relayed tools/call m
// with id key (wire.Message.IDKey), at the client's protocol version, in
// session (a log session id, or "") over transport
// (telemetry.TransportPipe, TransportTCP), with the trace context members
// of its _meta (RelayRequest.Trace). With telemetry off it returns ctx and
// the zero RelaySpan.
func (g *Gateway) StartRelaySpan(ctx context.Context, m *wire.Message, key, version, session, transport string, trace []byte) (context.Context, RelaySpan) {
	ctx, rs := g.startRelayMessage(ctx, m, key, version, session, transport, trace)
	return ctx, RelaySpan{rs}
}

// CarrySpan keeps s, the span of a relayed call the raw lane did not
// take, for the go-sdk server, which gets the call next; it returns the
// token that names it there (PipeExtra), or "" for the zero RelaySpan.
func (g *Gateway) CarrySpan(s RelaySpan) string {
	if s.rs == nil {
		return ""
	}
	return g.carries.put(s.rs)
}

// AbandonSpan ends the carried span of token tok, if the go-sdk server
// answered its request without handling it (a refusal before any handler,
// or the connection closed): with err, or an unknown error if err is nil.
func (g *Gateway) AbandonSpan(tok string, err error) { g.abandon([]string{tok}, err) }

// PipeExtra is the RequestExtra a front on a pipe (stdio) attaches to a
// request it hands the go-sdk server, for the gateway's telemetry: the
// request's id key (RequestIDKey), and the token of its carried span
// (CarrySpan; "" if none). With telemetry on, or for a request with a
// carried span (which, with telemetry off, carries the call's decision for
// its hooks and interceptors).
func PipeExtra(key, carry string) *mcp.RequestExtra {
	h := map[string][]string{hdrPipe: pipeMark}
	if len(key) > 1 {
		h[hdrRequestID] = []string{key[1:]}
	}
	if carry != "" {
		h[hdrCarry] = []string{carry}
	}
	return &mcp.RequestExtra{Header: h}
}

// RequestIDKey is rawjson.IDKey (and wire.Message.IDKey) of a decoded id:
// "" if it has none.
func RequestIDKey(id jsonrpc.ID) string { return idKeyOf(id) }

// RelayFront is what a front does for one relayed call (see Relay).
type RelayFront interface {
	// Answer writes msg, the call's JSON-RPC response.
	Answer(msg []byte)
	// Unanswered ends a call its client cancelled or left: no response.
	Unanswered()
	// Pass hands a call the raw lane did not take to the go-sdk server
	// with its span (see CarrySpan), and reports false; or answers it
	// here, reporting true.
	Pass(s RelaySpan) (answered bool)
	// Aborted reports whether the call was cut short at the drain
	// deadline.
	Aborted() bool
	// Cancelled reports whether the call, with context ctx, ended with
	// err because its client cancelled it (or went away).
	Cancelled(ctx context.Context, err error) bool
	// Run runs f apart from the caller, on a worker (for a call that
	// ends apart from its start: RelaySpec.Async).
	Run(f func())
	// Ended runs once the call has ended, however it ended.
	Ended()
}

// RelaySpec is what a relayed call is made of (Gateway.InitRelay).
type RelaySpec struct {
	// Front answers the call.
	Front RelayFront
	// Name is the tool's canonical name (RelayRequest.Name), Args the raw
	// arguments, ClientID the request's id (kept: not modified after).
	Name     string
	Args     []byte
	ClientID []byte
	// Span is the call's span (StartRelaySpan).
	Span RelaySpan
	// Options say for whom the call is made.
	Options host.RelayOptions
	// Async ends the call apart from its start (on the upstream's read
	// loop or Front.Run's worker); else Start waits for it.
	Async bool
}

// Relay is one relayed tools/call, from its upstream call to its answer:
// the lifecycle both fronts share (relaycall.go). A front keeps it in its
// own per-call value (InitRelay), so that a call costs one allocation.
type Relay struct{ c relayCall }

// InitRelay makes r the relayed call spec describes. A relay already
// entered (Enter) stays entered: Start must follow, which leaves the drain
// when the call ends.
func (g *Gateway) InitRelay(r *Relay, spec RelaySpec) {
	entered := r.c.entered
	r.c = relayCall{g: g, front: spec.Front, name: spec.Name, args: spec.Args, clientID: spec.ClientID,
		rs: spec.Span.rs, opts: spec.Options, async: spec.Async, entered: entered}
	r.c.opts.Tasks = (*taskIDs)(g) // (tasks.go: the tasks the call creates are named for its caller)
}

// SetTask sets the task parameter of a 2025-11-25 task-augmented call
// (RelayRequest.Task; nil: none), sent upstream as it is (tasks.go). Call
// it after InitRelay.
func (r *Relay) SetTask(task []byte) { r.c.opts.Task = task }

// Start writes the call's audit line (for session and remote, if known),
// calls the upstream under ctx and ends the call with its answer, then
// runs the front's Ended. answered is false when the call was passed to
// the go-sdk server (known at once only for a call that is not Async).
func (r *Relay) Start(ctx context.Context, session, remote string) (answered bool) {
	return r.c.start(ctx, session, remote)
}

// Enter registers the call with the drain, as Gateway.Enter does, but
// without an end function: the call leaves the drain when it ends, after
// the front's Ended. ok is false if the gateway is draining: the call is
// not registered, and is to be refused (RefuseDraining).
func (r *Relay) Enter() (ok bool) {
	g := r.c.g
	g.drainMu.Lock()
	defer g.drainMu.Unlock()
	if g.draining {
		return false
	}
	g.calls.add()
	r.c.entered = true
	return true
}

// ClientID is the call's request id (RelaySpec.ClientID).
func (r *Relay) ClientID() []byte { return r.c.clientID }

// RefuseDraining answers the call, not started, with the drain's refusal
// (the gateway takes no new requests) and ends its span.
func (r *Relay) RefuseDraining() {
	r.c.g.refuseRelay(r.c.front, r.c.clientID, r.c.rs, errShuttingDown("no new requests are accepted"))
}

// RefuseAborted answers the call with the drain's error for a call cut
// short at its deadline, and ends span s (the span the front was handed in
// Pass).
func (r *Relay) RefuseAborted(s RelaySpan) {
	r.c.g.refuseRelay(r.c.front, r.c.clientID, s.rs, errAborted(r.c.g))
}

// relayable is Relayable.
func (g *Gateway) relayable(m *wire.Message, ver string) (r RelayRequest, ok bool) {
	c, ok := m.Call()
	if !ok || !c.Plain {
		return r, false
	}
	if c.HasProtocolVersion {
		ver = c.ProtocolVersion
	}
	if c.Name == "" || ver == "" {
		return r, false
	}
	if r.Name, ok = g.resolveTool(m, c.Name); !ok {
		return r, false // the go-sdk answers: unknown tool
	}
	r.ID, r.Exposed, r.Args, r.Version, r.Caps, r.Trace, r.Task = m.ID, c.Name, c.Arguments, ver, c.Capabilities, c.Trace, c.Task
	return r, true
}

// resolveTool is the canonical name of the tool a tools/call names
// (exposed), resolved once per message: the result is kept in m.
func (g *Gateway) resolveTool(m *wire.Message, exposed string) (string, bool) {
	if name, resolved := m.Tool(); resolved {
		return name, name != ""
	}
	name, ok := g.canonicalTool(exposed)
	m.SetTool(name)
	return name, ok
}

// RelayedRequester is implemented by the Requester a front gives a call it
// relays (one that asks the caller's client over the call's own stream, or
// not at all): an upstream's log messages during such a call go to no
// session, the client having set no log level through the go-sdk server.
type RelayedRequester interface {
	conn.Requester
	// RelayedCall marks the requester; it does nothing.
	RelayedCall()
}

// What the streamable-HTTP front (host/gateway/streamable) uses besides:
// the gateway's parts it builds on, the drain's per-request registration,
// the audit line of a request it refuses with an HTTP status, the state of
// sessions the core keeps (log levels, subscriptions), and the headers by
// which it passes a request's telemetry to the go-sdk server's middleware.

// Host returns the gateway's host.
func (g *Gateway) Host() *host.Host { return g.h }

// Logger returns the gateway's logger (Options.Logger).
func (g *Gateway) Logger() hclog.Logger { return g.log }

// Keys returns the keys the gateway was given (Options.Keys), from which
// the fronts derive theirs (cluster's purposes).
func (g *Gateway) Keys() *sealbox.Keys { return g.keys }

// State returns the state the gateway shares with its other replicas
// (Options.State).
func (g *Gateway) State() state.Backend { return g.state }

// Replica returns this replica's random id (hex): its forward channel's
// name (cluster.ForwardChannel).
func (g *Gateway) Replica() string { return g.replica }

// Telemetry returns the gateway's telemetry (Options.Telemetry), nil or
// disabled when off.
func (g *Gateway) Telemetry() *telemetry.Telemetry { return g.tel }

// Track counts a request in flight until done is called, draining or not
// (a POST whose messages the go-sdk handler answers: a drain waits for
// the writes of their responses).
func (g *Gateway) Track() (done func()) {
	g.calls.add()
	return g.callDone
}

// Draining reports whether the gateway drains (Drain): it takes no new
// requests.
func (g *Gateway) Draining() bool {
	g.drainMu.Lock()
	defer g.drainMu.Unlock()
	return g.draining
}

// Starting reports whether the servers' first connects still run
// (ConnectAll).
func (g *Gateway) Starting() bool { return g.starting.Load() }

// ServeUsers says the gateway serves users of inbound OAuth from now on
// (as Options.Users): per-user servers leave the lists shared by all. It
// returns once they have left them (a Sync of what is served to all), so
// that no request served after it lists a per-user server's prompts or
// resources to all (and again, for its user, from the user's own
// connection).
func (g *Gateway) ServeUsers() {
	if g.users.Swap(true) {
		return
	}
	for _, p := range g.Sync(g.life) {
		g.log.Warn("registry problem", "server", p.Server, "detail", p.Detail)
	}
}

// ServesUsers reports whether the gateway serves users of inbound OAuth
// (Options.Users, ServeUsers).
func (g *Gateway) ServesUsers() bool { return g.users.Load() }

// SetSessionLogLevel applies level to session ss, as its client's
// logging/setLevel would (a level set through another replica).
func (g *Gateway) SetSessionLogLevel(ss *mcp.ServerSession, level mcp.LoggingLevel) {
	g.levels.set(ss, level, g.srv.Sessions)
}

// SubscriptionDenied reports whether a subscription of p to uri would be
// refused because the permission rules deny its server to p (denied), or
// for another reason (err: no server offers it).
func (g *Gateway) SubscriptionDenied(p *inbound.Principal, uri string) (denied bool, err error) {
	_, denied, err = g.subscribable(p, uri)
	return denied, err
}

// PrincipalIn returns the principal of ctx's caller (host.CallerOf), or
// nil.
func PrincipalIn(ctx context.Context) *inbound.Principal { return principalIn(ctx) }

// HeaderBound reports whether the tool exposed under name takes routing
// headers from its arguments (a 2026-07-28 request's must match).
func (g *Gateway) HeaderBound(name string) bool { return g.headerBound(name) }

// EndSpan ends s, a relayed call's span the relay did not end, with err.
func (g *Gateway) EndSpan(s RelaySpan, err error) {
	if s.rs != nil {
		g.endRelay(s.rs, err)
	}
}

// EndSpanWith ends s with the error type errType (telemetry's error.type).
func (g *Gateway) EndSpanWith(s RelaySpan, errType string) {
	if s.rs != nil {
		g.endRelayWith(s.rs, errType)
	}
}

// The headers by which a front passes a request's telemetry to the go-sdk
// server's middleware (telemetry.go): over HTTP, set in the request's own
// headers (a front strips those a client sent: StripTelemetryHeaders).
//
// HeaderCarry is the token of a relayed call's span the relay did not take
// (CarrySpan); TelemetryRequestID sets the request's id.
const HeaderCarry = hdrCarry

// StripTelemetryHeaders removes the gateway's internal headers from a
// request's headers h: a client does not set them. Before the relay (which may set HeaderCarry).
func StripTelemetryHeaders(h map[string][]string) {
	delete(h, hdrRequestID)
	delete(h, hdrPipe)
	delete(h, hdrCarry)
}

// TelemetryRequestID sets, in the headers h of a request of m (nil for a
// batch) that goes to the go-sdk server, the id of a single request, for
// the telemetry middleware (a relayed call's span has its id already).
// Only with telemetry on.
func TelemetryRequestID(h map[string][]string, m *wire.Message) {
	if m == nil {
		return // (a batch: no one id)
	}
	if key, err := m.IDKey(); err == nil && len(key) > 1 {
		h[hdrRequestID] = []string{key[1:]}
	}
}

// Unsupported is a Requester's answer to what a call's client cannot be
// asked (what, e.g. "elicitation").
func Unsupported(what string) error { return unsupported(what) }

// PrincipalOfToken returns the principal of a verified token's TokenInfo:
// inbound's, or for another verifier one made of its UserID.
func PrincipalOfToken(ti *auth.TokenInfo) *inbound.Principal { return principalOfToken(ti) }

// statelessKey marks the context of a request served without a session.
type statelessKey struct{}

// WithStateless marks ctx, a request's, as served without a session (a
// front's stateless handler: 2026-07-28 requests, or every request under
// serve --http --stateless): the server's own requests during its calls
// cannot be put to the client, so a 2025-11-25 client's call stays on the
// server's first session (host.CallOptions.CannotAsk), as on the relay path.
func WithStateless(ctx context.Context) context.Context {
	return context.WithValue(ctx, statelessKey{}, true)
}

// stateless reports whether ctx was marked by WithStateless.
func stateless(ctx context.Context) bool {
	v, _ := ctx.Value(statelessKey{}).(bool)
	return v
}

package streamable

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// The relay path over HTTP: a POSTed tools/call that qualifies (see
// relayable, relayHTTP) is answered by the gateway itself with a JSON
// response (Content-Type application/json, which a streamable HTTP client
// accepts for any request) — or an event stream when the server asked the
// client something during the call (httpasks.go) — the upstream's raw
// response with the client's id in it, never decoded by the go-sdk server. Everything else goes to the
// go-sdk handler, which also answers whatever a relayed request would be
// refused for (the relay takes only requests that pass its checks).
//
// Sessions (clients of versions before 2026-07-28) are the gateway's own
// (sessions.go): httpSessions holds those this replica serves, closes one
// after the idle timeout with no POST in progress (relayed or not), and
// forgets it when it ends however it ends.

// httpSessions are the sessions one HTTP handler holds (sessions.go).
type httpSessions struct {
	f     *Front
	mu    sync.Mutex
	byID  map[string]*httpSession // by session id
	bySID map[string]*httpSession // by the sid the id seals
	idle  time.Duration
	asked uint64 // requests put to clients by relayed calls (httpasks.go)
	box   *sealbox.Box
	// echoes are the level changes this replica published and waits to
	// receive back (sessions.go, setLevel), by message.
	echoes map[string][]chan struct{}
	// replays numbers the requests replayed into sessions, replaying
	// counts the goroutines replaying them (sessionsubs.go).
	replays   atomic.Uint64
	replaying sync.WaitGroup
	closed    bool // no more replays start (the gateway closes its sessions)
	// limits are what a session is opened or rebuilt under (http.go).
	limits sessionCaps
}

type httpSession struct {
	ss *mcp.ServerSession
	tr *mcp.StreamableServerTransport
	// conn is tr's connection, which writes what the go-sdk server cannot
	// send (tasknotes.go).
	conn mcp.Connection
	// notes holds the notifications waiting to be written on the
	// session's standalone stream (tasknotes.go); closed with the session.
	notes *gateway.NoteQueue
	sid   string // the random id sealed in the session id: its record's key
	// logID names the session in logs, audit lines and spans
	// (gateway.LogSessionID, a digest: computed once).
	logID string
	// owner is the principal that opened the session (its ID; "" without
	// inbound OAuth): only its requests reach the session.
	owner string
	// principal is whom the client's last request here was authenticated
	// as (nil without inbound OAuth): replayed subscriptions are checked
	// against this replica's rules for it.
	principal *inbound.Principal
	closing   bool // closed as idle, or ended by its client: nothing more is relayed on it
	stale     bool // changes published by other replicas may have been missed: read the record again
	// The session's state, wherever its client set it, and what this
	// replica's go-sdk session has applied of it (sessionsubs.go).
	level    mcp.LoggingLevel
	subs     map[string]bool // the resources the client subscribed to, as served
	applied  map[string]bool // ... and those this replica is subscribed to for it
	refused  map[string]bool // ... and those set aside since rechecks last moved: denied here to principal, or refused upstream
	rechecks uint64          // counts the times refused was emptied
	syncing  bool            // a replay goroutine runs for the session
	synced   chan struct{}   // closed when the replay goroutine ends, for those waiting (awaitSync); nil when none waits
	resync   bool            // the state changed while it ran
	outAsks  int             // go-sdk requests to the client awaiting its answer (forward.go)
	caps     []byte          // the client's capabilities, as a 2026-07-28 request's _meta names them, once known
	posts    int             // POSTs in progress
	gets     int             // standalone streams (GET) open
	rebuilt  bool            // rebuilt here from another replica's session: a copy this replica may drop (admitSession)
	used     time.Time       // the last request's start or end
	written  time.Time       // when this replica last wrote the session's record
	timer    *time.Timer     // closes the session once idle; stopped while a POST is in progress
	// calls are the relayed calls in progress, by request id (their
	// cancellation).
	calls map[string]context.CancelFunc
	// asks are the requests relayed calls put to the client, awaiting its
	// answer, by id (httpasks.go).
	asks map[string]chan []byte
	// polls are the writers of the 2025-11-25 tasks/get and tasks/result
	// POSTs in flight here, by the task id their client holds: a status of
	// that task goes on such a POST's stream while this replica holds no
	// standalone stream of the session (tasknotes.go).
	polls map[string][]*relayWriter
	// The ask record's episode and count (forward.go, askTracking); askMu
	// keeps the record's writes in order.
	askMu      sync.Mutex
	askEpisode string
	askCount   int
	// What this replica passed on for the session to the others
	// (forward.go), each at most once: answers to relayed asks, by id;
	// answers to go-sdk asks of the ask record's episode fwdEpisode, by id;
	// cancellations, by request id, within cancelBudget (dropped counts
	// those over it).
	fwdIDs        recentIDs
	fwdEpisode    string
	fwdEpisodeIDs map[string]bool
	cancelsSent   recentIDs
	// The ids of answers to this replica's go-sdk requests of episode
	// awaitEpisode admitted past the rate limit (awaited).
	awaitEpisode   string
	awaitIDs       map[string]bool
	cancelBudget   *rate.Limiter
	cancelsDropped int
}

// newHTTPSessions returns the session table of an HTTP handler: sessions
// closed after idle, opened and rebuilt under limits.
func newHTTPSessions(f *Front, idle time.Duration, limits sessionCaps) *httpSessions {
	s := &httpSessions{f: f, byID: map[string]*httpSession{}, bySID: map[string]*httpSession{}, idle: idle, box: f.box, limits: limits}
	f.tablesMu.Lock()
	f.tables = append(f.tables, s)
	f.tablesMu.Unlock()
	return s
}

// caps returns the capabilities of hs's client (nil before its initialize
// was handled).
func (s *httpSessions) caps(hs *httpSession) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs.caps == nil {
		if ip := hs.ss.InitializeParams(); ip != nil {
			hs.caps = conn.CapabilitiesJSON(ip.Capabilities)
		}
	}
	return hs.caps
}

// end marks hs as closing and cancels its relayed calls in progress (their
// requests to the client, unanswered, end with them).
func (s *httpSessions) end(hs *httpSession) {
	s.mu.Lock()
	hs.closing = true
	cancels := make([]context.CancelFunc, 0, len(hs.calls))
	hs.notes.Close()
	for _, cancel := range hs.calls {
		cancels = append(cancels, cancel)
	}
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

// track records a relayed call of hs with the request id key; the returned
// function forgets it. ok is false, and nothing is recorded, when a relayed
// call of hs with that id is in flight.
func (s *httpSessions) track(hs *httpSession, key string, cancel context.CancelFunc) (forget func(), ok bool) {
	s.mu.Lock()
	if _, dup := hs.calls[key]; dup {
		s.mu.Unlock()
		return nil, false
	}
	hs.calls[key] = cancel
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(hs.calls, key)
		s.mu.Unlock()
	}, true
}

// cancel cancels the relayed call of hs that m, a notifications/cancelled,
// names, if there is one, and reports whether there was.
func (s *httpSessions) cancel(hs *httpSession, m *wire.Message) bool {
	key, ok := m.CancelledKey()
	if !ok {
		return false
	}
	s.mu.Lock()
	cancel := hs.calls[key]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// isLoopback reports whether addr (host, or host:port) is localhost or a
// loopback IP literal, as the go-sdk handler judges Host headers.
func isLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		h = strings.Trim(addr, "[]")
	}
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// rebinding reports whether a request reached a loopback listener under a
// Host that is not localhost (DNS rebinding), which the go-sdk handler
// refuses (403); checked before any request is served, relayed or not.
func rebinding(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return false
	}
	var loopback bool
	if ta, ok := la.(*net.TCPAddr); ok {
		loopback = ta.IP.IsLoopback() // (what isLoopback(la.String()) says, without formatting the address on every request)
	} else {
		loopback = isLoopback(la.String())
	}
	return loopback && !isLoopback(r.Host)
}

// acceptsBoth reports whether the request accepts both a JSON response and
// an event stream, as a streamable HTTP POST must (the go-sdk handler
// answers 400 otherwise).
func acceptsBoth(r *http.Request) bool {
	jsonOK, streamOK := accepts(r)
	return jsonOK && streamOK
}

// accepts reports whether the request's Accept headers take a JSON
// response and an event stream, as the go-sdk handler reads them (media
// types without parameters, case-insensitive, wildcards).
func accepts(r *http.Request) (jsonOK, streamOK bool) {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// errorStatus is the HTTP status of a JSON-RPC error response under
// protocol versions from 2026-07-28 on (SEP-2575, as the go-sdk handler
// sets it): 404 for method not found; 400 for invalid params, an
// unsupported protocol version or a missing client capability; else 200.
func errorStatus(resp []byte) int {
	switch string(wire.ErrorCode(resp)) {
	case "-32601":
		return http.StatusNotFound
	case "-32602", "-32022", "-32021":
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// relayHTTP answers a POSTed tools/call by the relay path and reports true,
// or leaves the request, unanswered, to the go-sdk handler (false). m is
// the POST's message (nil for a batch). hs is the request's session (nil for a request
// that stands alone); stateless says that every request stands alone (serve
// --http --stateless), those of clients before 2026-07-28 too.
func (f *Front) relayHTTP(w http.ResponseWriter, r *http.Request, m *wire.Message, hs *httpSession, sessions *httpSessions, stateless bool) bool {
	if m == nil || !acceptsBoth(r) {
		return false // batches, and what the go-sdk handler refuses
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" || r.Header.Get("Last-Event-ID") != "" {
		return false
	}
	header := r.Header.Get("Mcp-Protocol-Version")
	older := header < conn.NewProtocol
	switch {
	case older && !slices.Contains(mcp.SupportedProtocolVersions(), header):
		return false // (the go-sdk handler refuses it)
	case hs != nil && !older:
		return false // (the go-sdk handler refuses it)
	case hs == nil && older && !stateless:
		return false // a session's request without one: the go-sdk handler answers
	}
	if !m.IsMethod("tools/call") {
		return false
	}
	if hs != nil && (f.gw.SessionLogLevel(hs.ss) != "" || sessions.levelOf(hs) != "") {
		// Its log messages go on the call's stream: the go-sdk path (also
		// while a level set on another replica is being replayed here).
		return false
	}
	rr, ok := f.gw.Relayable(m, "")
	id, name, args, ver, caps := rr.ID, rr.Name, rr.Args, rr.Version, rr.Caps
	switch {
	case !older && (!ok || ver != header || !headersMatch(r, rr.Exposed, f.gw.HeaderBound)):
		// A 2026-07-28 request names its version in _meta too, and its
		// routing headers must match: the go-sdk handler checks them and
		// refuses what does not.
		return false
	case older:
		if ver != "" {
			return false // a version in _meta is 2026-07-28's: the go-sdk handler refuses it
		}
		if rr, ok = f.gw.Relayable(m, header); !ok || rr.Version != header {
			return false
		}
		id, name, args, ver = rr.ID, rr.Name, rr.Args, rr.Version
		caps = []byte("{}") // without a session, the client cannot be asked
		if hs != nil {
			if caps = sessions.caps(hs); caps == nil {
				return false
			}
		}
	}
	if caps == nil {
		return false
	}
	key, err := m.IDKey()
	if err != nil {
		return false
	}
	clientID := bytes.Clone(id)
	hr := &httpRelay{rw: relayWriter{w: w}, r: r, ver: ver, f: f}
	// The request's span, from here to its answer (the core's telemetry);
	// its parent is the trace context of the HTTP headers.
	parent := r.Context()
	session := sessionID(hs)
	if f.gw.TelemetryEnabled() {
		parent = f.gw.Telemetry().ExtractHTTP(parent, r.Header)
	}
	// (With telemetry off it carries the call's decision only, when hooks
	// or interceptors are configured.)
	parent, span := f.gw.StartRelaySpan(parent, m, key, ver, session, telemetry.TransportTCP, rr.Trace)
	// The call's own: what the server sends during it reaches no other
	// client (its log messages are dropped: this client set no log level).
	// A client with a session is asked what a server before 2026-07-28
	// asks during the call, on the call's stream (httpasks.go); one
	// without cannot be asked.
	spec := gateway.RelaySpec{Front: hr, Name: name, Args: args, ClientID: clientID, Span: span,
		Options: host.RelayOptions{ProtocolVersion: ver, Caps: caps, Requester: &quietRequester{}, Trace: rr.Trace}}
	f.gw.InitRelay(&hr.relay, spec)
	end, ok := f.gw.Enter()
	if !ok {
		hr.relay.RefuseDraining()
		return true
	}
	defer end()
	// One context, which the drain deadline and, in a session, the
	// client's cancellation end.
	ctx, cancel := f.gw.Abortable(parent)
	defer cancel()
	if hs != nil {
		forget, ok := sessions.track(hs, key, cancel)
		if !ok {
			f.refused(r, http.StatusBadRequest, gateway.ReasonDuplicateID)
			hr.rw.final(http.StatusBadRequest, wire.DuplicateID(clientID))
			f.gw.EndSpan(span, errDuplicateID)
			return true
		}
		defer forget()
		spec.Options.Requester, spec.Options.Asks = &streamAsker{sessions: sessions, hs: hs, rw: &hr.rw, call: ctx}, true
		f.gw.InitRelay(&hr.relay, spec)
	}
	hr.relay.SetTask(rr.Task)
	return hr.relay.Start(ctx, session, r.RemoteAddr)
}

// sessionID is how logs, audit lines and spans name hs ("" for none).
func sessionID(hs *httpSession) string {
	if hs == nil {
		return ""
	}
	return hs.logID
}

// httpRelay is a call relayed over HTTP: the RelayFront of its relayCall
// (relaycall.go), answered on the POST's response.
type httpRelay struct {
	relay gateway.Relay
	f     *Front
	rw    relayWriter
	r     *http.Request
	ver   string // the client's protocol version
}

// Answer writes msg as the POST's response: under protocol versions from
// 2026-07-28 on, with the HTTP status of its error (errorStatus).
func (hr *httpRelay) Answer(msg []byte) {
	status := http.StatusOK
	if hr.ver >= conn.NewProtocol {
		status = errorStatus(msg)
	}
	hr.rw.final(status, msg)
}

// Unanswered: the client went away, or cancelled the call.
func (hr *httpRelay) Unanswered() { hr.rw.abandon() }

func (hr *httpRelay) Pass(s gateway.RelaySpan) bool {
	if hr.rw.release() {
		// (Cannot be: a call that asked was taken. Its answer was begun,
		// so it is ended here rather than by the go-sdk.)
		hr.rw.final(http.StatusOK, wire.Result(hr.relay.ClientID(), wire.ErrorResult("the relayed call was not completed")))
		hr.f.gw.EndSpanWith(s, telemetry.ErrorTypeToolError)
		return true
	}
	if tok := hr.f.gw.CarrySpan(s); tok != "" {
		// One request: its span goes on in the go-sdk server (see
		// Handler for its end if the go-sdk never takes it).
		hr.r.Header[gateway.HeaderCarry] = []string{tok}
	}
	return false // w is the go-sdk handler's
}

func (hr *httpRelay) Aborted() bool { return hr.f.gw.Aborted(hr.r.Context()) }

func (hr *httpRelay) Cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, context.Canceled)
}

// Run is not used: an HTTP call is not async (the handler waits for it).
func (hr *httpRelay) Run(f func()) { f() }

func (hr *httpRelay) Ended() {}

// errDuplicateID is wire.DuplicateID's error, for the request's span.
var errDuplicateID = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a request with this id is already in flight"}

// headersMatch reports whether a 2026-07-28 tools/call of the tool name
// (as the client sent it) carries exactly the routing headers its body
// implies (SEP-2243: Mcp-Method, Mcp-Name) and no parameter headers, and
// its tool takes none (headerBound): only such a call is relayed. The
// go-sdk handler checks the rest and answers a mismatch with its error.
func headersMatch(r *http.Request, name string, headerBound func(string) bool) bool {
	if r.Header.Get("Mcp-Method") != "tools/call" {
		return false
	}
	if r.Header.Get("Mcp-Name") != name || headerBound(name) {
		return false
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	return true
}

// quietRequester is the Requester of a call relayed over HTTP, answered
// with a JSON response: there is no stream to ask its client on, or to
// send it log messages (its client set no log level, or the call would not
// be relayed). It ties what the server sends during the call to the call,
// so that nothing reaches another client. Each call has its own.
type quietRequester struct{ _ int }

func (*quietRequester) Capabilities() *mcp.ClientCapabilities { return nil }

// RelayedCall marks a relayed call's requester (gateway.RelayedRequester).
func (*quietRequester) RelayedCall() {}
func (*quietRequester) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, gateway.Unsupported("elicitation")
}
func (*quietRequester) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, gateway.Unsupported("sampling")
}
func (*quietRequester) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, gateway.Unsupported("roots")
}

func writeRelayed(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(msg)
}

// The requesters of relayed calls are the core's RelayedRequesters.
var (
	_ gateway.RelayedRequester = (*quietRequester)(nil)
	_ gateway.RelayedRequester = (*streamAsker)(nil)
)

package streamable

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/hclogslog"
)

// DefaultBodyTimeout bounds the reading of one request body, so that a
// client that trickles a body cannot hold a connection (and its goroutine)
// forever.
const DefaultBodyTimeout = 30 * time.Second

// Options configures the gateway's HTTP handler.
type Options struct {
	// Token, if set, is required on every request as "Authorization: Bearer
	// TOKEN". The CLI sets one by default.
	Token string
	// AllowedOrigins lists the Origin values accepted from browsers (exact
	// matches, e.g. "http://localhost:6274"). A request with any other Origin
	// is refused with 403; a request without Origin (a CLI, a program) is not.
	AllowedOrigins []string
	// SessionIdleTimeout ends a session that sent no request for this long.
	// OPTIONAL: defaults to config.DefaultSessionIdleTimeout.
	SessionIdleTimeout time.Duration
	// MaxSessions caps the sessions (of clients before 2026-07-28) this
	// replica holds at once, those it rebuilds from another replica's
	// session ids included; an initialize, or a request that would rebuild
	// a session, over the cap is refused with 503 and a JSON-RPC error. A
	// 2026-07-28 request (no session) takes no slot. OPTIONAL: defaults to
	// config.DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerPrincipal caps one principal's sessions under OAuth,
	// so that one user cannot take every session of MaxSessions.
	// OPTIONAL: defaults to a tenth of MaxSessions (at least 1).
	MaxSessionsPerPrincipal int
	// MaxListenStreams caps the subscriptions/listen streams open at once
	// on this replica (listen.go), apart from MaxSessions; one over the cap
	// is refused with 503 and a JSON-RPC error. OPTIONAL: defaults to
	// MaxSessions.
	MaxListenStreams int
	// MaxListenStreamsPerPrincipal caps one principal's listen streams
	// under OAuth: a new one over it ends the principal's stream quiet the
	// longest. OPTIONAL: defaults to a tenth of MaxListenStreams (at least
	// 1).
	MaxListenStreamsPerPrincipal int
	// BodyTimeout bounds the reading of one request body. OPTIONAL: defaults
	// to DefaultBodyTimeout.
	BodyTimeout time.Duration
	// OAuth makes the handler an OAuth 2.1 resource server (gateway {
	// oauth }); Token is then not used. OPTIONAL.
	OAuth *InboundOAuth
	// RateLimit bounds each principal's requests (gateway { rate_limit }):
	// a request over it is answered 429 with a JSON-RPC error and a retry
	// hint, and nothing is sent upstream. Without OAuth every client is
	// one principal. OPTIONAL.
	//
	// Its counts are shared by the replicas when it comes from a shared
	// state.Backend; if that cannot be reached, requests are admitted (and
	// the error logged) rather than all refused.
	RateLimit state.RateLimiter
	// Stateless serves with no per-session server state (serve --http
	// --stateless): every request stands alone, as 2026-07-28 clients send
	// them. Clients of earlier versions still work, except for what needs a
	// session: requests from the server (elicitation, sampling) during a
	// call, subscriptions and notifications outside a call.
	Stateless bool
}

// sessionLimit admits new sessions while fewer than max are open on this
// replica.
type sessionLimit struct {
	mu        sync.Mutex
	opening   int            // sessions admitted but not yet in a session table
	openingBy map[string]int // ... by principal
}

// sessionCaps are the limits a session is opened or rebuilt under.
type sessionCaps struct {
	max          int // sessions held on this replica (Options.MaxSessions)
	perPrincipal int // by one principal (0: not applied, without inbound OAuth)
}

// tooManySessionsError is a session refused over its caps.
type tooManySessionsError struct {
	limit        int
	perPrincipal bool
}

func (e *tooManySessionsError) Error() string {
	if e.perPrincipal {
		return fmt.Sprintf("too many sessions: one principal may have at most %d open at once; end unused sessions (HTTP DELETE) or wait for idle ones to expire", e.limit)
	}
	return fmt.Sprintf("too many sessions: the gateway serves at most %d at once (settings max_sessions); end unused sessions (HTTP DELETE) or wait for idle ones to expire", e.limit)
}

// refuseSessions answers a request refused by err, a
// *tooManySessionsError: 503 with a JSON-RPC error.
func (f *Front) refuseSessions(w http.ResponseWriter, r *http.Request, err *tooManySessionsError) {
	writeJSONRPCError(w, http.StatusServiceUnavailable, wire.Error(nil, gateway.CodeTooManySessions, err.Error(), nil))
	reason := "too many sessions"
	if err.perPrincipal {
		reason += " for this principal"
	}
	f.refused(r, http.StatusServiceUnavailable, reason)
}

// Handler returns the streamable HTTP handler (mount it at /mcp). In order:
// a present Origin must be the gateway's own or allowlisted (403 otherwise); the bearer token must
// match, or with OAuth be valid and carry the required scopes (401, 403
// insufficient_scope; see InboundOAuth); a session id must be one of the
// request's principal's sessions (404 otherwise, as an unknown one); a
// request over the principal's rate limit is refused (429); a POST body must arrive within BodyTimeout, be at
// most gateway.MaxMessageBytes (413) and pass the strict JSON scan, each element of a
// batch too (400 with a JSON-RPC error: duplicate or case-variant names,
// escaped or non-ASCII names, trailing data); a new or rebuilt session is
// refused over MaxSessions or its principal's share (503), a
// subscriptions/listen request over MaxListenStreams (503; one over its
// principal's share replaces that principal's stream quiet the longest); and the go-sdk handler refuses a non-localhost Host on
// a loopback connection (DNS rebinding, 403). Sessions idle for
// SessionIdleTimeout are closed; a listen stream lasts until its client
// ends or leaves it, or a newer one of its principal's over the share
// replaces it. There is no CORS: no
// Access-Control-Allow-Origin is ever sent.
func (f *Front) Handler(opts *Options) http.Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = config.DefaultSessionIdleTimeout
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = config.DefaultMaxSessions
	}
	if o.MaxSessionsPerPrincipal <= 0 {
		o.MaxSessionsPerPrincipal = max(1, o.MaxSessions/10)
	}
	if o.MaxListenStreams <= 0 {
		o.MaxListenStreams = o.MaxSessions
	}
	if o.MaxListenStreamsPerPrincipal <= 0 {
		o.MaxListenStreamsPerPrincipal = max(1, o.MaxListenStreams/10)
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	getServer := func(*http.Request) *mcp.Server { return f.srv }
	// One endpoint for both protocol eras: a 2026-07-28 request (its
	// Mcp-Protocol-Version header, no session) is served by the go-sdk's
	// stateless handler, as that era's requests stand alone; anything
	// else by the gateway's sessions (sessions.go), unless every request
	// is to be stateless.
	sdkLog := hclogslog.New(f.log.Named("http"))
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true, Logger: sdkLog})
	limits := sessionCaps{max: o.MaxSessions}
	listenPerPrincipal := 0
	if o.OAuth != nil {
		limits.perPrincipal = o.MaxSessionsPerPrincipal
		listenPerPrincipal = o.MaxListenStreamsPerPrincipal
	}
	sessions := newHTTPSessions(f, o.SessionIdleTimeout, limits)
	want := sha256.Sum256([]byte(o.Token))
	var authn *authenticator
	if o.OAuth != nil {
		authn = newAuthenticator(o.OAuth)
		// Served to users of inbound OAuth: per-user servers leave the
		// lists shared by all (gateway.Options.Users).
		f.gw.ServeUsers()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.closed.Load() {
			// (Its sessions are closed, and no longer shared with the
			// other replicas.)
			writeJSONRPCError(w, http.StatusServiceUnavailable, wire.Error(nil, gateway.CodeShuttingDown, "mcphost is shutting down: the gateway's sessions are closed", nil))
			return
		}
		if rebinding(r) {
			// (As the go-sdk handler answers: checked here first, for the
			// relay answers before it.)
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			f.refused(r, http.StatusForbidden, "invalid Host header")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(o.AllowedOrigins, origin) && !sameOrigin(r, origin) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			f.refused(r, http.StatusForbidden, "origin not allowed")
			return
		}
		switch {
		case authn != nil:
			ar, status, reason := authn.check(w, r)
			if ar == nil {
				f.refused(r, status, reason)
				return
			}
			r = ar
		case o.Token != "":
			if reason := checkStaticToken(w, r.Header, want); reason != "" { // (inbound.go)
				f.refused(r, http.StatusUnauthorized, reason)
				return
			}
		}
		owner := sessionOwner(r)
		id := r.Header.Get("Mcp-Session-Id")
		sessionful := !o.Stateless && (id != "" || r.Header.Get("Mcp-Protocol-Version") < conn.NewProtocol)
		var hs *httpSession
		if sessionful && id != "" {
			var endPost func()
			var err error
			ended := false
			if r.Method == http.MethodDelete {
				// Another replica's session is ended without being
				// rebuilt here (and so whatever this replica's caps).
				ended, err = sessions.terminateUnheld(r.Context(), id, owner)
			}
			if !ended && err == nil {
				hs, endPost, err = sessions.lookup(r.Context(), id, owner, r.Method == http.MethodPost)
			}
			var capped *tooManySessionsError
			switch {
			case errors.Is(err, errNoSession):
				// Another principal's session, or none: the same answer.
				errNotOwner(w)
				f.refused(r, http.StatusNotFound, "session not found for this principal")
				return
			case errors.As(err, &capped):
				// Rebuilding another replica's session here would pass
				// this one's caps.
				f.refuseSessions(w, r, capped)
				return
			case err != nil:
				f.log.Error("looking up a session", "error", err)
				http.Error(w, "the gateway's shared state is unavailable; retry later", http.StatusServiceUnavailable)
				f.refused(r, http.StatusServiceUnavailable, "shared state unavailable")
				return
			case ended:
				w.WriteHeader(http.StatusNoContent)
				return
			}
			defer endPost()
		}
		if r.Method != http.MethodPost {
			switch {
			case !sessionful:
				stateless.ServeHTTP(w, r)
			case hs != nil:
				sessions.serveSession(w, r, hs)
			case r.Method == http.MethodGet || r.Method == http.MethodDelete:
				f.refused(r, http.StatusBadRequest, "no session id")
				http.Error(w, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
			default:
				f.refused(r, http.StatusMethodNotAllowed, "method not allowed")
				w.Header().Set("Allow", "GET, POST, DELETE")
				http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			}
			return
		}
		raw, status, err := readBody(w, r, o.BodyTimeout)
		if status != 0 {
			f.refused(r, status, bodyReason(err))
			return
		}
		// The body is parsed here, once, and held to the strict rules
		// (each element of a batch too); every later step reads body.
		var body wire.Body
		if err := wire.ParseBody(&body, raw); err != nil {
			f.refused(r, http.StatusBadRequest, gateway.StrictReason(err))
			writeJSONRPCError(w, http.StatusBadRequest, wire.StrictError(err))
			return
		}
		one := body.One() // (nil for a batch)
		// (Always: the relay carries a call's decision in them when hooks or
		// interceptors are configured, telemetry or not.)
		gateway.StripTelemetryHeaders(r.Header) // (telemetry.go)
		if o.RateLimit != nil {
			release, ok := f.admitRate(w, r, o.RateLimit, owner, &body, func() bool {
				return hs != nil && one != nil && sessions.awaited(r.Context(), hs, one) // (forward.go)
			})
			if !ok {
				return
			}
			defer release()
		}
		// A subscriptions/listen stream lasts until its client ends it: it
		// takes a slot of the listen caps, not of max_sessions (listen.go).
		r, releaseListen, ok := f.admitListen(w, r, owner, &body, o.MaxListenStreams, listenPerPrincipal)
		if !ok {
			return
		}
		defer releaseListen()
		r.Body = io.NopCloser(bytes.NewReader(raw))
		// Counted until the handler returns: a streamable POST returns once
		// its responses are written, so a drain waits for those writes.
		defer f.gw.Track()()
		if (hs != nil || !sessionful) && one != nil && gateway.IsTasksRequest(one) {
			f.serveTasks(w, r, one, hs, sessions) // (tasks.go: no method of the go-sdk's)
			return
		}
		if hs != nil && one != nil {
			local := sessions.cancel(hs, one)                   // a relayed call's cancellation
			sessions.forwardCancel(r.Context(), hs, one, local) // (forward.go)
			if sessions.answer(hs, one) || sessions.forwardAnswer(r.Context(), hs, one) {
				w.WriteHeader(http.StatusAccepted) // (httpasks.go, forward.go)
				return
			}
		}
		if f.extensionHTTP(w, r, one, hs) {
			return // (extensions.go)
		}
		if (hs != nil || !sessionful) && f.relayHTTP(w, r, one, hs, sessions, o.Stateless) {
			return // (httprelay.go)
		}
		if one != nil && one.IsMethod("tools/call") {
			if carried, ok := gateway.CarryTask(one, raw); ok {
				// Its task parameter in _meta, for the go-sdk path.
				r.Body = io.NopCloser(bytes.NewReader(carried))
				r.ContentLength = int64(len(carried))
			}
		}
		if f.gw.TelemetryEnabled() {
			gateway.TelemetryRequestID(r.Header, one) // (telemetry.go)
		}
		if tok := r.Header[gateway.HeaderCarry]; len(tok) == 1 {
			// The span (or decision) the relay passed on, should the go-sdk
			// handler answer without the middleware taking it.
			defer func() { f.gw.AbandonSpan(tok[0], r.Context().Err()) }()
		}
		switch {
		case !sessionful:
			// (Its calls' servers cannot ask the client: CannotAsk.)
			stateless.ServeHTTP(w, r.WithContext(gateway.WithStateless(r.Context())))
			return
		case hs != nil:
			sessions.serveSession(w, r, hs)
			return
		}
		// Any POST without a session id may open a session (however its
		// method is spelled), so each one is admitted against the caps.
		opened, err := f.admitSession(owner, sessions.limits)
		var capped *tooManySessionsError
		if errors.As(err, &capped) {
			f.refuseSessions(w, r, capped)
			return
		}
		nhs, endPost, err := sessions.open(r.Context(), one, owner)
		opened()
		if err != nil {
			f.log.Error("opening a session", "error", err)
			writeJSONRPCError(w, http.StatusServiceUnavailable, wire.Error(nil, jsonrpc.CodeInternalError, "the session could not be opened: the gateway's shared state is unavailable; retry later", nil))
			f.refused(r, http.StatusServiceUnavailable, "session could not be opened")
			return
		}
		defer endPost()
		sessions.serveSession(w, r, nhs)
		if nhs.ss.InitializeParams() == nil {
			// Not initialized (not an initialize, or a failed one): as the
			// go-sdk handler, the session ends with its request.
			sessions.drop(nhs)
			sessions.f.state.Delete(context.WithoutCancel(r.Context()), cluster.SessionKey(nhs.sid))
		}
	})
}

// sameOrigin reports whether origin is the gateway's own origin as the
// request reached it: the scheme of the connection and the Host the client
// addressed. The go-sdk handler still refuses, on a loopback connection, a
// Host that is not localhost (DNS rebinding), so a page of another site
// renamed to resolve here gains nothing.
func sameOrigin(r *http.Request, origin string) bool {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return r.Host != "" && strings.EqualFold(origin, scheme+r.Host)
}

// readBody reads a POST body within timeout and gateway.MaxMessageBytes, then clears
// the read deadline again: net/http would take its expiry while a response
// streams as the client going away. A body that cannot be read is answered
// here, with the status returned (0: read) and the reading's error.
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(timeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, gateway.MaxMessageBytes))
	if err != nil {
		// The deadline stays: after the handler, net/http would otherwise
		// wait for the rest of the body before answering.
		w.Header().Set("Connection", "close")
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("the request body exceeds %d bytes", gateway.MaxMessageBytes), http.StatusRequestEntityTooLarge)
			return nil, http.StatusRequestEntityTooLarge, err
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return nil, http.StatusBadRequest, err
	}
	rc.SetReadDeadline(time.Time{})
	return body, 0, nil
}

func writeJSONRPCError(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// admitSession admits a session of owner to open (or be rebuilt) under
// caps, counting the sessions this replica's tables hold (a 2026-07-28
// request's go-sdk session, or a listen stream's, is none of them) and
// those being opened; or returns a *tooManySessionsError. Over a cap, the
// least recently used copy of another replica's session held here (of
// owner, for owner's share) with nothing in progress is dropped first:
// its record is in the shared state, so it is rebuilt at its next
// request, and a client whose requests go to every replica in turn does
// not fill them all with copies. opened ends the admission, once the
// session is in its table (or failed to open).
func (f *Front) admitSession(owner string, caps sessionCaps) (opened func(), err error) {
	var dropped []*httpSession
	defer func() {
		for _, hs := range dropped {
			hs.ss.Close() // (outside the locks)
		}
	}()
	f.sessions.mu.Lock()
	defer f.sessions.mu.Unlock()
	for {
		total, mine := f.heldSessions(owner)
		total += f.sessions.opening
		mine += f.sessions.openingBy[owner]
		var capped *tooManySessionsError
		switch {
		case caps.perPrincipal > 0 && mine >= caps.perPrincipal:
			capped = &tooManySessionsError{limit: caps.perPrincipal, perPrincipal: true}
		case total >= caps.max:
			capped = &tooManySessionsError{limit: caps.max}
		}
		if capped == nil {
			break
		}
		hs := f.evict(owner, !capped.perPrincipal)
		if hs == nil {
			return nil, capped
		}
		dropped = append(dropped, hs)
	}
	if f.sessions.openingBy == nil {
		f.sessions.openingBy = map[string]int{}
	}
	f.sessions.opening++
	f.sessions.openingBy[owner]++
	var once sync.Once
	return func() {
		once.Do(func() {
			f.sessions.mu.Lock()
			defer f.sessions.mu.Unlock()
			f.sessions.opening--
			if f.sessions.openingBy[owner]--; f.sessions.openingBy[owner] <= 0 {
				delete(f.sessions.openingBy, owner)
			}
		})
	}, nil
}

// evict drops the least recently used copy of another replica's session
// the HTTP handlers' tables hold with nothing in progress, of owner or of
// anyone when all (httpSession.evictable), and returns it; nil when
// there is none.
func (f *Front) evict(owner string, all bool) *httpSession {
	f.tablesMu.Lock()
	defer f.tablesMu.Unlock()
	var lru *httpSession
	var from *httpSessions
	for _, s := range f.tables {
		s.mu.Lock()
		for _, hs := range s.byID {
			if hs.evictable() && (all || hs.owner == owner) && (lru == nil || hs.used.Before(lru.used)) {
				lru, from = hs, s
			}
		}
		s.mu.Unlock()
	}
	if lru == nil {
		return nil
	}
	from.mu.Lock()
	defer from.mu.Unlock()
	return from.evictLocked(lru)
}

// heldSessions counts the sessions the HTTP handlers' tables hold (not
// closing), and those of owner.
func (f *Front) heldSessions(owner string) (total, mine int) {
	f.tablesMu.Lock()
	defer f.tablesMu.Unlock()
	for _, s := range f.tables {
		s.mu.Lock()
		for _, hs := range s.byID {
			if hs.closing {
				continue
			}
			total++
			if hs.owner == owner {
				mine++
			}
		}
		s.mu.Unlock()
	}
	return total, mine
}

// bodyReason is the audit reason of a POST whose body could not be read
// for err (readBody): too large, not in time, or cut short (the client
// went away, a body shorter than its Content-Length).
func bodyReason(err error) string {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return "request body too large"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "request body not read in time"
	}
	return "request body could not be read"
}

// refused writes the audit line of r, refused before any method ran with
// status for reason (gateway.AuditRefusedRequest).
func (f *Front) refused(r *http.Request, status int, reason string) {
	f.gw.AuditRefusedRequest(r.Context(), status, reason, r.RemoteAddr, r.Header.Get("Mcp-Session-Id"))
}

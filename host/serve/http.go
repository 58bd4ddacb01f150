package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/hclogslog"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// CodeTooManySessions is the JSON-RPC error code of a new session refused
// over HTTPOptions.MaxSessions (the implementation-defined server error
// range).
const CodeTooManySessions = -32000

// DefaultBodyTimeout bounds the reading of one request body, so that a
// client that trickles a body cannot hold a connection (and its goroutine)
// forever.
const DefaultBodyTimeout = 30 * time.Second

// HTTPOptions configures the gateway's HTTP handler.
type HTTPOptions struct {
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
	// MaxSessions caps the sessions open at once; an initialize over the cap
	// is refused with 503 and a JSON-RPC error. OPTIONAL: defaults to
	// config.DefaultMaxSessions.
	MaxSessions int
	// MaxSessionsPerPrincipal caps one principal's sessions under OAuth,
	// so that one user cannot take every session of MaxSessions.
	// OPTIONAL: defaults to a tenth of MaxSessions (at least 1).
	MaxSessionsPerPrincipal int
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
	mu      sync.Mutex
	opening int // initialize requests admitted but not yet answered
}

// Handler returns the streamable HTTP handler (mount it at /mcp). In order:
// a present Origin must be the gateway's own or allowlisted (403 otherwise); the bearer token must
// match, or with OAuth be valid and carry the required scopes (401, 403
// insufficient_scope; see InboundOAuth); a session id must be one of the
// request's principal's sessions (404 otherwise, as an unknown one); a
// request over the principal's rate limit is refused (429); a POST body must arrive within BodyTimeout, be at
// most MaxMessageBytes (413) and pass the strict JSON scan, each element of a
// batch too (400 with a JSON-RPC error: duplicate or case-variant names,
// escaped or non-ASCII names, trailing data); a new session is refused over
// MaxSessions (503); and the go-sdk handler refuses a non-localhost Host on
// a loopback connection (DNS rebinding, 403). Sessions idle for
// SessionIdleTimeout are closed. There is no CORS: no
// Access-Control-Allow-Origin is ever sent.
func (g *Gateway) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
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
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	getServer := func(*http.Request) *mcp.Server { return g.srv }
	// One endpoint for both protocol eras: a 2026-07-28 request (its
	// Mcp-Protocol-Version header, no session) is served by the go-sdk's
	// stateless handler, as that era's requests stand alone; anything
	// else by the gateway's sessions (sessions.go), unless every request
	// is to be stateless.
	sdkLog := hclogslog.New(g.log.Named("http"))
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true, Logger: sdkLog})
	sessions := newHTTPSessions(g, o.SessionIdleTimeout)
	want := []byte("Bearer " + o.Token)
	var authn *authenticator
	if o.OAuth != nil {
		authn = newAuthenticator(o.OAuth)
		if !g.users.Swap(true) {
			// Served to users of inbound OAuth: per-user servers leave
			// the lists shared by all (Options.Users).
			select {
			case g.changed <- struct{}{}:
			default:
			}
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rebinding(r) {
			// (As the go-sdk handler answers: checked here first, for the
			// relay answers before it.)
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			g.refused(r, http.StatusForbidden, "invalid Host header")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(o.AllowedOrigins, origin) && !sameOrigin(r, origin) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			g.refused(r, http.StatusForbidden, "origin not allowed")
			return
		}
		switch {
		case authn != nil:
			ar, status, reason := authn.check(w, r)
			if ar == nil {
				g.refused(r, status, reason)
				return
			}
			r = ar
		case o.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1:
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcphost"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			g.refused(r, http.StatusUnauthorized, "no valid token")
			return
		}
		owner := sessionOwner(r)
		id := r.Header.Get("Mcp-Session-Id")
		sessionful := !o.Stateless && (id != "" || r.Header.Get("Mcp-Protocol-Version") < conn.NewProtocol)
		var hs *httpSession
		if sessionful && id != "" {
			var endPost func()
			var err error
			hs, endPost, err = sessions.lookup(r.Context(), id, owner, r.Method == http.MethodPost)
			switch {
			case errors.Is(err, errNoSession):
				// Another principal's session, or none: the same answer.
				errNotOwner(w)
				g.refused(r, http.StatusNotFound, "session not found for this principal")
				return
			case err != nil:
				g.log.Error("looking up a session", "error", err)
				http.Error(w, "the gateway's shared state is unavailable; retry later", http.StatusServiceUnavailable)
				g.refused(r, http.StatusServiceUnavailable, "shared state unavailable")
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
				g.refused(r, http.StatusBadRequest, "no session id")
				http.Error(w, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
			default:
				g.refused(r, http.StatusMethodNotAllowed, "method not allowed")
				w.Header().Set("Allow", "GET, POST, DELETE")
				http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			}
			return
		}
		body, status, err := readBody(w, r, o.BodyTimeout)
		if status != 0 {
			g.refused(r, status, bodyReason(err))
			return
		}
		if err := scanBody(body); err != nil {
			g.refused(r, http.StatusBadRequest, strictReason(err))
			writeJSONRPCError(w, http.StatusBadRequest, strictError(err))
			return
		}
		if g.tel.Enabled() {
			telemetryHeaders(r.Header, body) // (telemetry.go)
		}
		if o.RateLimit != nil {
			release, ok := g.admitRate(w, r, o.RateLimit, owner, body)
			if !ok {
				return
			}
			defer release()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// Counted until the handler returns: a streamable POST returns once
		// its responses are written, so a drain waits for those writes.
		g.calls.add()
		defer g.calls.done()
		if hs != nil {
			sessions.cancel(hs, body)                     // a relayed call's cancellation
			sessions.forwardCancel(r.Context(), hs, body) // (forward.go)
			if sessions.answer(hs, body) || sessions.forwardAnswer(r.Context(), hs, body) {
				w.WriteHeader(http.StatusAccepted) // (httpasks.go, forward.go)
				return
			}
		}
		if (hs != nil || !sessionful) && g.relayHTTP(w, r, body, hs, sessions, o.Stateless) {
			return // (httprelay.go)
		}
		if g.tel.Enabled() {
			if tok := r.Header[hdrCarry]; len(tok) == 1 {
				// The span the relay passed on, should the go-sdk handler
				// answer without the middleware taking it.
				defer func() { g.abandon(tok, r.Context().Err()) }()
			}
		}
		switch {
		case !sessionful:
			stateless.ServeHTTP(w, r)
			return
		case hs != nil:
			sessions.serveSession(w, r, hs)
			return
		}
		// Any POST without a session id may open a session (however its
		// method is spelled), so each one is admitted against the cap.
		if authn != nil && sessions.owned(owner) >= o.MaxSessionsPerPrincipal {
			writeJSONRPCError(w, http.StatusServiceUnavailable, []byte(fmt.Sprintf(
				`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"too many sessions: one principal may have at most %d open at once; end unused sessions (HTTP DELETE) or wait for idle ones to expire"}}`,
				CodeTooManySessions, o.MaxSessionsPerPrincipal)))
			g.refused(r, http.StatusServiceUnavailable, "too many sessions for this principal")
			return
		}
		if !g.admitSession(o.MaxSessions) {
			writeJSONRPCError(w, http.StatusServiceUnavailable, []byte(fmt.Sprintf(
				`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"too many sessions: the gateway serves at most %d at once (settings max_sessions); end unused sessions (HTTP DELETE) or wait for idle ones to expire"}}`,
				CodeTooManySessions, o.MaxSessions)))
			g.refused(r, http.StatusServiceUnavailable, "too many sessions")
			return
		}
		nhs, endPost, err := sessions.open(r.Context(), body, owner)
		g.sessionOpened()
		if err != nil {
			g.log.Error("opening a session", "error", err)
			writeJSONRPCError(w, http.StatusServiceUnavailable, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the session could not be opened: the gateway's shared state is unavailable; retry later"}}`))
			g.refused(r, http.StatusServiceUnavailable, "session could not be opened")
			return
		}
		defer endPost()
		sessions.serveSession(w, r, nhs)
		if nhs.ss.InitializeParams() == nil {
			// Not initialized (not an initialize, or a failed one): as the
			// go-sdk handler, the session ends with its request.
			sessions.drop(nhs)
			sessions.g.state.Delete(context.WithoutCancel(r.Context()), recordKey(nhs.sid))
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

// readBody reads a POST body within timeout and MaxMessageBytes, then clears
// the read deadline again: net/http would take its expiry while a response
// streams as the client going away. A body that cannot be read is answered
// here, with the status returned (0: read) and the reading's error.
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(timeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageBytes))
	if err != nil {
		// The deadline stays: after the handler, net/http would otherwise
		// wait for the rest of the body before answering.
		w.Header().Set("Connection", "close")
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("the request body exceeds %d bytes", MaxMessageBytes), http.StatusRequestEntityTooLarge)
			return nil, http.StatusRequestEntityTooLarge, err
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return nil, http.StatusBadRequest, err
	}
	rc.SetReadDeadline(time.Time{})
	return body, 0, nil
}

// scanBody holds a POST body to the strict JSON rules: one message, or a
// batch whose every element is one.
func scanBody(body []byte) error {
	var arr, parr [8]rawjson.Member
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		_, _, err := rawjson.Message(arr[:0], parr[:0], body)
		return err
	}
	elems, err := rawjson.Elements(nil, trimmed)
	if err != nil {
		return err
	}
	for _, e := range elems {
		if _, _, err := rawjson.Message(arr[:0], parr[:0], e); err != nil {
			return err
		}
	}
	return nil
}

func writeJSONRPCError(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// admitSession reports whether a new session may open under max, counting
// the open sessions and the initializations in progress.
func (g *Gateway) admitSession(max int) bool {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	n := g.sessions.opening
	for range g.srv.Sessions() {
		n++
	}
	if n >= max {
		return false
	}
	g.sessions.opening++
	return true
}

func (g *Gateway) sessionOpened() {
	g.sessions.mu.Lock()
	g.sessions.opening--
	g.sessions.mu.Unlock()
}

package streamable

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/inbound"
)

// InboundOAuth makes the gateway's HTTP handler an OAuth 2.1 resource
// server (gateway { oauth { … } }): every request needs a bearer token
// that Verify accepts and that carries Scopes; a session belongs to the
// principal that opened it; what a principal may see and call follows the
// permission rules for it.
type InboundOAuth struct {
	// Verify checks a bearer token (an inbound.Verifier's Verify). An
	// error wrapping auth.ErrInvalidToken is a bad token (401); one
	// wrapping inbound.ErrUnavailable an authorization server that cannot
	// be asked now (503).
	Verify auth.TokenVerifier
	// Resource is the gateway's canonical URL (gateway { url }): the
	// resource of its protected resource metadata.
	Resource string
	// AuthorizationServers are the issuers clients get tokens from.
	AuthorizationServers []string
	// Scopes are required on every request (403 insufficient_scope).
	Scopes []string
}

// wellKnownPRM is the RFC 9728 metadata path.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// MetadataPaths returns the paths the protected resource metadata is
// served at: the path-suffixed form for the resource's path (RFC 9728
// §3.1, /.well-known/oauth-protected-resource/mcp) and the root form.
func (o *InboundOAuth) MetadataPaths() []string {
	paths := []string{wellKnownPRM}
	if u, err := url.Parse(o.Resource); err == nil && strings.Trim(u.Path, "/") != "" {
		paths = append([]string{wellKnownPRM + "/" + strings.Trim(u.Path, "/")}, paths...)
	}
	return paths
}

// MetadataURL is the absolute URL of the metadata, as 401 answers name it
// (WWW-Authenticate: Bearer resource_metadata=…).
func (o *InboundOAuth) MetadataURL() string {
	u, err := url.Parse(o.Resource)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: o.MetadataPaths()[0]}).String()
}

// MetadataHandler serves the protected resource metadata (the go-sdk's
// handler: GET, and CORS for browser clients, as the metadata is public).
func (o *InboundOAuth) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               o.Resource,
		AuthorizationServers:   o.AuthorizationServers,
		ScopesSupported:        o.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcphost gateway",
	})
}

// authenticator checks inbound tokens with the go-sdk's bearer middleware
// (auth.RequireBearerToken), adding what that leaves out: the RFC 6750
// error codes in WWW-Authenticate (invalid_token, insufficient_scope), 503
// for an authorization server that cannot be asked, and the refusal for the
// audit log.
type authenticator struct {
	o *InboundOAuth
	h http.Handler // the middleware before passThrough
}

func newAuthenticator(o *InboundOAuth) *authenticator {
	mw := auth.RequireBearerToken(func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		ti, err := o.Verify(ctx, token, r)
		if st, ok := ctx.Value(authStateKey{}).(*authState); ok {
			st.token = token
			st.unavailable = err != nil && errors.Is(err, inbound.ErrUnavailable)
			if errors.Is(err, auth.ErrInvalidToken) {
				st.invalid = err
			}
		}
		return ti, err
	}, &auth.RequireBearerTokenOptions{ResourceMetadataURL: o.MetadataURL(), Scopes: o.Scopes, ClockSkew: inbound.DefaultLeeway})
	return &authenticator{o: o, h: mw(passThrough)}
}

type authStateKey struct{}

// authState is one request's passage through the bearer middleware.
type authState struct {
	r           *http.Request // the request as passed on (with its TokenInfo), or nil
	token       string        // the bearer token the middleware read
	unavailable bool
	// invalid is the verifier's refusal of the token: a fixed class of
	// failure ("bad signature: invalid token"), which never quotes the
	// token, for the audit log.
	invalid error
}

var passThrough = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
	r.Context().Value(authStateKey{}).(*authState).r = r
})

// check authenticates r. It returns r with the token's TokenInfo and the
// caller (host.WithCaller) in its context, or nil after answering the
// refusal (status and reason for the audit log).
func (a *authenticator) check(w http.ResponseWriter, r *http.Request) (_ *http.Request, status int, reason string) {
	st := &authState{}
	cw := &challengeWriter{ResponseWriter: w, st: st, token: r.Header.Get("Authorization") != ""}
	a.h.ServeHTTP(cw, r.WithContext(context.WithValue(r.Context(), authStateKey{}, st)))
	if st.r == nil {
		return nil, cw.status, cw.reason
	}
	p := gateway.PrincipalOfToken(auth.TokenInfoFromContext(st.r.Context()))
	return st.r.WithContext(host.WithCaller(st.r.Context(), p, st.token)), 0, ""
}

// challengeWriter completes the bearer middleware's refusals.
type challengeWriter struct {
	http.ResponseWriter
	st     *authState
	token  bool // the request had an Authorization header
	status int
	reason string
	// replaced: the middleware's body is not sent (WriteHeader wrote
	// another).
	replaced bool
}

func (w *challengeWriter) WriteHeader(code int) {
	w.status = code
	h := w.Header()
	switch code {
	case http.StatusUnauthorized:
		w.reason = "no token"
		if w.token {
			w.reason = "invalid token"
			if w.st.invalid != nil {
				w.reason = w.st.invalid.Error()
			}
			addChallengeParam(h, `error="invalid_token"`)
		}
	case http.StatusForbidden:
		w.reason = "insufficient scope"
		addChallengeParam(h, `error="insufficient_scope"`)
	case http.StatusInternalServerError:
		// The verifier's error may name the authorization server's
		// address: the client is told only that it cannot be asked.
		w.reason, w.replaced = "token verification failed", true
		if w.st.unavailable {
			code, w.status, w.reason = http.StatusServiceUnavailable, http.StatusServiceUnavailable, "authorization server unavailable"
			h.Set("Retry-After", "5")
		}
		w.ResponseWriter.WriteHeader(code)
		w.ResponseWriter.Write([]byte("the token cannot be verified now; try again later\n"))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *challengeWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// addChallengeParam adds an auth-param to the Bearer challenge the
// middleware set (or sets one).
func addChallengeParam(h http.Header, param string) {
	if c := h.Get("WWW-Authenticate"); strings.HasPrefix(c, "Bearer ") {
		h.Set("WWW-Authenticate", "Bearer "+param+", "+strings.TrimPrefix(c, "Bearer "))
		return
	}
	h.Set("WWW-Authenticate", "Bearer "+param)
}

// Answers to a request refused by the static token (Options.Token).
// Each says what to do: MCP clients show a 401's body to the user.
const (
	msgTokenRequired = "a bearer token is required: send Authorization: Bearer <token> (mcphost serve printed it, or $MCPHOST_SERVE_TOKEN)"
	msgTokenInvalid  = "the bearer token is not valid: send the token mcphost serve printed, or the one in $MCPHOST_SERVE_TOKEN"
	msgNotBearer     = "the Authorization header is not a bearer token: send Authorization: Bearer <token> (mcphost serve printed it, or $MCPHOST_SERVE_TOKEN)"
	msgManyHeaders   = "more than one Authorization header: send one, Authorization: Bearer <token>"
)

// checkStaticToken checks a request's Authorization header against the
// static token whose SHA-256 is want. It returns "" when the header is
// "Bearer TOKEN" (the scheme in any case, RFC 7235 §2.1); otherwise it
// answers 401 with what is wrong and returns the reason for the audit log.
// The comparison takes the same time whatever the presented token (its
// hash is compared, in constant time); nothing of it is quoted.
//
// The challenge is a plain Bearer one, realm="mcphost" (RFC 7235 §4.1: a 401
// carries one), with error="invalid_token" for a wrong token (RFC 6750
// §3.1), and no resource_metadata: there is no OAuth to discover. Clients
// with an OAuth provider (the TypeScript SDK's transports) start discovery
// on any 401 whatever its challenge; NoOAuthHandler answers them.
func checkStaticToken(w http.ResponseWriter, h http.Header, want [sha256.Size]byte) (reason string) {
	vals := h.Values("Authorization")
	challenge := `Bearer realm="mcphost"`
	var msg string
	switch {
	case len(vals) == 0 || strings.TrimSpace(vals[0]) == "":
		msg, reason = msgTokenRequired, "no token"
	case len(vals) > 1:
		msg, reason = msgManyHeaders, "several Authorization headers"
	default:
		scheme, token, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
		token = strings.TrimSpace(token)
		switch {
		case !strings.EqualFold(scheme, "bearer"):
			msg, reason = msgNotBearer, "not a bearer token"
		case token == "":
			msg, reason = msgTokenRequired, "no token"
		default:
			got := sha256.Sum256([]byte(token))
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				return ""
			}
			msg, reason = msgTokenInvalid, "invalid token"
			challenge += `, error="invalid_token", error_description="the bearer token is not valid"`
		}
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, msg, http.StatusUnauthorized)
	return reason
}

// NoOAuthPaths returns the OAuth discovery and registration paths (as
// http.ServeMux patterns) a client may try on a gateway that uses the
// static token (see NoOAuthHandler): RFC 9728 and RFC 8414 metadata,
// OpenID discovery (also path-suffixed), and the endpoints the TypeScript
// SDK falls back to without metadata.
func NoOAuthPaths() []string {
	return []string{
		wellKnownPRM, wellKnownPRM + "/",
		"/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/",
		"/.well-known/openid-configuration", "/.well-known/openid-configuration/",
		"/register", "/authorize", "/token",
	}
}

// NoOAuthHandler answers OAuth discovery and registration on a gateway
// that uses the static token: 404 with an OAuth error body (RFC 6749 §5.2
// members) that says so, so that a client which went looking for OAuth
// after a 401 reports how to authenticate instead of a failed dynamic
// client registration. (The TypeScript SDK takes a 4xx on the metadata as
// "none", then POSTs to /register and reports its error_description.)
func NoOAuthHandler() http.Handler {
	body := []byte(`{"error":"invalid_request","error_description":"this mcphost gateway does not use OAuth: send Authorization: Bearer <token> (mcphost serve printed it, or $MCPHOST_SERVE_TOKEN)"}` + "\n")
	return GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		w.Write(body)
	}))
}

// bearer returns the bearer token of an Authorization header, or "".
func bearer(h http.Header) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// sessionOwner is the principal a session belongs to ("" without inbound
// OAuth): its ID (issuer and subject).
func sessionOwner(r *http.Request) string {
	if c := host.CallerOf(r.Context()); c != nil {
		return c.Principal.ID()
	}
	return ""
}

// errNotOwner answers a request for a session of another principal: as a
// session that does not exist (404), so that nothing tells a session id
// of another user from a made-up one.
func errNotOwner(w http.ResponseWriter) {
	http.Error(w, "session not found", http.StatusNotFound)
}

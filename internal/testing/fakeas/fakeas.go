// Package fakeas is an OAuth 2.1 authorization server and a protected MCP
// server for tests, on 127.0.0.1. It implements what mcphost's client uses
// (RFC 8414 metadata, RFC 9728 protected-resource metadata, DCR, PKCE S256
// authorization code, refresh with rotation, client credentials, RFC 7009
// revocation) and records every request so tests can check what the client
// sent. It is written for the tests; no OAuth server package is available
// offline, and the behaviours under test (resource on every request,
// rotation, revocation) need an observable server anyway.
package fakeas

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is one recorded request to the authorization server.
type Request struct {
	Path string
	Form url.Values // query for GET, form for POST
	// BasicUser is the client_id of an HTTP Basic Authorization header.
	BasicUser string
}

// Grant is one token response of the token endpoint: what it was asked
// for and what it issued.
type Grant struct {
	Type string // grant_type
	// Presented is the refresh token a refresh_token grant spent.
	Presented    string
	AccessToken  string
	RefreshToken string
	At           time.Time // when it was issued
}

// Server is the authorization server plus the MCP server it protects.
type Server struct {
	AS  *httptest.Server
	MCP *httptest.Server
	// TokenTTL is the expires_in of issued access tokens (seconds).
	TokenTTL int
	// AccessTokenLife, if set, is how long after its issue the MCP server
	// accepts an access token (401 invalid_token after it), whatever
	// TokenTTL announced.
	AccessTokenLife time.Duration
	// OmitPKCE leaves code_challenge_methods_supported out of the metadata.
	OmitPKCE bool
	// NoRevocation leaves revocation_endpoint out of the metadata.
	NoRevocation bool
	// DPoP makes the AS advertise and require DPoP (RFC 9449): token
	// requests need a proof, tokens are DPoP-bound, and the MCP server
	// accepts them only with the DPoP scheme and a proof by the same key.
	// With DPoPNonce set, both servers also require that nonce.
	DPoP      bool
	DPoPNonce string
	// RedirectMCP, if set, answers every MCP request with a 307 to it.
	RedirectMCP string
	// RejectAll makes the MCP server refuse every token: 401, or with
	// InsufficientScope a 403 insufficient_scope asking for scope "admin".
	RejectAll, InsufficientScope bool
	// VerifyAssertion, if set, enables the RFC 7523 JWT-bearer grant: it
	// checks an assertion (an ID-JAG from an IdP) and returns the audience,
	// resource and client it was issued for.
	VerifyAssertion func(assertion string) (audience, resource, clientID string, ok bool)
	// NoMetadata makes every authorization server metadata URL answer 404.
	NoMetadata bool
	// Metadata, if set, edits the authorization server metadata before it
	// is served (an attacker's or a broken server's document).
	Metadata func(m map[string]any)
	// PRM, if set, edits the protected-resource metadata before it is served.
	PRM func(m map[string]any)
	// Callback, if set, edits the query the authorization endpoint sends
	// back to the redirect URI (code, state, iss; or an error).
	Callback func(q url.Values)

	mu       sync.Mutex
	requests []Request
	codes    map[string]url.Values // code -> authorize query
	access   map[string]bool       // valid access tokens
	refresh  map[string]bool       // valid refresh tokens
	revoked  []string
	mcpAuth  []string          // Authorization headers seen by the MCP server
	bound    map[string]string // DPoP-bound access token -> jkt
	issued   map[string]bool   // every access token issued
	jtis     map[string]bool
	dpopErrs []string
	grants   []Grant
	born     map[string]time.Time // access token -> issued at
	expired  int                  // requests refused for AccessTokenLife
}

// Set changes the server's options while it serves.
func (s *Server) Set(f func(*Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Issued reports whether this AS issued the access token.
func (s *Server) Issued(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.issued[tok]
	return ok
}

// Grants returns the token responses issued so far, in order.
func (s *Server) Grants() []Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Grant(nil), s.grants...)
}

// ExpiredRefusals counts the MCP requests refused because their access
// token had outlived AccessTokenLife.
func (s *Server) ExpiredRefusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expired
}

// DPoPErrors returns the DPoP proof problems both servers saw.
func (s *Server) DPoPErrors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dpopErrs...)
}

// New starts both servers; the MCP server has one tool, "whoami".
func New() *Server {
	s := &Server{TokenTTL: 3600, codes: map[string]url.Values{}, access: map[string]bool{}, refresh: map[string]bool{}, bound: map[string]string{}, jtis: map[string]bool{}, issued: map[string]bool{}, born: map[string]time.Time{}}
	s.AS = httptest.NewServer(http.HandlerFunc(s.serveAS))
	ms := mcp.NewServer(&mcp.Implementation{Name: "protected"}, nil)
	mcp.AddTool(ms, &mcp.Tool{Name: "whoami"}, func(_ context.Context, _ *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return ms }, nil)
	s.MCP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/.well-known/oauth-protected-resource/"); ok && (rest == "mcp" || rest == "sse") {
			m := map[string]any{"resource": s.MCP.URL + "/" + rest, "authorization_servers": []string{s.AS.URL}, "scopes_supported": []string{"mcp"}}
			s.mu.Lock()
			edit := s.PRM
			s.mu.Unlock()
			if edit != nil {
				edit(m)
			}
			writeJSON(w, m)
			return
		}
		authz := r.Header.Get("Authorization")
		s.mu.Lock()
		s.mcpAuth = append(s.mcpAuth, authz)
		redirect, reject, scope := s.RedirectMCP, s.RejectAll, s.InsufficientScope
		if redirect != "" || (reject && s.access[strings.TrimPrefix(authz, "Bearer ")]) {
			s.mu.Unlock()
			switch {
			case redirect != "":
				http.Redirect(w, r, redirect, http.StatusTemporaryRedirect)
			case scope:
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="admin", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.MCP.URL))
				http.Error(w, "forbidden", http.StatusForbidden)
			default:
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.MCP.URL))
				http.Error(w, "unauthorized", http.StatusUnauthorized)
			}
			return
		}
		ok := strings.HasPrefix(authz, "Bearer ") && s.access[strings.TrimPrefix(authz, "Bearer ")] && s.bound[strings.TrimPrefix(authz, "Bearer ")] == ""
		if tok := strings.TrimPrefix(strings.TrimPrefix(authz, "Bearer "), "DPoP "); !s.born[tok].IsZero() && s.AccessTokenLife > 0 && time.Since(s.born[tok]) > s.AccessTokenLife {
			s.expired++
			s.mu.Unlock()
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.MCP.URL))
			http.Error(w, "expired", http.StatusUnauthorized)
			return
		}
		if tok, isDPoP := strings.CutPrefix(authz, "DPoP "); isDPoP && s.access[tok] {
			nonce, jkt, err := checkProof(r.Header.Get("DPoP"), r.Method, s.MCP.URL+r.URL.Path, tok, s.jtis)
			switch {
			case err != nil || jkt != s.bound[tok]:
				s.dpopErrs = append(s.dpopErrs, fmt.Sprintf("MCP: %v (key bound: %v)", err, jkt == s.bound[tok]))
			case s.DPoPNonce != "" && nonce != s.DPoPNonce:
				s.mu.Unlock()
				w.Header().Set("DPoP-Nonce", s.DPoPNonce)
				w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
				http.Error(w, "use_dpop_nonce", http.StatusUnauthorized)
				return
			default:
				ok = true
			}
		}
		s.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.MCP.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/sse") {
			sse.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return s
}

// Close stops both servers.
func (s *Server) Close() {
	// A connected client keeps a standalone SSE stream open; end it rather
	// than wait for the client to hang up.
	s.MCP.CloseClientConnections()
	s.MCP.Close()
	s.AS.Close()
}

// URL is the MCP endpoint (streamable HTTP).
func (s *Server) URL() string { return s.MCP.URL + "/mcp" }

// SSEURL is the same server's endpoint over the SSE transport.
func (s *Server) SSEURL() string { return s.MCP.URL + "/sse" }

// Requests returns the recorded requests to path.
func (s *Server) Requests(path string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// Revoked returns the tokens revoked so far.
func (s *Server) Revoked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.revoked...)
}

// MCPAuthorizations returns the Authorization headers the MCP server saw.
func (s *Server) MCPAuthorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.mcpAuth...)
}

// ExpireAccessTokens makes every issued access token invalid.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]bool{}
}

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	form := r.Form
	if r.Method == http.MethodGet {
		form = r.URL.Query()
	}
	user, _, _ := r.BasicAuth()
	user, _ = url.QueryUnescape(user)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Form: form, BasicUser: user})
	s.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		s.mu.Lock()
		none, edit := s.NoMetadata, s.Metadata
		s.mu.Unlock()
		if none {
			http.NotFound(w, r)
			return
		}
		m := map[string]any{
			"issuer": s.AS.URL, "authorization_endpoint": s.AS.URL + "/authorize", "token_endpoint": s.AS.URL + "/token",
			"registration_endpoint": s.AS.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":                          []string{"authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
			"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"},
			"authorization_response_iss_parameter_supported": true,
		}
		if !s.OmitPKCE {
			m["code_challenge_methods_supported"] = []string{"S256"}
		}
		if !s.NoRevocation {
			m["revocation_endpoint"] = s.AS.URL + "/revoke"
		}
		if s.DPoP {
			m["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		if edit != nil {
			edit(m)
		}
		writeJSON(w, m)
	case "/register":
		var md map[string]any
		json.NewDecoder(r.Body).Decode(&md)
		md["client_id"] = "dcr-" + rand.Text()[:8]
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, md)
	case "/authorize":
		q := r.URL.Query()
		code := rand.Text()
		s.mu.Lock()
		s.codes[code] = q
		s.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		v.Set("iss", s.AS.URL)
		s.mu.Lock()
		edit := s.Callback
		s.mu.Unlock()
		if edit != nil {
			edit(v)
		}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	case "/token":
		s.token(w, r, form, user)
	case "/revoke":
		s.mu.Lock()
		s.revoked = append(s.revoked, form.Get("token"))
		delete(s.access, form.Get("token"))
		delete(s.refresh, form.Get("token"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request, form url.Values, basicUser string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	jkt := ""
	if s.DPoP {
		nonce, k, err := checkProof(r.Header.Get("DPoP"), http.MethodPost, s.AS.URL+"/token", "", s.jtis)
		if err != nil {
			s.dpopErrs = append(s.dpopErrs, "token: "+err.Error())
			fail("invalid_dpop_proof")
			return
		}
		if s.DPoPNonce != "" && nonce != s.DPoPNonce {
			w.Header().Set("DPoP-Nonce", s.DPoPNonce)
			fail("use_dpop_nonce")
			return
		}
		jkt = k
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		q, ok := s.codes[form.Get("code")]
		delete(s.codes, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if !ok || q.Get("code_challenge_method") != "S256" || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") {
			fail("invalid_grant")
			return
		}
	case "refresh_token":
		if !s.refresh[form.Get("refresh_token")] {
			fail("invalid_grant")
			return
		}
		delete(s.refresh, form.Get("refresh_token")) // rotation: single use
	case "client_credentials":
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if s.VerifyAssertion == nil {
			fail("unsupported_grant_type")
			return
		}
		aud, res, client, ok := s.VerifyAssertion(form.Get("assertion"))
		if !ok || aud != s.AS.URL || res != s.URL() || client != basicUser {
			fail("invalid_grant")
			return
		}
	default:
		fail("unsupported_grant_type")
		return
	}
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	s.access[at] = true
	s.issued[at] = true
	s.refresh[rt] = true
	s.born[at] = time.Now()
	g := Grant{Type: form.Get("grant_type"), AccessToken: at, RefreshToken: rt, At: s.born[at]}
	if g.Type == "refresh_token" {
		g.Presented = form.Get("refresh_token")
	}
	s.grants = append(s.grants, g)
	typ := "Bearer"
	if jkt != "" {
		s.bound[at], typ = jkt, "DPoP"
	}
	writeJSON(w, map[string]any{"access_token": at, "token_type": typ, "expires_in": s.TokenTTL, "refresh_token": rt, "scope": "mcp"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

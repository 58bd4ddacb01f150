// Package testidp is test-only infrastructure: a real OpenID Provider and
// OAuth 2.0 authorization server, running in-process on an httptest server
// at http://127.0.0.1:PORT, for testing the gateway as an OAuth resource
// server (and as a token-exchange client) against a peer that nobody on
// the team wrote.
//
// It is zitadel's OpenID Certified OP library
// (github.com/zitadel/oidc/v3/pkg/op): discovery, the authorization
// endpoint, PKCE, the token endpoint, JWT and opaque access tokens, JWKS,
// RFC 7662 introspection and RFC 8693 token exchange are all zitadel's
// code. This package only supplies what an OP leaves to its operator: an
// in-memory storage (users, clients, tokens, the RS256 signing key;
// adapted from zitadel's example storage), a login page, and a driver that
// goes through the authorization code + PKCE flow as a browser and a
// client would. It is not a mock: nothing is short-circuited, every token
// comes from the provider's endpoints.
//
// Tokens:
//   - Login returns a JWT access token (RS256, kid of the IdP's key) with
//     iss (Issuer), sub (User.Subject), aud (Options.Audience plus the
//     client_id), exp, iat, nbf, jti, client_id, scope (space-separated) and
//     groups (the user's groups, a JSON array).
//   - LoginOpaque returns an opaque access token, for introspection
//     (IntrospectionURL, IntrospectionClient). Zitadel makes it a compact
//     JWE (five dot-separated parts, header alg A256GCMKW) encrypting the
//     token's ID with a key only the IdP has: opaque to everyone else,
//     but not free of dots.
//   - Exchange (or the gateway, as ExchangeClient) exchanges a user's
//     access token for a JWT access token with another audience (RFC 8693).
//   - Sign signs arbitrary claims with the IdP's real key, for tokens the
//     flow cannot produce (expired, foreign audience, …).
//
// Discovery: /.well-known/openid-configuration (zitadel's) and
// /.well-known/oauth-authorization-server (the same document; zitadel's OP
// does not serve RFC 8414's path, this package aliases it unless
// Options.OIDCDiscoveryOnly).
package testidp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The registered clients' IDs (the secrets are random per IdP).
const (
	// ClientID is the public client (PKCE, no secret) Login uses; its
	// access tokens are JWTs.
	ClientID = "testidp-client"
	// OpaqueClientID is the public client LoginOpaque uses; its access
	// tokens are opaque.
	OpaqueClientID = "testidp-opaque-client"
	// IntrospectionClientID is the resource server's client: it may call
	// the introspection endpoint (client_secret_basic) for any token.
	IntrospectionClientID = "testidp-resource-server"
	// ExchangeClientID is the client allowed the token-exchange grant
	// (client_secret_basic); its tokens are JWTs.
	ExchangeClientID = "testidp-exchanger"
	// RedirectURI is the public clients' redirect URI. Nothing listens
	// there: the driver reads the code from the redirect.
	RedirectURI = "http://127.0.0.1/callback"
)

// DefaultTokenLifetime is the access token lifetime unless
// Options.TokenLifetime says otherwise.
const DefaultTokenLifetime = time.Hour

// User is a user who can log in.
type User struct {
	// Subject is the sub claim of the user's tokens (default: Username).
	Subject string
	// Username and Password are what the login form takes.
	Username string
	Password string
	// Groups is the user's groups claim.
	Groups []string
}

// Options configure an IdP.
type Options struct {
	Users []User
	// Audience is the aud of the access tokens Login issues (e.g. the
	// gateway's URL "http://127.0.0.1:PORT/mcp"); the client_id is added.
	// Without it, aud is the client_id alone.
	Audience []string
	// Scopes are the scopes clients may request beyond openid, profile,
	// email and offline_access (e.g. "mcp"). Other requested scopes are
	// dropped silently (zitadel's behavior), not refused.
	Scopes []string
	// ExchangeAudiences, when set, are the only audiences (or resources)
	// a token exchange may ask for; others get invalid_target.
	ExchangeAudiences []string
	// TokenLifetime is the lifetime of access and ID tokens
	// (DefaultTokenLifetime when zero).
	TokenLifetime time.Duration
	// OIDCDiscoveryOnly: do not serve /.well-known/oauth-authorization-server,
	// only zitadel's /.well-known/openid-configuration.
	OIDCDiscoveryOnly bool
}

// IdP is a running identity provider.
type IdP struct {
	// Issuer is the issuer URL, "http://127.0.0.1:PORT" (no trailing
	// slash), the iss of its tokens.
	Issuer string

	srv          *httptest.Server
	provider     *op.Provider
	st           *storage
	lifetime     time.Duration
	audience     []string
	scopes       []string
	introSecret  string
	exchSecret   string
	loginHandler http.Handler
}

// Start starts an IdP on 127.0.0.1; t.Cleanup closes it.
func Start(t testing.TB, o Options) *IdP {
	t.Helper()
	p, err := start(o)
	if err != nil {
		t.Fatalf("testidp: %v", err)
	}
	t.Cleanup(p.srv.Close)
	return p
}

func start(o Options) (*IdP, error) {
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = DefaultTokenLifetime
	}
	st, err := newStorage(o)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(nil)
	p := &IdP{
		Issuer:      "http://" + srv.Listener.Addr().String(),
		srv:         srv,
		st:          st,
		lifetime:    o.TokenLifetime,
		audience:    slices.Clone(o.Audience),
		scopes:      slices.Clone(o.Scopes),
		introSecret: rand.Text(),
		exchSecret:  rand.Text(),
	}
	public := func(id string, tt op.AccessTokenType) *client {
		return &client{
			id: id, appType: op.ApplicationTypeNative, authMethod: oidc.AuthMethodNone,
			redirectURIs: []string{RedirectURI}, grantTypes: []oidc.GrantType{oidc.GrantTypeCode},
			tokenType: tt, lifetime: o.TokenLifetime, scopes: st.knownScope,
		}
	}
	st.addClient(public(ClientID, op.AccessTokenTypeJWT))
	st.addClient(public(OpaqueClientID, op.AccessTokenTypeBearer))
	st.addClient(&client{
		id: IntrospectionClientID, secret: p.introSecret, appType: op.ApplicationTypeWeb,
		authMethod: oidc.AuthMethodBasic, tokenType: op.AccessTokenTypeBearer,
		lifetime: o.TokenLifetime, scopes: st.knownScope, introspect: true,
	})
	st.addClient(&client{
		id: ExchangeClientID, secret: p.exchSecret, appType: op.ApplicationTypeWeb,
		authMethod: oidc.AuthMethodBasic, grantTypes: []oidc.GrantType{oidc.GrantTypeTokenExchange},
		tokenType: op.AccessTokenTypeJWT, lifetime: o.TokenLifetime, scopes: st.knownScope,
	})

	var cryptoKey [32]byte
	rand.Read(cryptoKey[:])
	cfg := &op.Config{
		CryptoKey:       cryptoKey, // encrypts opaque access tokens
		CodeMethodS256:  true,
		SupportedScopes: append([]string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail}, o.Scopes...),
	}
	p.provider, err = op.NewProvider(cfg, st, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		return nil, err
	}
	p.loginHandler = p.newLoginHandler()

	mux := http.NewServeMux()
	mux.Handle(loginPath, p.loginHandler)
	mux.Handle("POST "+p.provider.TokenEndpoint().Relative(), resourceAsAudience(p.provider))
	if !o.OIDCDiscoveryOnly {
		mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
			r = r.Clone(r.Context())
			r.URL.Path, r.URL.RawPath = oidc.DiscoveryEndpoint, ""
			p.provider.ServeHTTP(w, r)
		})
	}
	mux.Handle("/", p.provider)
	srv.Config.Handler = mux
	srv.Start()
	return p, nil
}

// resourceAsAudience lets a token exchange name its target with RFC 8693's
// resource parameter: zitadel's OP reads it (GetResourses) but only the
// audience parameter becomes the issued token's aud, and a storage cannot
// change a request's audience. So resource values are added to audience
// before the OP reads the form.
func resourceAsAudience(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "reading the request", http.StatusBadRequest)
			return
		}
		if form, err := url.ParseQuery(string(body)); err == nil &&
			form.Get("grant_type") == string(oidc.GrantTypeTokenExchange) && len(form["resource"]) > 0 {
			for _, res := range form["resource"] {
				if !slices.Contains(form["audience"], res) {
					form.Add("audience", res)
				}
			}
			body = []byte(form.Encode())
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// AuthorizationURL is the authorization endpoint.
func (p *IdP) AuthorizationURL() string {
	return p.provider.AuthorizationEndpoint().Absolute(p.Issuer)
}

// TokenURL is the token endpoint.
func (p *IdP) TokenURL() string { return p.provider.TokenEndpoint().Absolute(p.Issuer) }

// JWKSURL is the jwks_uri (the discovery document says the same).
func (p *IdP) JWKSURL() string { return p.provider.KeysEndpoint().Absolute(p.Issuer) }

// IntrospectionURL is the RFC 7662 introspection endpoint.
func (p *IdP) IntrospectionURL() string {
	return p.provider.IntrospectionEndpoint().Absolute(p.Issuer)
}

// IntrospectionClient returns the credentials of the resource server's
// client, which may introspect any token (client_secret_basic).
func (p *IdP) IntrospectionClient() (id, secret string) {
	return IntrospectionClientID, p.introSecret
}

// ExchangeClient returns the credentials of the client allowed the
// token-exchange grant (client_secret_basic at TokenURL). A request needs
// subject_token (an active access token of this IdP),
// subject_token_type=urn:ietf:params:oauth:token-type:access_token and an
// audience or resource; requested_token_type, if sent, must be the
// access_token type; actor tokens are refused. The issued JWT has the
// subject token's sub and groups, aud = the requested audiences and
// resources, client_id = ExchangeClientID, and scope = the requested
// scopes this IdP knows (the subject token's when none is requested).
func (p *IdP) ExchangeClient() (id, secret string) {
	return ExchangeClientID, p.exchSecret
}

// PublicJWK is the public half of the signing key, as served at JWKSURL.
func (p *IdP) PublicJWK() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &p.st.key.key.PublicKey, KeyID: p.st.key.id, Algorithm: string(jose.RS256), Use: "sig"}
}

// Sign signs claims with the IdP's signing key, RS256, with the key's kid
// and typ JWT, as the IdP signs its access tokens. Nothing is added to
// claims: the token is exactly what the caller asks for (see ClaimsFor).
func (p *IdP) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.RS256,
		Key:       jose.JSONWebKey{Key: p.st.key.key, KeyID: p.st.key.id},
	}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatalf("testidp: signer: %v", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("testidp: claims: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatalf("testidp: signing: %v", err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatalf("testidp: signing: %v", err)
	}
	return s
}

// ClaimsFor returns the claims of a JWT access token Login would issue to
// username now with scopes (default: DefaultScopes), for tests to alter
// and Sign. Its jti is not an issued token: it cannot be introspected or
// exchanged.
func (p *IdP) ClaimsFor(t testing.TB, username string, scopes ...string) map[string]any {
	t.Helper()
	p.st.mu.Lock()
	u := p.st.userByName(username)
	p.st.mu.Unlock()
	if u == nil {
		t.Fatalf("testidp: no user %q", username)
	}
	if len(scopes) == 0 {
		scopes = p.DefaultScopes()
	}
	now := time.Now()
	c := p.st.accessTokenClaims(u.Subject, scopes)
	c["iss"] = p.Issuer
	c["sub"] = u.Subject
	c["aud"] = oidc.AppendClientIDToAudience(ClientID, slices.Clone(p.audience))
	c["iat"] = now.Unix()
	c["nbf"] = now.Unix()
	c["exp"] = now.Add(p.lifetime).Unix()
	c["client_id"] = ClientID
	c["jti"] = rand.Text()
	return c
}

// DefaultScopes are the scopes Login requests when given none: openid and
// Options.Scopes.
func (p *IdP) DefaultScopes() []string {
	return append([]string{oidc.ScopeOpenID}, p.scopes...)
}

// Login runs the authorization code flow with PKCE for username, as the
// public client ClientID (see TryLogin), and returns the JWT access token.
// It fails the test if the login fails.
func (p *IdP) Login(t testing.TB, username string, scopes ...string) string {
	t.Helper()
	return p.mustLogin(t, ClientID, username, scopes)
}

// LoginOpaque is Login as OpaqueClientID, whose access tokens are opaque:
// only introspection says what they are.
func (p *IdP) LoginOpaque(t testing.TB, username string, scopes ...string) string {
	t.Helper()
	return p.mustLogin(t, OpaqueClientID, username, scopes)
}

func (p *IdP) mustLogin(t testing.TB, clientID, username string, scopes []string) string {
	t.Helper()
	p.st.mu.Lock()
	u := p.st.userByName(username)
	p.st.mu.Unlock()
	if u == nil {
		t.Fatalf("testidp: no user %q", username)
	}
	tok, err := p.login(t.Context(), clientID, username, u.Password, scopes)
	if err != nil {
		t.Fatalf("testidp: login as %q: %v", username, err)
	}
	return tok
}

// TryLogin runs the authorization code flow with PKCE as ClientID with the
// given credentials and returns the JWT access token, or why the flow
// failed (e.g. the login page's "wrong username or password").
func (p *IdP) TryLogin(ctx context.Context, username, password string, scopes ...string) (string, error) {
	return p.login(ctx, ClientID, username, password, scopes)
}

// Exchange exchanges subjectToken (an access token of this IdP) for a JWT
// access token for audience, as ExchangeClient, sending audience as RFC
// 8693's resource parameter and scopes as scope (none: the subject
// token's).
func (p *IdP) Exchange(ctx context.Context, subjectToken, audience string, scopes ...string) (string, error) {
	form := url.Values{
		"grant_type":         {string(oidc.GrantTypeTokenExchange)},
		"subject_token":      {subjectToken},
		"subject_token_type": {string(oidc.AccessTokenType)},
		"resource":           {audience},
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	var resp struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	if err := p.postForm(ctx, p.TokenURL(), form, ExchangeClientID, p.exchSecret, &resp); err != nil {
		return "", err
	}
	if resp.AccessToken == "" || resp.IssuedTokenType != string(oidc.AccessTokenType) {
		return "", fmt.Errorf("token exchange: no access token in the response (issued_token_type %q)", resp.IssuedTokenType)
	}
	return resp.AccessToken, nil
}

// Introspect asks the introspection endpoint about token, as the
// IntrospectionClient, and returns the decoded response.
func (p *IdP) Introspect(ctx context.Context, token string) (map[string]any, error) {
	var resp map[string]any
	err := p.postForm(ctx, p.IntrospectionURL(), url.Values{"token": {token}}, IntrospectionClientID, p.introSecret, &resp)
	return resp, err
}

// postForm POSTs form to endpoint with client_secret_basic and decodes a
// 200 JSON answer into out.
func (p *IdP) postForm(ctx context.Context, endpoint string, form url.Values, id, secret string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := p.httpClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: HTTP %d: %s: %s", endpoint, resp.StatusCode, e.Error, e.Description)
		}
		return fmt.Errorf("%s: HTTP %d", endpoint, resp.StatusCode)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: %w", endpoint, err)
	}
	return nil
}

// httpClient is a client of the IdP's server that does not follow
// redirects.
func (p *IdP) httpClient() *http.Client {
	return &http.Client{
		Transport: p.srv.Client().Transport,
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

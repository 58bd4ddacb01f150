// Package xaa is the auth-xaa plugin: Enterprise-Managed Authorization
// (SEP-990, "Cross-App Access") for MCP servers, built on the go-sdk's
// extauth.PerformOIDCLogin, oauthex's metadata and token types, and
// sdk/oauthkit's token requests (see exchange for why not on
// extauth.EnterpriseHandler).
//
// For each server the flow is: an id_token from the enterprise IdP (a
// configured source, or an OIDC login in the browser that the host drives
// as an interaction), RFC 8693 token exchange at the IdP for an ID-JAG whose
// audience is the server's authorization server and whose resource is the
// server, then the RFC 7523 JWT-bearer grant at that authorization server.
// The id_token is cached per IdP and reused for every server behind it: one
// login, N servers. An access_denied from the IdP ends the flow with a clear
// error and never falls back to a browser login.
package xaa

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// Scheme is the auth scheme the plugin serves.
const Scheme = "xaa"

// CallbackPath is the path of the OIDC login's redirect URI.
const CallbackPath = "/callback"

// Component is the scheme's configuration schema (an auth "xaa" block).
var Component = sdk.Component{
	Name: Scheme,
	Config: []sdk.Attribute{
		{Name: "idp", Type: sdk.TypeString, Required: true, Description: "name of the idp block to log in at"},
		{Name: "client_id", Type: sdk.TypeString, Required: true, Description: "mcphost's client ID at the server's authorization server"},
		{Name: "client_secret", Type: sdk.TypeString, Sensitive: true, Description: "its client secret (confidential clients)"},
		{Name: "scopes", Type: sdk.TypeListOfString, Description: "scopes to request (default: the server's challenge, then its metadata)"},
		{Name: "allow_loopback", Type: sdk.TypeBool, Description: "permit http:// loopback authorization servers (tests, local use)"},
	},
}

// Config is an auth "xaa" block.
type Config struct {
	IdP           string   `json:"idp"`
	ClientID      string   `json:"client_id"`
	ClientSecret  string   `json:"client_secret,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	AllowLoopback bool     `json:"allow_loopback,omitempty"`
}

// expiryMargin is how long before its expiry a token counts as expired.
const expiryMargin = 30 * time.Second

// Plugin implements sdk.Auth and sdk.Interactive. It serves every server
// that uses the scheme (one process per plugin).
type Plugin struct {
	logger hclog.Logger
	ctx    context.Context // owns the OIDC login goroutines
	stop   context.CancelFunc
	now    func() time.Time

	mu       sync.Mutex
	idTokens map[string]string        // IdP key -> id_token
	tokens   map[string]*oauth2.Token // server key -> access token
	flights  map[string]*sync.Mutex   // server key -> one authorization at a time
	scopes   map[string][]string      // server key -> scopes challenged by a 403
	logins   map[string]*login        // interaction ID -> pending OIDC login
	byIdP    map[string]*login        // IdP key -> its pending OIDC login
	stepUps  map[string]int           // server key -> 403 step-ups so far
}

var (
	_ sdk.Auth        = (*Plugin)(nil)
	_ sdk.Interactive = (*Plugin)(nil)
	_ sdk.Forgetter   = (*Plugin)(nil)
)

// Forget drops the server's access token and the id_token of its IdP:
// logging out ends the IdP session mcphost holds, so no server on that IdP
// gets a new token without a new login (tokens already issued to other
// servers last until they expire).
func (p *Plugin) Forget(_ context.Context, req *sdk.ForgetRequest) (*sdk.ForgetResponse, error) {
	r, d := parse(req.Server)
	if d.HasErrors() {
		return &sdk.ForgetResponse{Diagnostics: d}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.tokens, r.key)
	delete(p.scopes, r.key)
	delete(p.stepUps, r.key)
	delete(p.idTokens, r.idpKey)
	return &sdk.ForgetResponse{}, nil
}

// New returns the plugin; Close stops its pending logins.
func New(logger hclog.Logger) *Plugin {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Plugin{
		logger: logger, ctx: ctx, stop: stop, now: time.Now,
		idTokens: map[string]string{}, tokens: map[string]*oauth2.Token{}, flights: map[string]*sync.Mutex{},
		scopes: map[string][]string{}, logins: map[string]*login{}, byIdP: map[string]*login{}, stepUps: map[string]int{},
	}
}

// Close cancels pending logins.
func (p *Plugin) Close() { p.stop() }

// maxStepUps bounds the scope step-ups after 403 insufficient_scope per server.
const maxStepUps = 2

type request struct {
	ref    sdk.ServerRef
	cfg    Config
	idp    sdk.IdPConfig
	key    string // server key
	idpKey string
}

// parse decodes a request's configuration.
func parse(ref sdk.ServerRef) (*request, sdk.Diagnostics) {
	r := &request{ref: ref}
	if d := sdk.DecodeConfig(ref.Config, &r.cfg); d.HasErrors() {
		return nil, d
	}
	if len(ref.IdP) == 0 {
		return nil, sdk.Diagnostics{sdk.Errorf("idp", "No identity provider", "the auth \"xaa\" block of %s names idp %q, but the host sent no idp block; declare idp %q { issuer = …, client_id = … }", ref.ServerName, r.cfg.IdP, r.cfg.IdP)}
	}
	if err := json.Unmarshal(ref.IdP, &r.idp); err != nil {
		return nil, sdk.Diagnostics{sdk.Errorf("idp", "Invalid identity provider", "the idp block of %s could not be read: %v", ref.ServerName, err)}
	}
	if r.cfg.ClientID == "" {
		return nil, sdk.Diagnostics{sdk.Errorf("client_id", "Missing client_id", "set client_id: mcphost's client ID at %s's authorization server", ref.ServerName)}
	}
	r.idpKey = r.idp.Issuer + " " + r.idp.ClientID
	h := sha256.New()
	h.Write(ref.Config)
	h.Write(ref.IdP)
	r.key = ref.ServerName + " " + hex.EncodeToString(h.Sum(nil)[:8])
	return r, nil
}

// Token returns the server's current access token, or none.
func (p *Plugin) Token(_ context.Context, req *sdk.TokenRequest) (*sdk.TokenResponse, error) {
	r, d := parse(req.Server)
	if d.HasErrors() {
		return &sdk.TokenResponse{Diagnostics: d}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tok := p.tokens[r.key]
	if tok == nil {
		tok = p.restoreLocked(r)
	}
	if tok == nil || (!tok.Expiry.IsZero() && !p.now().Add(expiryMargin).Before(tok.Expiry)) {
		return &sdk.TokenResponse{}, nil
	}
	saved, _ := json.Marshal(savedState{IDToken: p.idTokens[r.idpKey], AccessToken: tok.AccessToken, Expiry: tok.Expiry})
	return &sdk.TokenResponse{AccessToken: tok.AccessToken, TokenType: "Bearer", Expiry: tok.Expiry, SavedState: saved}, nil
}

// savedState is what the host keeps for a server across restarts (in its
// owner-only token store): the IdP's id_token and the server's access token.
type savedState struct {
	IDToken     string    `json:"id_token,omitempty"`
	AccessToken string    `json:"access_token,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
}

// restoreLocked resumes from the state the host saved: the access token if
// it is still valid, and the id_token (for every server on the IdP) if it
// has not expired.
func (p *Plugin) restoreLocked(r *request) *oauth2.Token {
	var st savedState
	if len(r.ref.SavedState) == 0 || json.Unmarshal(r.ref.SavedState, &st) != nil {
		return nil
	}
	if st.IDToken != "" && p.idTokens[r.idpKey] == "" {
		if exp, ok := jwtExpiry(st.IDToken); !ok || p.now().Before(exp) {
			p.idTokens[r.idpKey] = st.IDToken
		}
	}
	if st.AccessToken == "" || (!st.Expiry.IsZero() && !p.now().Add(expiryMargin).Before(st.Expiry)) {
		return nil
	}
	tok := &oauth2.Token{AccessToken: st.AccessToken, TokenType: "Bearer", Expiry: st.Expiry}
	p.tokens[r.key] = tok
	return tok
}

// jwtExpiry reads the exp claim of a JWT without verifying it (the IdP
// verifies the id_token; this only avoids sending one known to be stale).
func jwtExpiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var c struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(b, &c) != nil || c.Exp == "" {
		return time.Time{}, false
	}
	secs, err := c.Exp.Int64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// Authorize reacts to a 401 (or 403 insufficient_scope): it obtains an
// id_token (cached, configured, or by asking the host for an OIDC login),
// exchanges it for an ID-JAG and that for an access token.
func (p *Plugin) Authorize(ctx context.Context, req *sdk.AuthorizeRequest) (*sdk.AuthorizeResponse, error) {
	r, d := parse(req.Server)
	if d.HasErrors() {
		return &sdk.AuthorizeResponse{Diagnostics: d}, nil
	}
	challenges, _ := oauthkit.ParseChallenges([]string{req.WWWAuthenticate})
	if req.Status == http.StatusForbidden {
		if d := p.stepUp(r, challenges); d != nil {
			return &sdk.AuthorizeResponse{Diagnostics: d}, nil
		}
	}
	flight := p.flight(r.key)
	flight.Lock()
	defer flight.Unlock()
	p.mu.Lock()
	delete(p.tokens, r.key)
	p.restoreLocked(r) // an id_token saved by an earlier run
	delete(p.tokens, r.key)
	idToken := p.idTokens[r.idpKey]
	p.mu.Unlock()
	if idToken == "" {
		tok, ia, d := p.idToken(r)
		if d != nil || ia != nil {
			return &sdk.AuthorizeResponse{Interaction: ia, Diagnostics: d}, nil
		}
		idToken = tok
	}
	ia, d := p.exchange(ctx, r, idToken, req.RequestURL, challenges)
	return &sdk.AuthorizeResponse{Interaction: ia, Diagnostics: d}, nil
}

func (p *Plugin) flight(key string) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.flights[key]
	if m == nil {
		m = &sync.Mutex{}
		p.flights[key] = m
	}
	return m
}

// stepUp records the scopes a 403 insufficient_scope challenge asks for, at
// most maxStepUps times per server; other 403s are refusals.
func (p *Plugin) stepUp(r *request, challenges []oauthex.Challenge) sdk.Diagnostics {
	var errCode, scope string
	for _, c := range challenges {
		if v := c.Params["error"]; v != "" {
			errCode = v
		}
		if v := c.Params["scope"]; v != "" {
			scope = v
		}
	}
	if errCode != "insufficient_scope" || scope == "" {
		return sdk.Diagnostics{sdk.Errorf("", "Forbidden", "%s refused the token (403 %s)", r.ref.ServerName, errCode)}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stepUps[r.key] >= maxStepUps {
		return sdk.Diagnostics{sdk.Errorf("scopes", "Insufficient scope", "%s still asks for scope %q after %d step-ups; check the scopes your IdP grants", r.ref.ServerName, scope, maxStepUps)}
	}
	p.stepUps[r.key]++
	have := p.scopes[r.key]
	for _, s := range strings.Fields(scope) {
		if !slices.Contains(have, s) {
			have = append(have, s)
		}
	}
	p.scopes[r.key] = have
	return nil
}

// idToken returns the IdP's id_token from its configured source, or starts
// an OIDC login and returns the interaction for the host to drive.
func (p *Plugin) idToken(r *request) (string, *sdk.Interaction, sdk.Diagnostics) {
	switch {
	case r.idp.IDToken != "":
		return r.idp.IDToken, nil, nil
	case r.idp.IDTokenFile != "":
		b, err := os.ReadFile(r.idp.IDTokenFile)
		if err != nil {
			return "", nil, sdk.Diagnostics{sdk.Errorf("", "Cannot read id_token_file", "idp %s: %v", r.idp.Name, err)}
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", nil, sdk.Diagnostics{sdk.Errorf("", "Empty id_token_file", "idp %s: %s is empty", r.idp.Name, r.idp.IDTokenFile)}
		}
		return tok, nil, nil
	}
	ia, d := p.startLogin(r)
	return "", ia, d
}

// exchange runs the Enterprise-Managed Authorization flow for one server
// and keeps the access token: discovery of the server's authorization
// server, RFC 8693 token exchange of the id_token for an ID-JAG at the IdP,
// and the RFC 7523 JWT-bearer grant at the authorization server. Both token
// requests go through oauthkit.TokenGrant, which authenticates the client
// the way each server's metadata asks.
//
// The go-sdk's extauth.EnterpriseHandler runs the same three steps, but it
// cannot be used as is: its metadata discovery (auth.GetAuthServerMetadata)
// refuses an IdP or authorization server that does not advertise PKCE,
// which neither grant uses, and it always sends client_secret in the form,
// where RFC 8414 makes client_secret_basic the default. The official
// conformance scenario has both (an IdP without PKCE metadata, an
// authorization server accepting only client_secret_basic), which is why
// the go-sdk's own client fails it. oauthex.ExchangeToken has the same
// client_secret_post-only limit, so the exchange is sent by TokenGrant too.
func (p *Plugin) exchange(ctx context.Context, r *request, idToken, requestURL string, challenges []oauthex.Challenge) (*sdk.Interaction, sdk.Diagnostics) {
	client := oauthkit.NewGuardedClient(oauthkit.GuardOptions{AllowLoopback: r.cfg.AllowLoopback || r.idp.AllowLoopback})
	if requestURL == "" {
		requestURL = r.ref.ServerURL
	}
	prm, asm, err := oauthkit.Discover(ctx, client, requestURL, challenges)
	if err != nil {
		return nil, sdk.Diagnostics{sdk.Errorf("", "Discovery failed", "%s: %v", r.ref.ServerName, err)}
	}
	idpMeta, err := oauthkit.FetchAuthServerMetadata(ctx, client, r.idp.Issuer)
	if err != nil || idpMeta == nil {
		return nil, sdk.Diagnostics{sdk.Errorf("", "IdP discovery failed", "idp %s (%s): %v", r.idp.Name, r.idp.Issuer, orNotFound(err))}
	}

	resource := prm.Resource
	if resource == "" {
		resource = r.ref.ServerURL
	}
	scopes := p.scopesFor(r, challenges, prm)
	exchange := url.Values{
		"grant_type":           {oauthex.GrantTypeTokenExchange},
		"requested_token_type": {oauthex.TokenTypeIDJAG},
		"audience":             {asm.Issuer},
		"resource":             {resource},
		"subject_token":        {idToken},
		"subject_token_type":   {oauthex.TokenTypeIDToken},
	}
	if len(scopes) > 0 {
		exchange.Set("scope", strings.Join(scopes, " "))
	}
	jag, err := oauthkit.TokenGrant(ctx, client, idpMeta, exchange, r.idp.ClientID, r.idp.ClientSecret)
	if err != nil {
		return p.failed(r, true, err)
	}
	if tt, _ := jag.Extra("issued_token_type").(string); tt != oauthex.TokenTypeIDJAG {
		return nil, sdk.Diagnostics{sdk.Errorf("", "Unexpected token", "the IdP %s issued a %q, not an ID-JAG", r.idp.Name, tt)}
	}
	form := url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag.AccessToken}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	tok, err := oauthkit.TokenGrant(ctx, client, asm, form, r.cfg.ClientID, r.cfg.ClientSecret)
	if err != nil {
		return p.failed(r, false, err)
	}
	p.mu.Lock()
	p.idTokens[r.idpKey] = idToken
	p.tokens[r.key] = tok
	p.mu.Unlock()
	p.logger.Debug("access token obtained", "server", r.ref.ServerName, "issuer", asm.Issuer, "expiry", tok.Expiry)
	return nil, nil
}

// grantJWTBearer is the RFC 7523 JWT-bearer grant type.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// scopesFor picks the scopes to request: the configured ones plus those a
// 403 asked for; else the 401 challenge's; else the resource's metadata.
func (p *Plugin) scopesFor(r *request, challenges []oauthex.Challenge, prm *oauthex.ProtectedResourceMetadata) []string {
	p.mu.Lock()
	extra := p.scopes[r.key]
	p.mu.Unlock()
	out := append([]string(nil), r.cfg.Scopes...)
	if len(out) == 0 {
		for _, c := range challenges {
			if s := c.Params["scope"]; s != "" {
				out = strings.Fields(s)
			}
		}
	}
	if len(out) == 0 && prm != nil {
		out = append(out, prm.ScopesSupported...)
	}
	for _, s := range extra {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// failed turns a failed exchange into diagnostics: access_denied stops
// with a clear error; an id_token the IdP no longer accepts is forgotten
// and, if it came from a browser login, a new login is asked for.
func (p *Plugin) failed(r *request, atIdP bool, err error) (*sdk.Interaction, sdk.Diagnostics) {
	var rerr *oauth2.RetrieveError
	code := ""
	if errors.As(err, &rerr) {
		code = rerr.ErrorCode
	}
	where := fmt.Sprintf("%s's authorization server", r.ref.ServerName)
	if atIdP {
		where = fmt.Sprintf("the IdP %s", r.idp.Name)
	}
	switch {
	case code == "access_denied":
		return nil, sdk.Diagnostics{sdk.Errorf("", "Access denied",
			"%s denied access to %s (access_denied%s). mcphost does not fall back to a browser login; ask your administrator to grant you access to this server", where, r.ref.ServerName, describe(rerr))}
	case atIdP && code == "invalid_grant":
		p.mu.Lock()
		delete(p.idTokens, r.idpKey)
		p.mu.Unlock()
		if r.idp.IDToken != "" || r.idp.IDTokenFile != "" {
			return nil, sdk.Diagnostics{sdk.Errorf("", "id_token refused", "the IdP %s refused the configured id_token (invalid_grant%s); it may have expired", r.idp.Name, describe(rerr))}
		}
		return p.startLogin(r)
	}
	return nil, sdk.Diagnostics{sdk.Errorf("", "Authorization failed", "%s: %v", r.ref.ServerName, redactErr(err))}
}

func describe(rerr *oauth2.RetrieveError) string {
	if rerr == nil || rerr.ErrorDescription == "" {
		return ""
	}
	return ": " + rerr.ErrorDescription
}

// redactErr keeps an error's message but drops response bodies, which may
// echo tokens.
func redactErr(err error) string {
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		msg := "error " + strconv.Quote(rerr.ErrorCode)
		if rerr.Response != nil {
			msg = fmt.Sprintf("%s (HTTP %d)", msg, rerr.Response.StatusCode)
		}
		return msg + describe(rerr)
	}
	return err.Error()
}

func orNotFound(err error) error {
	if err == nil {
		return errors.New("no metadata found")
	}
	return err
}

func credentials(id, secret string) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: id}
	if secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// newID returns a random interaction ID.
func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

package testidp

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// This file is the op.Storage behind the provider, adapted from zitadel's
// example storage (github.com/zitadel/oidc/v3/example/server/storage).
// That storage cannot be reused as is: its Client has unexported fields and
// every constructor makes opaque-token clients (there is no way to get JWT
// access tokens), its AuthRequest's audience is always just the client_id,
// its clients only allow the scope "custom_scope", and its token exchange
// policy is impersonation by admin users. What is kept is its shape: an
// in-memory store of users, clients, auth requests, codes and tokens behind
// one mutex, and one RSA signing key.

// Compile-time checks of the optional interfaces the provider looks for.
var (
	_ op.Storage                        = (*storage)(nil)
	_ op.TokenExchangeStorage           = (*storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest      = (*storage)(nil)
)

// GroupsClaim is the claim carrying a user's groups, in access tokens,
// ID tokens, userinfo and introspection responses.
const GroupsClaim = "groups"

// storage implements op.Storage (and token exchange) in memory.
type storage struct {
	lifetime time.Duration
	// audience of tokens from the authorization code flow (the client_id
	// is added).
	audience []string
	// scopes clients may request beyond the OpenID ones.
	scopes []string
	// exchangeAudiences, when not empty, are the only audiences a token
	// exchange may ask for.
	exchangeAudiences []string

	key signingKey

	mu           sync.Mutex
	users        map[string]*User // by subject
	clients      map[string]*client
	authRequests map[string]*authRequest
	codes        map[string]string // code -> auth request ID
	tokens       map[string]*token
}

func newStorage(o Options) (*storage, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	s := &storage{
		lifetime:          o.TokenLifetime,
		audience:          slices.Clone(o.Audience),
		scopes:            slices.Clone(o.Scopes),
		exchangeAudiences: slices.Clone(o.ExchangeAudiences),
		key:               signingKey{id: rand.Text(), key: k},
		users:             map[string]*User{},
		clients:           map[string]*client{},
		authRequests:      map[string]*authRequest{},
		codes:             map[string]string{},
		tokens:            map[string]*token{},
	}
	for _, u := range o.Users {
		if u.Subject == "" {
			u.Subject = u.Username
		}
		if u.Username == "" {
			return nil, errors.New("testidp: a user without a username")
		}
		if s.userByName(u.Username) != nil || s.users[u.Subject] != nil {
			return nil, fmt.Errorf("testidp: user %q or subject %q given twice", u.Username, u.Subject)
		}
		u.Groups = slices.Clone(u.Groups)
		s.users[u.Subject] = &u
	}
	return s, nil
}

// addClient registers c.
func (s *storage) addClient(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.id] = c
}

// userByName returns the user named username, or nil. The caller holds
// s.mu (or has the storage to itself).
func (s *storage) userByName(username string) *User {
	for _, u := range s.users {
		if u.Username == username {
			return u
		}
	}
	return nil
}

// checkLogin is the login UI's check of a user's password for the auth
// request id; on success the request is done and carries the user.
func (s *storage) checkLogin(id, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok {
		return errors.New("unknown or expired login request")
	}
	u := s.userByName(username)
	if u == nil || u.Password != password {
		return errors.New("wrong username or password")
	}
	ar.userID = u.Subject
	ar.done = true
	ar.authTime = time.Now()
	return nil
}

// knownScope reports whether scope may be granted: an OpenID scope or one
// of Options.Scopes.
func (s *storage) knownScope(scope string) bool {
	switch scope {
	case oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail, oidc.ScopeOfflineAccess:
		return true
	}
	return slices.Contains(s.scopes, scope)
}

// ---- signing key ----

// signingKey is the provider's one RS256 key (op.SigningKey).
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

// publicKey is the signing key's public half (op.Key), served at jwks_uri.
type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.key.PublicKey }

// ---- clients ----

// client is a registered OAuth client (op.Client).
type client struct {
	id, secret   string
	appType      op.ApplicationType
	authMethod   oidc.AuthMethod
	redirectURIs []string
	grantTypes   []oidc.GrantType
	tokenType    op.AccessTokenType
	lifetime     time.Duration
	scopes       func(string) bool
	// introspect: the client may call the introspection endpoint, for any
	// token (a resource server).
	introspect bool
}

func (c *client) GetID() string                    { return c.id }
func (c *client) RedirectURIs() []string           { return c.redirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return nil }
func (c *client) ApplicationType() op.ApplicationType {
	return c.appType
}
func (c *client) AuthMethod() oidc.AuthMethod { return c.authMethod }
func (c *client) ResponseTypes() []oidc.ResponseType {
	if slices.Contains(c.grantTypes, oidc.GrantTypeCode) {
		return []oidc.ResponseType{oidc.ResponseTypeCode}
	}
	return nil
}
func (c *client) GrantTypes() []oidc.GrantType        { return c.grantTypes }
func (c *client) LoginURL(id string) string           { return loginPath + "?authRequestID=" + id }
func (c *client) AccessTokenType() op.AccessTokenType { return c.tokenType }
func (c *client) IDTokenLifetime() time.Duration      { return c.lifetime }
func (c *client) DevMode() bool                       { return false }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(scope string) bool     { return c.scopes(scope) }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }

// GetClientByClientID implements op.Storage.
func (s *storage) GetClientByClientID(_ context.Context, clientID string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok {
		return nil, errors.New("client not found")
	}
	return c, nil
}

// AuthorizeClientIDSecret implements op.Storage.
func (s *storage) AuthorizeClientIDSecret(_ context.Context, clientID, clientSecret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[clientID]
	if !ok || c.secret == "" || c.secret != clientSecret {
		return errors.New("invalid client credentials")
	}
	return nil
}

// ---- authorization requests ----

// authRequest is a pending authorization request (op.AuthRequest).
type authRequest struct {
	id            string
	clientID      string
	redirectURI   string
	state         string
	nonce         string
	scopes        []string
	responseType  oidc.ResponseType
	responseMode  oidc.ResponseMode
	codeChallenge *oidc.CodeChallenge
	audience      []string

	userID   string
	done     bool
	authTime time.Time
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return a.audience }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.codeChallenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.userID }
func (a *authRequest) Done() bool                            { return a.done }

// CreateAuthRequest implements op.Storage. The tokens of the request will
// have Options.Audience and the client_id as their audience.
func (s *storage) CreateAuthRequest(_ context.Context, r *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	if slices.Equal(r.Prompt, []string{oidc.PromptNone}) {
		return nil, oidc.ErrLoginRequired()
	}
	ar := &authRequest{
		id:           rand.Text(),
		clientID:     r.ClientID,
		redirectURI:  r.RedirectURI,
		state:        r.State,
		nonce:        r.Nonce,
		scopes:       slices.Clone([]string(r.Scopes)),
		responseType: r.ResponseType,
		responseMode: r.ResponseMode,
		audience:     oidc.AppendClientIDToAudience(r.ClientID, slices.Clone(s.audience)),
	}
	if r.CodeChallenge != "" {
		ar.codeChallenge = &oidc.CodeChallenge{Challenge: r.CodeChallenge, Method: r.CodeChallengeMethod}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests[ar.id] = ar
	return ar, nil
}

// AuthRequestByID implements op.Storage.
func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok {
		return nil, errors.New("auth request not found")
	}
	return ar, nil
}

// AuthRequestByCode implements op.Storage.
func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[s.codes[code]]
	if !ok {
		return nil, errors.New("code invalid or expired")
	}
	return ar, nil
}

// SaveAuthCode implements op.Storage.
func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest implements op.Storage; it is called once the code is
// exchanged, so a code is used at most once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// ---- tokens ----

// token is an issued access token; JWT access tokens carry its id as jti,
// opaque ones encrypt it.
type token struct {
	id       string
	clientID string
	subject  string
	audience []string
	scopes   []string
	issued   time.Time
	expiry   time.Time
}

// CreateAccessToken implements op.Storage.
func (s *storage) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	var clientID string
	switch r := r.(type) {
	case *authRequest:
		clientID = r.clientID
	case op.TokenExchangeRequest:
		clientID = r.GetClientID()
	}
	now := time.Now()
	t := &token{
		id:       rand.Text(),
		clientID: clientID,
		subject:  r.GetSubject(),
		audience: slices.Clone(r.GetAudience()),
		scopes:   slices.Clone(r.GetScopes()),
		issued:   now,
		expiry:   now.Add(s.lifetime),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[t.id] = t
	return t.id, t.expiry, nil
}

// CreateAccessAndRefreshTokens implements op.Storage. Refresh tokens are
// not issued: no client has the refresh_token grant and token exchange
// only issues access tokens, so the provider never calls it.
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, oidc.ErrUnsupportedGrantType().WithDescription("testidp issues no refresh tokens")
}

// TokenRequestByRefreshToken implements op.Storage (no refresh tokens).
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

// GetRefreshTokenInfo implements op.Storage (no refresh tokens).
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// TerminateSession implements op.Storage: the user's tokens for the client
// are dropped.
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.tokens, id)
		}
	}
	return nil
}

// RevokeToken implements op.Storage (RFC 7009): a revoked token is no
// longer active at introspection and cannot be exchanged.
func (s *storage) RevokeToken(_ context.Context, tokenIDOrToken, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[tokenIDOrToken]
	if !ok {
		return nil
	}
	if t.clientID != clientID {
		return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
	}
	delete(s.tokens, t.id)
	return nil
}

// activeToken returns the token with id if it is still valid.
func (s *storage) activeToken(id string) (*token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[id]
	if !ok || !time.Now().Before(t.expiry) {
		return nil, false
	}
	return t, true
}

// SigningKey implements op.Storage.
func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return &s.key, nil }

// SignatureAlgorithms implements op.Storage.
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.Storage: the keys served at jwks_uri.
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{&s.key}}, nil
}

// ---- claims ----

// user returns a copy of the user with subject sub.
func (s *storage) user(sub string) (User, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[sub]
	if !ok {
		return User{}, false
	}
	return *u, true
}

// accessTokenClaims are the private claims of a JWT access token: the
// user's groups and the granted scopes, space-separated (RFC 9068 §2.2.3;
// zitadel's op does not set "scope" in JWT access tokens itself).
func (s *storage) accessTokenClaims(sub string, scopes []string) map[string]any {
	claims := map[string]any{}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	if u, ok := s.user(sub); ok {
		claims[GroupsClaim] = groupsOf(u)
	}
	return claims
}

// groupsOf is u's groups, never nil (so that the claim is a JSON array).
func groupsOf(u User) []string {
	if u.Groups == nil {
		return []string{}
	}
	return slices.Clone(u.Groups)
}

// GetPrivateClaimsFromRequest implements op.CanGetPrivateClaimsFromRequest:
// the private claims of JWT access tokens (authorization code flow). The
// scope claim lists all granted scopes (restrictedScopes lacks profile,
// email, …).
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, r op.TokenRequest, _ []string) (map[string]any, error) {
	return s.accessTokenClaims(r.GetSubject(), r.GetScopes()), nil
}

// GetPrivateClaimsFromScopes implements op.Storage (unused while
// GetPrivateClaimsFromRequest is implemented).
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, userID, _ string, scopes []string) (map[string]any, error) {
	return s.accessTokenClaims(userID, scopes), nil
}

// setUserinfo fills info for the user sub and scopes: sub, the profile
// scope's preferred_username, and the groups claim.
func (s *storage) setUserinfo(info *oidc.UserInfo, sub string, scopes []string) error {
	u, ok := s.user(sub)
	if !ok {
		return errors.New("user not found")
	}
	info.Subject = u.Subject
	if slices.Contains(scopes, oidc.ScopeProfile) {
		info.PreferredUsername = u.Username
	}
	info.AppendClaims(GroupsClaim, groupsOf(u))
	return nil
}

// SetUserinfoFromScopes implements op.Storage (ID tokens).
func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, scopes []string) error {
	return s.setUserinfo(info, userID, scopes)
}

// SetUserinfoFromRequest implements op.CanSetUserinfoFromRequest (ID
// tokens; SetUserinfoFromScopes already did the work).
func (s *storage) SetUserinfoFromRequest(context.Context, *oidc.UserInfo, op.IDTokenRequest, []string) error {
	return nil
}

// SetUserinfoFromToken implements op.Storage (the userinfo endpoint).
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	t, ok := s.activeToken(tokenID)
	if !ok || t.subject != subject {
		return errors.New("token is invalid or has expired")
	}
	return s.setUserinfo(info, t.subject, t.scopes)
}

// SetIntrospectionFromToken implements op.Storage (RFC 7662): a client
// with the introspection permission learns, of an active token, its
// subject, username, scope, client_id, aud, iss, exp, iat, jti and the
// user's groups. Anything else (unknown, revoked or expired token, or a
// client without the permission) makes the token inactive.
func (s *storage) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	c, ok := s.clients[clientID]
	s.mu.Unlock()
	if !ok || !c.introspect {
		return errors.New("client may not introspect")
	}
	t, ok := s.activeToken(tokenID)
	if !ok || t.subject != subject {
		return errors.New("token is invalid or has expired")
	}
	info := new(oidc.UserInfo)
	if err := s.setUserinfo(info, t.subject, []string{oidc.ScopeProfile}); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = slices.Clone(t.scopes)
	resp.ClientID = t.clientID
	resp.TokenType = oidc.BearerToken
	resp.Audience = slices.Clone(t.audience)
	resp.Issuer = op.IssuerFromContext(ctx)
	resp.Expiration = oidc.FromTime(t.expiry)
	resp.IssuedAt = oidc.FromTime(t.issued)
	resp.NotBefore = oidc.FromTime(t.issued)
	resp.JWTID = t.id
	return nil
}

// GetKeyByIDAndClientID implements op.Storage (JWT profile; no client
// keys are registered).
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("no client keys")
}

// ValidateJWTProfileScopes implements op.Storage (JWT profile is not
// offered).
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grant not supported")
}

// Health implements op.Storage.
func (s *storage) Health(context.Context) error { return nil }

// ---- token exchange (RFC 8693) ----

// ValidateTokenExchangeRequest implements op.TokenExchangeStorage. The
// policy: the client must have the token-exchange grant; the subject token
// must be an access token of this IdP that is still active (op has already
// checked its signature or decrypted it); no actor token; the issued token
// is an access token whose audience is the requested audience (resource
// values are added to it by the token endpoint, see resourceAsAudience),
// limited to Options.ExchangeAudiences when set; its scopes are the
// requested ones this IdP knows, or the subject token's when none is asked
// for.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	s.mu.Lock()
	c, ok := s.clients[r.GetClientID()]
	s.mu.Unlock()
	if !ok || !slices.Contains(c.grantTypes, oidc.GrantTypeTokenExchange) {
		return oidc.ErrUnauthorizedClient().WithDescription("client may not exchange tokens")
	}
	if r.GetExchangeSubjectTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("subject_token_type must be %s", oidc.AccessTokenType)
	}
	if r.GetExchangeActor() != "" || r.GetExchangeActorTokenIDOrToken() != "" {
		return oidc.ErrInvalidRequest().WithDescription("actor tokens are not supported")
	}
	switch r.GetRequestedTokenType() {
	case "":
		r.SetRequestedTokenType(oidc.AccessTokenType)
	case oidc.AccessTokenType:
	default:
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued by token exchange")
	}
	subj, ok := s.activeToken(r.GetExchangeSubjectTokenIDOrToken())
	if !ok || subj.subject != r.GetExchangeSubject() {
		return oidc.ErrInvalidGrant().WithDescription("subject_token is not active")
	}
	if _, ok := s.user(subj.subject); !ok {
		return oidc.ErrInvalidGrant().WithDescription("subject_token's user is unknown")
	}
	aud := r.GetAudience()
	if len(aud) == 0 {
		return oidc.ErrInvalidTarget().WithDescription("an audience or resource is required")
	}
	if len(s.exchangeAudiences) > 0 {
		for _, a := range aud {
			if !slices.Contains(s.exchangeAudiences, a) {
				return oidc.ErrInvalidTarget().WithDescription("audience %q is not allowed", a)
			}
		}
	}
	var scopes []string
	for _, sc := range r.GetScopes() {
		if s.knownScope(sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(r.GetScopes()) == 0 {
		scopes = slices.Clone(subj.scopes)
	}
	r.SetCurrentScopes(scopes)
	return nil
}

// CreateTokenExchangeRequest implements op.TokenExchangeStorage (nothing
// to record).
func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest implements
// op.TokenExchangeStorage: the exchanged JWT carries the same private
// claims as a login's (groups, scope).
func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) (map[string]any, error) {
	return s.accessTokenClaims(r.GetSubject(), r.GetScopes()), nil
}

// SetUserinfoFromTokenExchangeRequest implements op.TokenExchangeStorage
// (ID tokens from an exchange, which the policy above never issues).
func (s *storage) SetUserinfoFromTokenExchangeRequest(_ context.Context, info *oidc.UserInfo, r op.TokenExchangeRequest) error {
	return s.setUserinfo(info, r.GetSubject(), r.GetScopes())
}

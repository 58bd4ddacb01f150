// Package inbound authenticates the clients of `mcphost serve --http` as an
// OAuth 2.1 resource server (the MCP authorization spec; RFC 9068 JWT access
// tokens): the gateway's `gateway { oauth { … } }` block. A Verifier checks
// a bearer token and returns its principal; it has the signature of the
// go-sdk's auth.TokenVerifier, so auth.RequireBearerToken can use it.
//
// A JWT access token is accepted only if
//
//   - its algorithm is an asymmetric one of AllowedAlgorithms (never none,
//     never an HMAC: a public key is not a shared secret);
//   - its header has no crit (RFC 7515 §4.1.11: no extension is understood
//     here, and an empty list is not allowed), nor a duplicate or
//     case-variant member;
//   - its signature verifies with a key of the issuer's JWKS (discovered from
//     the issuer's metadata, or Options.JWKSURL), found by kid; an unknown
//     kid refetches the JWKS, at most once per MinRefresh;
//   - its typ header is an accepted access token type: at+jwt (RFC 9068
//     §2.1, RFC 8725 §3.11) unless Options.AcceptTypes says otherwise, so
//     that an ID token, a DPoP proof or another JWT the issuer signed for
//     the same audience is not taken for an access token; a token accepted
//     under another type must not look like an ID token either (nonce,
//     at_hash, c_hash; Keycloak's typ "ID", Cognito's token_use "id");
//   - iss is the issuer exactly, aud names one of the audiences, exp is in
//     the future and nbf/iat not (with Options.Leeway), and sub is set.
//
// A token that is not a JWS (an opaque token) is refused, unless
// Options.IntrospectionURL is set: then the issuer's RFC 7662 introspection
// endpoint is asked about it (introspect.go), and the same checks apply to
// its answer, with a few of introspection's own.
//
// Every fetch goes through the OAuth SSRF guard (oauthkit.NewGuardedClient):
// https only, no private or loopback address unless AllowLoopback.
package inbound

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcphost/mcphost/internal/rawjson"
	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// allowedAlgorithms are the signature algorithms a token may use.
var allowedAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// AllowedAlgorithms returns the signature algorithms a token may use (a
// copy: changing it changes nothing here).
func AllowedAlgorithms() []jose.SignatureAlgorithm {
	return slices.Clone(allowedAlgorithms)
}

// Access token types (the JWT typ header) Options.AcceptTypes may name,
// compared without case and without an "application/" prefix (RFC 7515
// §4.1.9).
const (
	// TypeAccessToken is RFC 9068's type, the default.
	TypeAccessToken = "at+jwt"
	// TypeJWT is the generic "JWT", which many issuers put on access and
	// ID tokens alike (Microsoft Entra ID, Keycloak, zitadel, Auth0's
	// default profile). A token accepted by it, or by TypeNone, must not
	// look like an ID token and must have a claim only access tokens have
	// (accessTokenMark).
	TypeJWT = "JWT"
	// TypeNone accepts a token without typ (Okta's custom authorization
	// servers). It is a word of the configuration, not a typ value: a typ
	// header "none" is refused.
	TypeNone = "none"
)

// Defaults of Options.
const (
	DefaultLeeway      = 30 * time.Second
	DefaultGroupsClaim = "groups"
	// MinRefresh is the shortest time between two fetches of the JWKS: a
	// flood of tokens with unknown kids costs the issuer one fetch.
	MinRefresh = 30 * time.Second
	// MaxKeyAge is how long a fetched JWKS is used before it is fetched
	// again (rotation without a new kid).
	MaxKeyAge = time.Hour
	// VerifiedCacheTTL is the longest a verified JWT is taken from the
	// cache without being checked again (its exp ends it sooner): a key
	// the issuer withdrew from its JWKS still admits the tokens it signed
	// that were seen in the last VerifiedCacheTTL.
	VerifiedCacheTTL = time.Minute
	// verifiedCacheSize bounds the verified JWTs kept (a few hundred bytes
	// each).
	verifiedCacheSize = 4096
	// FetchTimeout bounds a fetch of the issuer's metadata and JWKS.
	FetchTimeout = 10 * time.Second
)

// ErrConfig classifies a Verifier that cannot work as configured.
var ErrConfig = errors.New("inbound OAuth configuration")

// Options configures a Verifier.
type Options struct {
	// Issuer is the authorization server's issuer identifier. REQUIRED.
	Issuer string
	// Audience lists the accepted aud values. REQUIRED (the gateway's
	// canonical URL by default, set by the caller).
	Audience []string
	// GroupsClaim names the claim holding the principal's groups (a list of
	// strings, or one string). OPTIONAL: DefaultGroupsClaim.
	GroupsClaim string
	// JWKSURL overrides the jwks_uri of the issuer's metadata. OPTIONAL.
	JWKSURL string
	// AllowLoopback permits http:// and loopback addresses for the issuer
	// and the JWKS (tests and local development only).
	AllowLoopback bool
	// Leeway is the clock skew allowed on exp, nbf and iat. OPTIONAL:
	// DefaultLeeway.
	Leeway time.Duration
	// HTTPClient fetches metadata and keys. OPTIONAL: the SSRF-guarded
	// client of oauthkit.
	HTTPClient *http.Client
	// Now is the clock. OPTIONAL: time.Now.
	Now func() time.Time
	// IntrospectionURL is the issuer's RFC 7662 token introspection
	// endpoint. OPTIONAL: when set, a token that is not a JWS is
	// introspected there instead of refused (JWTs still take the JWKS path,
	// so the JWKS is needed only if JWTs come in).
	IntrospectionURL string
	// ClientID and ClientSecret are the gateway's credentials at the
	// introspection endpoint (client_secret_basic). ClientID is REQUIRED
	// with IntrospectionURL.
	ClientID, ClientSecret string
	// AcceptTypes lists the JWT typ values accepted for access tokens:
	// TypeAccessToken, TypeJWT and TypeNone. OPTIONAL: TypeAccessToken
	// only. Other types (dpop+jwt, logout+jwt, an issuer's private ones)
	// are never accepted.
	AcceptTypes []string
}

// normType is typ as compared: lower case, without "application/".
func normType(typ string) string {
	t := strings.ToLower(typ)
	if rest, ok := strings.CutPrefix(t, "application/"); ok && !strings.Contains(rest, "/") {
		return rest
	}
	return t
}

// CheckTypes checks a list of access token types (Options.AcceptTypes) and
// returns it normalized, or an error wrapping ErrConfig that names the
// first type that cannot be accepted.
func CheckTypes(types []string) (map[string]bool, error) {
	set := map[string]bool{}
	if len(types) == 0 {
		types = []string{TypeAccessToken}
	}
	for _, t := range types {
		if strings.EqualFold(t, TypeNone) { // a word of the configuration, not a typ value
			set[TypeNone] = true
			continue
		}
		switch n := normType(t); n {
		case TypeAccessToken, "jwt":
			set[n] = true
		default:
			return nil, fmt.Errorf("%w: %q is not an access token type: accept %s, %s or %s", ErrConfig, t, TypeAccessToken, TypeJWT, TypeNone)
		}
	}
	return set, nil
}

// Principal is who a token speaks for.
type Principal struct {
	Issuer  string    `json:"iss"`
	Subject string    `json:"sub"`
	Groups  []string  `json:"groups,omitempty"`
	Scopes  []string  `json:"scopes,omitempty"`
	Expiry  time.Time `json:"exp"`
}

// ID is the principal's stable identity: issuer and subject.
func (p *Principal) ID() string { return p.Issuer + " " + p.Subject }

// principalKey is the key of the Principal in auth.TokenInfo.Extra.
const principalKey = "mcphost.principal"

// PrincipalOf returns the principal a Verifier put in ti, or nil.
func PrincipalOf(ti *auth.TokenInfo) *Principal {
	if ti == nil {
		return nil
	}
	p, _ := ti.Extra[principalKey].(*Principal)
	return p
}

// Verifier checks bearer tokens. Its methods are safe for concurrent use.
type Verifier struct {
	o      Options
	types  map[string]bool // accepted typ values, normalized (normType)
	client *http.Client
	in     *introspector // nil without Options.IntrospectionURL
	// verified caches the JWTs that passed, by SHA-256, until their exp
	// but at most VerifiedCacheTTL: a request with a token seen before
	// costs a hash, not a signature check.
	verified tokenCache

	mu       sync.Mutex
	jwksURL  string
	keys     *jose.JSONWebKeySet
	fetched  time.Time     // of keys
	lastTry  time.Time     // of the last fetch, successful or not
	fetching chan struct{} // closed when the fetch under way ends
	fetchErr error         // of the last fetch
}

// New returns a Verifier. Nothing is fetched until the first token.
func New(o Options) (*Verifier, error) {
	if o.Issuer == "" {
		return nil, fmt.Errorf("%w: an issuer is required", ErrConfig)
	}
	if len(o.Audience) == 0 {
		return nil, fmt.Errorf("%w: an audience is required", ErrConfig)
	}
	if o.GroupsClaim == "" {
		o.GroupsClaim = DefaultGroupsClaim
	}
	if o.Leeway == 0 {
		o.Leeway = DefaultLeeway
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	types, err := CheckTypes(o.AcceptTypes)
	if err != nil {
		return nil, err
	}
	v := &Verifier{o: o, types: types, client: o.HTTPClient, jwksURL: o.JWKSURL, verified: tokenCache{max: verifiedCacheSize}}
	if v.client == nil {
		v.client = oauthkit.NewGuardedClient(oauthkit.GuardOptions{AllowLoopback: o.AllowLoopback})
	}
	if o.IntrospectionURL != "" {
		in, err := newIntrospector(o, v.client)
		if err != nil {
			return nil, err
		}
		v.in = in
	}
	return v, nil
}

// claims are the claims a token is read for.
type claims struct {
	jwt.Claims
	Scope string    `json:"scope"`
	Scp   scopeList `json:"scp"`
}

// scopeList is the scp claim: an array (Okta) or a space-separated string
// (Microsoft Entra ID).
type scopeList []string

// UnmarshalJSON reads an array of strings or a space-separated string.
func (l *scopeList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = strings.Fields(s)
		return nil
	}
	return json.Unmarshal(b, (*[]string)(l))
}

// Verify checks token and returns its TokenInfo: Scopes, Expiration,
// UserID (the principal's ID, which binds sessions to it) and the
// Principal (PrincipalOf). A token that fails any check is an error
// wrapping auth.ErrInvalidToken that says which check, and nothing of the
// token. With Options.IntrospectionURL, a token that is not a JWS is
// introspected; when the endpoint fails, the error wraps ErrUnavailable
// instead.
// The TokenInfo is shared by the requests that present the same token
// (the cache hands out the one made when it was checked): callers must not
// change it.
func (v *Verifier) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	if v.in != nil && !isJWS(token) {
		return v.introspect(ctx, token)
	}
	sum := sha256.Sum256([]byte(token))
	if ti, ok := v.verified.get(sum, v.o.Now()); ok {
		return ti, nil
	}
	if err := checkHeader(token); err != nil {
		return nil, err
	}
	tok, err := jwt.ParseSigned(token, allowedAlgorithms)
	if err != nil {
		return nil, invalid("not a signed JWT with an allowed algorithm (%s)", algNames())
	}
	if len(tok.Headers) != 1 {
		return nil, invalid("one signature expected")
	}
	h := tok.Headers[0]
	typ, err := v.checkType(h)
	if err != nil {
		return nil, err
	}
	key, err := v.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err
	}
	var c claims
	var extra map[string]any
	if err := tok.Claims(key.Key, &c, &extra); err != nil {
		return nil, invalid("bad signature")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: v.o.Issuer, AnyAudience: v.o.Audience, Time: v.o.Now()}, v.o.Leeway); err != nil {
		return nil, invalid("%s", claimError(err))
	}
	if c.Expiry == nil {
		return nil, invalid("no expiry (exp)")
	}
	if c.Subject == "" {
		return nil, invalid("no subject (sub)")
	}
	if typ != TypeAccessToken {
		if m := idTokenMark(extra); m != "" {
			return nil, invalid("an ID token (%s), not an access token", m)
		}
		if !accessTokenMark(extra) {
			return nil, invalid("no claim of an access token (scope, scp, client_id, or roles with azp or appid), and no typ %s: an ID token?", TypeAccessToken)
		}
	}
	if _, bound := extra["cnf"]; bound {
		// A sender-constrained token (DPoP, mTLS: RFC 9449, 8705)
		// presented as a plain bearer token: its holder is not proven.
		return nil, invalid("sender-constrained (cnf) token presented as a bearer token")
	}
	p := &Principal{Issuer: c.Issuer, Subject: c.Subject, Expiry: c.Expiry.Time(), Groups: stringsOf(extra[v.o.GroupsClaim])}
	p.Scopes = strings.Fields(c.Scope)
	if len(p.Scopes) == 0 {
		p.Scopes = []string(c.Scp)
	}
	now := v.o.Now()
	until := now.Add(VerifiedCacheTTL)
	if p.Expiry.Before(until) {
		until = p.Expiry
	}
	return v.verified.put(sum, p, now, until), nil
}

// checkHeader refuses a JWS header with crit (go-jose accepts an empty
// list, null and b64, none of which a JWT access token may have: RFC 7515
// §4.1.11, RFC 7797 §7) or with a duplicate, case-variant or escaped
// member name, which could be read two ways. A header that is not a JSON
// object passes: jwt.ParseSigned refuses it.
func checkHeader(token string) error {
	seg, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return nil
	}
	ms, err := rawjson.Members(nil, b)
	switch {
	case errors.Is(err, rawjson.ErrDuplicate), errors.Is(err, rawjson.ErrName):
		return invalid("the JWS header has a duplicate, case-variant or escaped member name")
	case err != nil:
		return nil
	}
	if _, ok := rawjson.Find(ms, "crit"); ok {
		return invalid("a crit header (no JWS extension is understood here)")
	}
	return nil
}

// checkType checks the typ header of a token against the accepted types
// and returns it normalized (TypeNone when absent). Its errors name the
// type only when it is a registered one: nothing of the token is quoted.
func (v *Verifier) checkType(h jose.Header) (string, error) {
	raw, ok := h.ExtraHeaders[jose.HeaderType]
	if !ok {
		if v.types[TypeNone] {
			return TypeNone, nil
		}
		return "", invalid("no typ header; access tokens have typ %s (see accept_jwt_types)", TypeAccessToken)
	}
	s, isString := raw.(string)
	if !isString {
		return "", invalid("the typ header is not a string")
	}
	// A typ header "none" is a value like any other, not the absence of
	// one that TypeNone accepts.
	typ := normType(s)
	if typ != TypeNone && v.types[typ] {
		return typ, nil
	}
	switch typ {
	case "none", "jwt", "dpop+jwt", "logout+jwt", "secevent+jwt", "id_token+jwt":
		return "", invalid("typ %s is not an accepted access token type (see accept_jwt_types)", typ)
	}
	return "", invalid("the typ header is not an accepted access token type (see accept_jwt_types)")
}

// idTokenMark names the claim by which a token says it is an ID token (or
// another token that is not an access token), or returns "": a nonce,
// at_hash or c_hash (OpenID Connect Core §2, §3.3.2.11), Keycloak's typ
// claim "ID" or Cognito's token_use "id".
func idTokenMark(claims map[string]any) string {
	for _, c := range []string{"nonce", "at_hash", "c_hash"} {
		if _, ok := claims[c]; ok {
			return c
		}
	}
	if t, _ := claims["typ"].(string); strings.EqualFold(t, "ID") {
		return "typ"
	}
	if u, _ := claims["token_use"].(string); strings.EqualFold(u, "id") {
		return "token_use"
	}
	return ""
}

// accessTokenMark reports whether claims has a claim only access tokens
// have, which a token whose typ does not say it is one (TypeJWT, TypeNone)
// must show: an ID token without nonce, at_hash and c_hash (Entra ID's from
// a code flow without a nonce) has the same aud when one app registration
// serves both. The marks: scope (RFC 9068 §2.2.3, Keycloak, Auth0), scp
// (Okta, Entra ID's delegated tokens), client_id (RFC 9068 §2.2, zitadel),
// and roles together with azp or appid (Entra ID's app-only tokens: its ID
// tokens carry roles too, but neither azp nor appid).
func accessTokenMark(claims map[string]any) bool {
	for _, c := range []string{"scope", "scp", "client_id"} {
		if _, ok := claims[c]; ok {
			return true
		}
	}
	if _, ok := claims["roles"]; ok {
		_, azp := claims["azp"]
		_, appid := claims["appid"]
		return azp || appid
	}
	return false
}

// key returns the JWKS key for kid and alg, fetching the JWKS when it is
// not known yet, is older than MaxKeyAge, or lacks kid — at most once per
// MinRefresh; when a fetch fails, the keys fetched before still serve.
func (v *Verifier) key(ctx context.Context, kid, alg string) (*jose.JSONWebKey, error) {
	for attempt := 0; ; attempt++ {
		v.mu.Lock()
		keys, fetched, lastTry, inflight := v.keys, v.fetched, v.lastTry, v.fetching
		v.mu.Unlock()
		if inflight != nil {
			// Another request is fetching: its keys are judged, not
			// the time of its fetch.
			select {
			case <-inflight:
				attempt--
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the issuer's keys: %w: %w", ErrUnavailable, ctx.Err())
			}
		}
		now := v.o.Now()
		recent := !lastTry.IsZero() && now.Sub(lastTry) < MinRefresh
		if keys != nil {
			if k, ok := pick(keys, kid, alg); ok && (now.Sub(fetched) < MaxKeyAge || attempt > 0 || recent) {
				return k, nil
			}
		}
		if attempt > 0 || recent {
			if keys == nil {
				return nil, fmt.Errorf("the issuer's keys could not be fetched (tried again at most every %s): %w", MinRefresh, ErrUnavailable)
			}
			// (The kid is the client's to choose: it is not quoted.)
			return nil, invalid("no key of the issuer has the token's kid for %s", alg)
		}
		if err := v.refresh(ctx); err != nil {
			if keys != nil {
				if k, ok := pick(keys, kid, alg); ok {
					return k, nil
				}
			}
			return nil, err
		}
	}
}

// pick finds the verification key for kid and alg: by kid, or, without a
// kid, the one signing key of the set that suits alg.
func pick(keys *jose.JSONWebKeySet, kid, alg string) (*jose.JSONWebKey, bool) {
	var cands []jose.JSONWebKey
	if kid != "" {
		cands = keys.Key(kid)
	} else {
		cands = keys.Keys
	}
	var found []jose.JSONWebKey
	for _, k := range cands {
		if (k.Use == "" || k.Use == "sig") && (k.Algorithm == "" || k.Algorithm == alg) && suits(k, alg) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		return nil, false
	}
	return &found[0], true
}

// suits reports whether k's type can verify alg.
func suits(k jose.JSONWebKey, alg string) bool {
	switch {
	case strings.HasPrefix(alg, "RS"), strings.HasPrefix(alg, "PS"):
		return isRSA(k.Key)
	case strings.HasPrefix(alg, "ES"):
		return isEC(k.Key)
	case alg == string(jose.EdDSA):
		return isEd(k.Key)
	}
	return false
}

// refresh fetches the JWKS (one fetch at a time; callers that arrive while
// one is under way wait for it).
func (v *Verifier) refresh(ctx context.Context) error {
	v.mu.Lock()
	ch := v.fetching
	if ch == nil {
		ch = make(chan struct{})
		v.fetching = ch
		// The fetch serves every request waiting for the keys: a
		// requester that goes away does not cancel it (a client that
		// hangs up at once must not spoil the keys for MinRefresh). It
		// ends within FetchTimeout.
		go v.fetch(context.WithoutCancel(ctx), v.jwksURL, ch)
	}
	v.mu.Unlock()
	select {
	case <-ch:
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.fetchErr
	case <-ctx.Done():
		return fmt.Errorf("waiting for the issuer's keys: %w: %w", ErrUnavailable, context.Cause(ctx))
	}
}

// fetch fetches the JWKS (discovering its URL first if need be), keeps the
// keys or the error, and closes ch. It counts as a try once it ends.
func (v *Verifier) fetch(ctx context.Context, jwksURL string, ch chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	err := func() error {
		if jwksURL == "" {
			asm, err := oauthkit.FetchAuthServerMeta(ctx, v.client, v.o.Issuer, oauthkit.MetadataOptions{AllowLoopback: v.o.AllowLoopback})
			if err != nil {
				return fmt.Errorf("discovering the issuer's keys: %v: %w", err, ErrUnavailable)
			}
			if asm.JWKSURI == "" {
				return fmt.Errorf("the issuer's metadata has no jwks_uri: %w", ErrUnavailable)
			}
			jwksURL = asm.JWKSURI
		}
		keys, err := fetchJWKS(ctx, v.client, jwksURL)
		if err != nil {
			return fmt.Errorf("fetching the issuer's keys: %v: %w", err, ErrUnavailable)
		}
		v.mu.Lock()
		v.jwksURL, v.keys, v.fetched = jwksURL, keys, v.o.Now()
		v.mu.Unlock()
		return nil
	}()
	v.mu.Lock()
	v.fetching, v.fetchErr, v.lastTry = nil, err, v.o.Now()
	v.mu.Unlock()
	close(ch)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), auth.ErrInvalidToken)
}

func claimError(err error) string {
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "another issuer (iss)"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "not for this resource (aud)"
	case errors.Is(err, jwt.ErrExpired):
		return "expired (exp)"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "not valid yet (nbf)"
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "issued in the future (iat)"
	}
	return "invalid claims"
}

func algNames() string {
	var names []string
	for _, a := range allowedAlgorithms {
		names = append(names, string(a))
	}
	return strings.Join(names, ", ")
}

// stringsOf reads a claim that is a list of strings or one string.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return nil
		}
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

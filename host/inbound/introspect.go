package inbound

// Token introspection (RFC 7662): the check of an opaque access token, one
// that is not a JWS, by the issuer's introspection endpoint.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/sync/singleflight"

	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// Limits of introspection.
const (
	// IntrospectionTimeout bounds one introspection request, whoever waits
	// for it.
	IntrospectionTimeout = 10 * time.Second
	// IntrospectionCacheTTL is the longest an active introspection result
	// is reused (never past the token's exp): a token revoked at the issuer
	// is still accepted for at most this long.
	IntrospectionCacheTTL = 60 * time.Second

	// introspectionCacheSize bounds the cached results. An entry is about
	// 200 bytes plus the principal's groups and scopes; only active tokens
	// are cached, so filling the cache takes that many valid tokens.
	introspectionCacheSize = 4096
	// maxIntrospections bounds the requests in flight to the endpoint: a
	// flood of distinct tokens queues here instead of at the issuer.
	maxIntrospections = 32
	// maxQueuedIntrospections bounds those waiting for a slot, and
	// slotWait how long one waits.
	maxQueuedIntrospections = 64
	slotWait                = 2 * time.Second
	// maxIntrospectionBytes bounds an introspection response.
	maxIntrospectionBytes = 64 << 10
	// maxOpaqueTokenBytes bounds a token sent to the endpoint.
	maxOpaqueTokenBytes = 16 << 10
)

// ErrUnavailable classifies a token that could not be checked because the
// introspection endpoint failed: it could not be reached or did not answer
// in time, answered with an HTTP status other than 200, or answered with
// something that is not an RFC 7662 response. Such an error never wraps
// auth.ErrInvalidToken (the token may well be good, and a 401 would send
// the client to sign in again): the gateway answers 503. The go-sdk's
// auth.RequireBearerToken alone would answer 500.
var ErrUnavailable = errors.New("the authorization server cannot be asked now")

// introspector is a Verifier's access to the introspection endpoint.
//
// Active results are cached by the SHA-256 of the token (never the token
// itself) for min(exp - now, IntrospectionCacheTTL). Inactive and invalid
// results are not cached: a flood of random tokens would only churn such a
// cache, and caching a refusal would also refuse, for the whole TTL, a token
// an eventually consistent issuer did not know yet a moment ago. What bounds
// the cost of bad tokens instead: concurrent requests with the same token
// share one introspection (singleflight), at most maxIntrospections
// introspections are in flight, and a token that is not RFC 6750 syntax or
// longer than maxOpaqueTokenBytes is refused without one. Rate limiting by
// client address belongs in front of the verifier.
type introspector struct {
	url            string
	user, password string // form-urlencoded client_id and client_secret (RFC 6749 2.3.1)
	client         *http.Client
	slots          chan struct{}
	queued         atomic.Int64 // introspections waiting for a slot
	flights        singleflight.Group
	cache          tokenCache
}

// newIntrospector checks the introspection options of o and returns the
// introspector that uses client (with redirects off and a timeout).
func newIntrospector(o Options, client *http.Client) (*introspector, error) {
	if o.ClientID == "" {
		return nil, fmt.Errorf("%w: a client ID is required for token introspection", ErrConfig)
	}
	u, err := url.Parse(o.IntrospectionURL)
	if err != nil {
		return nil, fmt.Errorf("%w: the introspection URL: %v", ErrConfig, err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: the introspection URL holds credentials; set the client ID and secret instead", ErrConfig)
	}
	if err := oauthkit.CheckOAuthURL(u, o.AllowLoopback); err != nil {
		return nil, fmt.Errorf("%w: the introspection URL: %v", ErrConfig, err)
	}
	// No redirects: an introspection endpoint has no reason to redirect, and
	// following a 307 would replay the token (and, to the same host, the
	// client's credentials) to wherever Location points.
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Timeout <= 0 || c.Timeout > IntrospectionTimeout {
		c.Timeout = IntrospectionTimeout
	}
	return &introspector{
		url:      u.String(),
		user:     url.QueryEscape(o.ClientID),
		password: url.QueryEscape(o.ClientSecret),
		client:   &c,
		slots:    make(chan struct{}, maxIntrospections),
		cache:    tokenCache{max: introspectionCacheSize},
	}, nil
}

// isJWS reports whether token is a JWS in compact serialization: three
// dot-separated parts, the first a base64url JSON object with an alg
// member. Such a token takes the JWT path, also when its algorithm is
// refused there; anything else (an opaque token, a JWE, a PASETO
// "v2.local.…") is introspected.
func isJWS(token string) bool {
	h, rest, ok := strings.Cut(token, ".")
	if !ok || strings.Count(rest, ".") != 1 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return false
	}
	var hdr struct {
		Alg *string `json:"alg"`
	}
	return json.Unmarshal(b, &hdr) == nil && hdr.Alg != nil
}

// isB64Token reports whether s has the syntax of an RFC 6750 bearer
// token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	s = strings.TrimRight(s, "=")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// introspect checks an opaque token at the introspection endpoint (or in
// the cache). Its errors wrap auth.ErrInvalidToken when the token is bad
// and ErrUnavailable when the endpoint failed; neither quotes the token or
// the client secret.
func (v *Verifier) introspect(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if len(token) > maxOpaqueTokenBytes || !isB64Token(token) {
		return nil, invalid("not a bearer token")
	}
	sum := sha256.Sum256([]byte(token))
	if ti, ok := v.in.cache.get(sum, v.o.Now()); ok {
		return ti, nil
	}
	// The request outlives a caller that gives up (others may wait for it),
	// so it keeps ctx's values but not its cancellation; it has its own
	// deadline.
	ch := v.in.flights.DoChan(string(sum[:]), func() (any, error) {
		return v.introspectOnce(context.WithoutCancel(ctx), token, sum)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return tokenInfo(r.Val.(*Principal)), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, context.Cause(ctx))
	}
}

// introspectOnce asks the endpoint about token and caches an active
// result under sum.
func (v *Verifier) introspectOnce(ctx context.Context, token string, sum [sha256.Size]byte) (*Principal, error) {
	ctx, cancel := context.WithTimeout(ctx, IntrospectionTimeout)
	defer cancel()
	// A flood of made-up tokens (each its own flight) must not queue
	// without bound behind the slots, nor keep the real ones waiting long:
	// past maxQueuedIntrospections waiting, or after slotWait, the answer
	// is ErrUnavailable (503, retry) at once.
	if v.in.queued.Add(1) > maxQueuedIntrospections {
		v.in.queued.Add(-1)
		return nil, fmt.Errorf("%w: too many introspections under way", ErrUnavailable)
	}
	wait := time.NewTimer(slotWait)
	select {
	case v.in.slots <- struct{}{}:
		wait.Stop()
		v.in.queued.Add(-1)
		defer func() { <-v.in.slots }()
	case <-wait.C:
		v.in.queued.Add(-1)
		return nil, fmt.Errorf("%w: too many introspections under way", ErrUnavailable)
	case <-ctx.Done():
		wait.Stop()
		v.in.queued.Add(-1)
		return nil, fmt.Errorf("%w: too many introspections under way", ErrUnavailable)
	}
	body, err := v.in.post(ctx, token)
	if err != nil {
		return nil, err
	}
	now := v.o.Now()
	p, err := v.principalFrom(body, now)
	if err != nil {
		return nil, err
	}
	if ttl := min(p.Expiry.Sub(now), IntrospectionCacheTTL); ttl > 0 {
		v.in.cache.put(sum, p, now, now.Add(ttl))
	}
	return p, nil
}

// post sends token to the endpoint (client_secret_basic) and returns the
// body of a 200 response.
func (in *introspector) post(ctx context.Context, token string) ([]byte, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(in.user, in.password)
	resp, err := in.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the message may reach the client: say what failed, not at which URL
		}
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxIntrospectionBytes)) // keep the connection
		if resp.StatusCode == http.StatusUnauthorized {
			return nil, fmt.Errorf("%w: HTTP 401 (check the gateway's client ID and secret)", ErrUnavailable)
		}
		return nil, fmt.Errorf("%w: HTTP %d", ErrUnavailable, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospectionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the response: %v", ErrUnavailable, err)
	}
	if len(body) > maxIntrospectionBytes {
		return nil, fmt.Errorf("%w: the response is over %d bytes", ErrUnavailable, maxIntrospectionBytes)
	}
	return body, nil
}

// introspection holds the members of an RFC 7662 response that are checked.
type introspection struct {
	Scope     string           `json:"scope"`
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	TokenType string           `json:"token_type"` // RFC 7662: "Bearer"
	TokenUse  string           `json:"token_use"`  // Ory Hydra: "access_token" or "refresh_token"
	Typ       string           `json:"typ"`        // Keycloak: "Bearer", "Refresh", "Offline", "ID", …
}

// principalFrom reads an introspection response at time now. A response
// that is not a JSON object with a boolean active member and members of
// the registered types is an error wrapping ErrUnavailable (the issuer is
// at fault); a token that is inactive or fails a check is an error
// wrapping auth.ErrInvalidToken. The checks:
//
//   - active is true;
//   - iss, when present, is the issuer (an endpoint that omits it speaks
//     for the configured issuer);
//   - aud is present and names one of the audiences: a token without aud
//     may be meant for any resource server of the issuer, and accepting it
//     would let a token issued for another service in;
//   - exp is present and not past, nbf and iat not in the future (with
//     Options.Leeway);
//   - sub is present;
//   - the token is an access token: not one the response marks as a
//     refresh or ID token (token_type, token_use, typ — the hint is only a
//     hint), and not sender-constrained (cnf: mTLS or DPoP bound), for no
//     proof of possession is checked here.
func (v *Verifier) principalFrom(body []byte, now time.Time) (*Principal, error) {
	members, err := introspectionMembers(body, v.o.GroupsClaim)
	if err != nil {
		return nil, err
	}
	var active bool
	if err := json.Unmarshal(members["active"], &active); err != nil {
		return nil, fmt.Errorf("%w: the response has no boolean active member", ErrUnavailable)
	}
	if !active {
		return nil, invalid("inactive (revoked, expired or unknown to the issuer)")
	}
	var r introspection
	if err := r.decode(members); err != nil {
		return nil, fmt.Errorf("%w: the response has a member of the wrong type: %v", ErrUnavailable, typeError(err))
	}
	if _, ok := members["iss"]; ok && r.Issuer != v.o.Issuer {
		return nil, invalid("another issuer (iss)")
	}
	if !slices.ContainsFunc(r.Audience, func(a string) bool { return slices.Contains(v.o.Audience, a) }) {
		return nil, invalid("not for this resource (aud)")
	}
	if r.Expiry == nil {
		return nil, invalid("no expiry (exp)")
	}
	exp := r.Expiry.Time()
	if now.After(exp.Add(v.o.Leeway)) {
		return nil, invalid("expired (exp)")
	}
	if r.NotBefore != nil && now.Add(v.o.Leeway).Before(r.NotBefore.Time()) {
		return nil, invalid("not valid yet (nbf)")
	}
	if r.IssuedAt != nil && now.Add(v.o.Leeway).Before(r.IssuedAt.Time()) {
		return nil, invalid("issued in the future (iat)")
	}
	if r.Subject == "" {
		return nil, invalid("no subject (sub)")
	}
	if m := notAccessToken(&r); m != "" {
		return nil, invalid("not an access token (%s)", m)
	}
	if _, ok := members["cnf"]; ok {
		return nil, invalid("sender-constrained (cnf), but presented as a bearer token")
	}
	var groups any
	if raw, ok := members[v.o.GroupsClaim]; ok {
		json.Unmarshal(raw, &groups) // valid JSON: the object decoded
	}
	return &Principal{
		Issuer:  v.o.Issuer,
		Subject: r.Subject,
		Groups:  stringsOf(groups),
		Scopes:  strings.Fields(r.Scope),
		Expiry:  exp,
	}, nil
}

// readMembers are the members of an introspection response that
// principalFrom reads, besides the groups claim.
var readMembers = []string{"active", "scope", "iss", "sub", "aud", "exp", "nbf", "iat", "token_type", "token_use", "typ", "cnf"}

// introspectionMembers reads an introspection response strictly and returns
// its top-level members by name (escapes decoded). Names are matched
// exactly, as RFC 7662 writes them: encoding/json would match "Sub" (or
// "ſub") for sub and let the last of two "active" members win, so one
// answer could be read two ways. Escaped and non-ASCII names are fine
// (System.Text.Json writes "r\u00F4le", PHP "https:\/\/x\/roles"), but
// these refuse the token, with an error wrapping auth.ErrInvalidToken (the
// answer says nothing trustworthy about it):
//
//   - two names equal under Unicode case folding (duplicates, "Sub" next
//     to "sub", "ſub" next to "sub", "\u212A" next to "k");
//   - a name that is read (readMembers, groupsClaim), or a case variant of
//     one, spelled with an escaped letter, digit or '_' ("\u0073ub"): no
//     encoder writes those, a forger would, and a reader with other rules
//     could skip it;
//   - a name with an invalid escape or a lone UTF-16 surrogate.
//
// A body that is not one JSON object in UTF-8 is an error wrapping
// ErrUnavailable.
func introspectionMembers(body []byte, groupsClaim string) (map[string]json.RawMessage, error) {
	notObject := fmt.Errorf("%w: the response is not a JSON object", ErrUnavailable)
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("%w: the response is not UTF-8", ErrUnavailable)
	}
	read := make(map[string]bool, len(readMembers)+1)
	for _, n := range append(readMembers, groupsClaim) {
		read[foldName(n)] = true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, notObject
	}
	members := map[string]json.RawMessage{}
	folded := map[string]bool{}
	for dec.More() {
		start := dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return nil, notObject
		}
		// The name as sent: past the comma and white space before it.
		q := bytes.IndexByte(body[start:], '"')
		if q < 0 {
			return nil, notObject
		}
		name, escapedWord, ok := unescapeName(body[start+int64(q):])
		if !ok || name != t {
			return nil, invalid("the introspection response has a member name that is not valid Unicode")
		}
		f := foldName(name)
		if folded[f] {
			return nil, invalid("the introspection response has a duplicate or case-variant member name")
		}
		folded[f] = true
		if escapedWord && read[f] {
			return nil, invalid("the introspection response spells a member name it is read for with an escape")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notObject
		}
		members[name] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, notObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: the response has data after its JSON object", ErrUnavailable)
	}
	return members, nil
}

// unescapeName decodes the JSON string at the start of b (its opening
// quote) strictly: only the escapes of RFC 8259 §7, and a \u escape of a
// UTF-16 surrogate only as a pair. escapedWord reports an escaped ASCII
// letter, digit or '_'. b must be valid UTF-8.
func unescapeName(b []byte) (name string, escapedWord, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", false, false
	}
	var sb strings.Builder
	for i := 1; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return sb.String(), escapedWord, true
		case c < 0x20:
			return "", false, false
		case c != '\\':
			sb.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return "", false, false
		}
		var r rune
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			r = rune(e)
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			r = hex4(b[i+2:])
			if r < 0 {
				return "", false, false
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
					return "", false, false
				}
				lo := hex4(b[i+8:])
				if lo < 0xDC00 || lo > 0xDFFF {
					return "", false, false
				}
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
			i += 4
		default:
			return "", false, false
		}
		i += 2
		if r < utf8.RuneSelf && (r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			escapedWord = true
		}
		sb.WriteRune(r)
	}
	return "", false, false
}

// hex4 decodes the four hex digits at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, h := range b[:4] {
		switch {
		case '0' <= h && h <= '9':
			h -= '0'
		case 'a' <= h && h <= 'f':
			h -= 'a' - 10
		case 'A' <= h && h <= 'F':
			h -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(h)
	}
	return r
}

// foldName maps name to one representative of its Unicode simple case
// folding class (each rune to the least rune of its orbit), so that two
// names encoding/json would match to one field ("sub", "Sub", "ſub";
// "k", "K", "\u212A") fold to the same string.
func foldName(name string) string {
	var sb strings.Builder
	for _, r := range name {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		sb.WriteRune(least)
	}
	return sb.String()
}

// decode sets r's fields from the members of exactly their names.
func (r *introspection) decode(members map[string]json.RawMessage) error {
	for name, dst := range map[string]any{
		"scope": &r.Scope, "iss": &r.Issuer, "sub": &r.Subject, "aud": &r.Audience,
		"exp": &r.Expiry, "nbf": &r.NotBefore, "iat": &r.IssuedAt,
		"token_type": &r.TokenType, "token_use": &r.TokenUse, "typ": &r.Typ,
	} {
		if raw, ok := members[name]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) && te.Field == "" {
					te.Field = name
				}
				return err
			}
		}
	}
	return nil
}

// notAccessToken names the member by which r says the token is not an
// access token, or returns "".
func notAccessToken(r *introspection) string {
	switch {
	case strings.EqualFold(r.TokenType, "refresh_token"), strings.EqualFold(r.TokenType, "id_token"):
		return "token_type"
	case r.TokenUse != "" && r.TokenUse != "access_token":
		return "token_use"
	case strings.EqualFold(r.Typ, "Refresh"), strings.EqualFold(r.Typ, "Offline"), strings.EqualFold(r.Typ, "ID"):
		return "typ"
	}
	return ""
}

// typeError says which member had the wrong type, without its value.
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return te.Field
	case errors.Is(err, jwt.ErrUnmarshalAudience):
		return "aud"
	case errors.Is(err, jwt.ErrUnmarshalNumericDate):
		return "a date (exp, nbf or iat)"
	}
	return "unknown"
}

// tokenInfo is the TokenInfo of p, as both paths make it. It is shared by
// every request with the same token (the caches hand out the same one):
// callers must not change it or its Principal.
func tokenInfo(p *Principal) *auth.TokenInfo {
	return &auth.TokenInfo{Scopes: p.Scopes, Expiration: p.Expiry, UserID: p.ID(), Extra: map[string]any{principalKey: p}}
}

// tokenCache maps the SHA-256 of a token to its principal until a time. It
// holds at most max entries: when full, the expired entries are dropped
// and, if that frees less than a quarter, arbitrary others (Go's map order
// is random) down to three quarters, so the sweep runs at most once per
// max/4 insertions. An LRU would keep hot tokens better; random eviction
// is enough here, for an evicted token costs one introspection, and keeps
// the dependency list short.
type tokenCache struct {
	max int

	mu sync.Mutex
	m  map[[sha256.Size]byte]cacheEntry
}

type cacheEntry struct {
	ti    *auth.TokenInfo // of the principal, made once
	until time.Time
}

// get returns the TokenInfo cached under k, if it is still fresh at now.
func (c *tokenCache) get(k [sha256.Size]byte, now time.Time) (*auth.TokenInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil, false
	}
	if !now.Before(e.until) {
		delete(c.m, k)
		return nil, false
	}
	return e.ti, true
}

// put caches p's TokenInfo under k from now until until, and returns it.
func (c *tokenCache) put(k [sha256.Size]byte, p *Principal, now, until time.Time) *auth.TokenInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[sha256.Size]byte]cacheEntry)
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		for key, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, key)
			}
		}
		for key := range c.m {
			if len(c.m) <= c.max*3/4 {
				break
			}
			delete(c.m, key)
		}
	}
	ti := tokenInfo(p)
	c.m[k] = cacheEntry{ti: ti, until: until}
	return ti
}

// len returns the number of cached entries.
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

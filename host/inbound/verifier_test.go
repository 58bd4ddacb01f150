package inbound

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// issuer is an authorization server's metadata and JWKS endpoints on
// 127.0.0.1, with keys it signs tokens with. (The verifier's attack cases
// need tokens no real authorization server would issue — forged, expired,
// for another audience —, so the tokens are made here with go-jose.)
type issuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey // public, served
	fetches atomic.Int32
}

func newIssuer(t testing.TB) *issuer {
	t.Helper()
	is := &issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "token_endpoint": is.srv.URL + "/token", "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		is.mu.Lock()
		defer is.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: is.keys})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// addKey publishes the public half of priv under kid.
func (is *issuer) addKey(kid string, priv any, alg jose.SignatureAlgorithm) jose.JSONWebKey {
	k := jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(alg), Use: "sig"}
	is.mu.Lock()
	is.keys = append(is.keys, k.Public())
	is.mu.Unlock()
	return k
}

// sign makes a JWT access token (typ at+jwt) of claims with key.
func sign(t testing.TB, key jose.JSONWebKey, alg jose.SignatureAlgorithm, claims any) string {
	t.Helper()
	return signTyped(t, key, alg, "at+jwt", claims)
}

// signTyped makes a JWT of claims with key and the typ header typ (none if
// typ is nil).
func signTyped(t testing.TB, key jose.JSONWebKey, alg jose.SignatureAlgorithm, typ any, claims any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != nil {
		opts.WithHeader(jose.HeaderType, typ)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// signHeader makes a JWT of claims with key and the extra header members
// h.
func signHeader(t testing.TB, key jose.JSONWebKey, alg jose.SignatureAlgorithm, h map[jose.HeaderKey]any, claims any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for k, v := range h {
		opts.WithHeader(k, v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// rawHeader makes a JWS of claims with exactly the protected header
// header, signed RS256 with key (go-jose would not write a duplicate
// member).
func rawHeader(t testing.TB, key jose.JSONWebKey, header string, claims any) string {
	t.Helper()
	payload, _ := json.Marshal(claims)
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key.Key.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// unsigned makes a token with header h and claims, signed (if mac is set)
// with HMAC-SHA256 under mac.
func unsigned(t *testing.T, h map[string]any, claims any, mac []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	in := enc(h) + "." + enc(claims)
	if mac == nil {
		return in + "."
	}
	m := hmac.New(sha256.New, mac)
	m.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func TestVerify(t *testing.T) {
	is := newIssuer(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rk := is.addKey("r1", rsaKey, jose.RS256)
	ek := is.addKey("e1", ecKey, jose.ES256)
	stranger := jose.JSONWebKey{Key: otherKey, KeyID: "r1", Algorithm: "RS256"}

	now := time.Unix(1_900_000_000, 0)
	const aud = "https://mcp.example.com/mcp"
	v, err := New(Options{Issuer: is.srv.URL, Audience: []string{aud}, AllowLoopback: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	good := func(mod func(m map[string]any)) map[string]any {
		m := map[string]any{"iss": is.srv.URL, "sub": "alice", "aud": aud, "exp": now.Add(time.Hour).Unix(),
			"iat": now.Unix(), "scope": "mcp read", "groups": []string{"eng", "ops"}}
		if mod != nil {
			mod(m)
		}
		return m
	}
	pubPEM, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubPEM})

	tests := []struct {
		name    string
		token   string
		wantErr string // "" for valid
	}{
		{"RS256", sign(t, rk, jose.RS256, good(nil)), ""},
		{"ES256", sign(t, ek, jose.ES256, good(nil)), ""},
		{"expired within the leeway", sign(t, rk, jose.RS256, good(func(m map[string]any) { m["exp"] = now.Add(-10 * time.Second).Unix() })), ""},
		{"audience among several", sign(t, rk, jose.RS256, good(func(m map[string]any) { m["aud"] = []string{"other", aud} })), ""},
		{"expired", sign(t, rk, jose.RS256, good(func(m map[string]any) { m["exp"] = now.Add(-2 * time.Minute).Unix() })), "expired"},
		{"not yet valid", sign(t, rk, jose.RS256, good(func(m map[string]any) { m["nbf"] = now.Add(5 * time.Minute).Unix() })), "not valid yet"},
		{"foreign audience", sign(t, rk, jose.RS256, good(func(m map[string]any) { m["aud"] = "https://other.example.com" })), "aud"},
		{"no audience", sign(t, rk, jose.RS256, good(func(m map[string]any) { delete(m, "aud") })), "aud"},
		{"another issuer", sign(t, rk, jose.RS256, good(func(m map[string]any) { m["iss"] = "https://evil.example.com" })), "iss"},
		{"no expiry", sign(t, rk, jose.RS256, good(func(m map[string]any) { delete(m, "exp") })), "exp"},
		{"no subject", sign(t, rk, jose.RS256, good(func(m map[string]any) { delete(m, "sub") })), "sub"},
		{"signed by a stranger under a known kid", sign(t, stranger, jose.RS256, good(nil)), "bad signature"},
		{"alg none", unsigned(t, map[string]any{"alg": "none", "kid": "r1"}, good(nil), nil), "allowed algorithm"},
		{"HS256 with the public key as the secret", unsigned(t, map[string]any{"alg": "HS256", "kid": "r1"}, good(nil), pemBytes), "allowed algorithm"},
		{"RS256 header on the EC key", unsigned(t, map[string]any{"alg": "RS256", "kid": "e1", "typ": "at+jwt"}, good(nil), nil), "no key"},
		// The token type (issue 33 item 5): access tokens only.
		{"typ application/at+jwt", signTyped(t, rk, jose.RS256, "application/at+jwt", good(nil)), ""},
		{"typ AT+JWT", signTyped(t, rk, jose.RS256, "AT+JWT", good(nil)), ""},
		{"typ JWT", signTyped(t, rk, jose.RS256, "JWT", good(nil)), "typ jwt is not an accepted"},
		{"no typ", signTyped(t, rk, jose.RS256, nil, good(nil)), "no typ header"},
		{"a DPoP proof", signTyped(t, ek, jose.ES256, "dpop+jwt", good(nil)), "typ dpop+jwt"},
		{"a private typ is not quoted", signTyped(t, rk, jose.RS256, "CANARY+jwt", good(nil)), "not an accepted access token type"},
		{"typ not a string", signTyped(t, rk, jose.RS256, 7, good(nil)), "not a string"},
		// The header (issue 33 item 16): crit, duplicates, a kid not quoted.
		{"crit empty", signHeader(t, rk, jose.RS256, map[jose.HeaderKey]any{"typ": "at+jwt", "crit": []string{}}, good(nil)), "crit"},
		{"crit naming an unknown extension", signHeader(t, rk, jose.RS256, map[jose.HeaderKey]any{"typ": "at+jwt", "crit": []string{"exp"}, "exp": 1}, good(nil)), "crit"},
		{"crit b64", signHeader(t, rk, jose.RS256, map[jose.HeaderKey]any{"typ": "at+jwt", "crit": []string{"b64"}, "b64": true}, good(nil)), "crit"},
		{"crit null", rawHeader(t, rk, `{"alg":"RS256","kid":"r1","typ":"at+jwt","crit":null}`, good(nil)), "crit"},
		{"duplicate typ", rawHeader(t, rk, `{"alg":"RS256","kid":"r1","typ":"JWT","typ":"at+jwt"}`, good(nil)), "duplicate"},
		{"case-variant kid", rawHeader(t, rk, `{"alg":"RS256","kid":"r1","typ":"at+jwt","KID":"x"}`, good(nil)), "case-variant"},
		{"an unknown kid is not quoted", signHeader(t, jose.JSONWebKey{Key: rsaKey, KeyID: "CANARY-kid"}, jose.RS256, map[jose.HeaderKey]any{"typ": "at+jwt"}, good(nil)), "no key of the issuer has the token's kid"},
		{"garbage", "not.a.jwt", "allowed algorithm"},
	}
	tampered := sign(t, rk, jose.RS256, good(nil))
	parts := strings.Split(tampered, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = []byte(strings.Replace(string(payload), "alice", "mallo", 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	tests = append(tests, struct {
		name    string
		token   string
		wantErr string
	}{"tampered payload", strings.Join(parts, "."), "bad signature"})

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ti, err := v.Verify(context.Background(), tc.token, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				p := PrincipalOf(ti)
				if p == nil || p.Subject != "alice" || p.Issuer != is.srv.URL || ti.UserID != is.srv.URL+" alice" ||
					strings.Join(p.Groups, ",") != "eng,ops" || strings.Join(ti.Scopes, ",") != "mcp,read" || ti.Expiration.IsZero() {
					t.Errorf("token info %+v, principal %+v", ti, p)
				}
				return
			}
			if err == nil || !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want auth.ErrInvalidToken about %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), tc.token) || strings.Contains(err.Error(), "CANARY") {
				t.Error("the error quotes the token")
			}
		})
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("%d JWKS fetches for one key set, want 1", n)
	}
}

// TestAllowedAlgorithmsIsACopy: a caller changing the list it got changes
// nothing the verifier accepts.
func TestAllowedAlgorithmsIsACopy(t *testing.T) {
	algs := AllowedAlgorithms()
	for i := range algs {
		algs[i] = "HS256"
	}
	if got := AllowedAlgorithms(); slices.Contains(got, "HS256") || len(got) != 10 {
		t.Fatalf("AllowedAlgorithms() = %v after the caller changed its copy", got)
	}
}

// TestAcceptTypes: an operator may accept typ JWT (or none) for an issuer
// that puts it on access tokens; an ID token shaped one is still refused,
// and a type that is not an access token's cannot be configured.
func TestAcceptTypes(t *testing.T) {
	is := newIssuer(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k := is.addKey("k", key, jose.ES256)
	now := time.Unix(1_900_000_000, 0)
	const aud = "https://mcp.example.com/mcp"
	claims := func(extra ...any) map[string]any {
		m := map[string]any{"iss": is.srv.URL, "sub": "alice", "aud": aud, "exp": now.Add(time.Hour).Unix()}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		accept  []string
		typ     any
		claims  map[string]any
		wantErr string
	}{
		{"JWT accepted", []string{"at+jwt", "JWT"}, "JWT", claims("scope", "mcp"), ""},
		{"application/jwt accepted", []string{"at+jwt", "JWT"}, "application/jwt", claims("scope", "mcp"), ""},
		{"at+jwt still accepted", []string{"at+jwt", "JWT"}, "at+jwt", claims(), ""},
		{"no typ still refused", []string{"at+jwt", "JWT"}, nil, claims("scope", "mcp"), "no typ"},
		{"dpop+jwt still refused", []string{"at+jwt", "JWT"}, "dpop+jwt", claims("scope", "mcp"), "dpop+jwt"},
		{"an ID token with a nonce", []string{"JWT"}, "JWT", claims("scope", "mcp", "nonce", "n"), "ID token (nonce)"},
		{"an ID token with at_hash", []string{"JWT"}, "JWT", claims("at_hash", "h", "azp", "client"), "ID token (at_hash)"},
		{"a Keycloak ID token", []string{"JWT"}, "JWT", claims("typ", "ID"), "ID token (typ)"},
		{"a Cognito ID token", []string{"JWT"}, "JWT", claims("token_use", "id"), "ID token (token_use)"},
		{"a Keycloak access token", []string{"JWT"}, "JWT", claims("typ", "Bearer", "azp", "client", "scope", "openid mcp"), ""},
		{"no typ accepted", []string{"none"}, nil, claims("scp", []string{"mcp"}, "cid", "client"), ""},
		{"no typ, ID token shaped", []string{"none"}, nil, claims("scp", []string{"mcp"}, "nonce", "n"), "ID token"},
		{"JWT refused under none", []string{"none"}, "JWT", claims("scope", "mcp"), "typ jwt"},
		// An access token must show it is one when its typ does not
		// (issue 33 review, finding 10).
		{"an Entra ID token from a code flow without a nonce", []string{"JWT"}, "JWT", claims("oid", "o", "tid", "t", "ver", "2.0", "roles", []string{"admin"}), "no claim of an access token"},
		{"no typ and no access token claim", []string{"none"}, nil, claims("azp", "client"), "no claim of an access token"},
		{"an Entra delegated access token", []string{"JWT"}, "JWT", claims("scp", "mcp.read", "azp", "client", "ver", "2.0"), ""},
		{"an Entra app-only access token (v2)", []string{"JWT"}, "JWT", claims("roles", []string{"mcp.all"}, "azp", "client", "ver", "2.0"), ""},
		{"an Entra app-only access token (v1)", []string{"JWT"}, "JWT", claims("roles", []string{"mcp.all"}, "appid", "client", "ver", "1.0"), ""},
		{"a zitadel access token", []string{"JWT"}, "JWT", claims("client_id", "client"), ""},
		{"at+jwt needs no such claim", []string{"at+jwt"}, "at+jwt", claims(), ""},
		// A typ header "none" is not the absence of one (finding 11).
		{"typ none refused under none", []string{"none"}, "none", claims("scope", "mcp"), "typ none is not an accepted"},
		{"typ application/none refused under none", []string{"none"}, "application/none", claims("scope", "mcp"), "typ none is not an accepted"},
		{"typ NONE refused under none and JWT", []string{"none", "JWT"}, "NONE", claims("scope", "mcp"), "typ none is not an accepted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := New(Options{Issuer: is.srv.URL, Audience: []string{aud}, AllowLoopback: true, Now: func() time.Time { return now }, AcceptTypes: tc.accept})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(context.Background(), signTyped(t, k, jose.ES256, tc.typ, tc.claims), nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want auth.ErrInvalidToken about %q", err, tc.wantErr)
			}
		})
	}
	// Entra ID's scp is a space-separated string, Okta's an array.
	v, err := New(Options{Issuer: is.srv.URL, Audience: []string{aud}, AllowLoopback: true, Now: func() time.Time { return now }, AcceptTypes: []string{"JWT"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, scp := range []any{"mcp.read mcp.write", []string{"mcp.read", "mcp.write"}} {
		ti, err := v.Verify(context.Background(), signTyped(t, k, jose.ES256, "JWT", claims("scp", scp, "azp", "client")), nil)
		if err != nil || !slices.Equal(ti.Scopes, []string{"mcp.read", "mcp.write"}) {
			t.Errorf("scp %q: scopes %v, err %v; want mcp.read and mcp.write", scp, ti, err)
		}
	}
	if _, err := New(Options{Issuer: is.srv.URL, Audience: []string{aud}, AcceptTypes: []string{"None", "application/JWT"}}); err != nil {
		t.Errorf("AcceptTypes None and application/JWT: %v", err)
	}
	for _, bad := range [][]string{{"dpop+jwt"}, {"at+jwt", "application/okta-internal-at+jwt"}, {""}, {"logout+jwt"}, {"application/none"}} {
		if _, err := New(Options{Issuer: is.srv.URL, Audience: []string{aud}, AcceptTypes: bad}); !errors.Is(err, ErrConfig) {
			t.Errorf("AcceptTypes %q: err = %v, want ErrConfig", bad, err)
		}
	}
}

// TestKeyRotation: a token signed with a key published after the JWKS was
// fetched is accepted after one refetch; a flood of unknown kids costs at
// most one fetch per MinRefresh; a key set holding a private key is
// refused.
func TestKeyRotation(t *testing.T) {
	is := newIssuer(t)
	k1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	first := is.addKey("k1", k1, jose.ES256)
	now := time.Unix(1_900_000_000, 0)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	v, _ := New(Options{Issuer: is.srv.URL, Audience: []string{"a"}, AllowLoopback: true, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	claims := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": "a", "exp": now.Add(time.Hour).Unix()}
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, first, jose.ES256, claims), nil); err != nil {
		t.Fatal(err)
	}
	k2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	second := is.addKey("k2", k2, jose.ES256)
	clock.Add(int64(MinRefresh + time.Second))
	if _, err := v.Verify(ctx, sign(t, second, jose.ES256, claims), nil); err != nil {
		t.Fatalf("a rotated key: %v", err)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
	// Unknown kids: one fetch at most within MinRefresh.
	ghost, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	gk := jose.JSONWebKey{Key: ghost, KeyID: "ghost", Algorithm: "ES256"}
	for i := 0; i < 50; i++ {
		if _, err := v.Verify(ctx, sign(t, gk, jose.ES256, claims), nil); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("an unknown kid: %v", err)
		}
	}
	if n := is.fetches.Load(); n > 3 {
		t.Errorf("%d fetches for 50 unknown kids, want at most one more", n)
	}
	// A key set with a private key.
	is.mu.Lock()
	is.keys = append(is.keys, jose.JSONWebKey{Key: ghost, KeyID: "leak", Algorithm: "ES256"})
	is.mu.Unlock()
	v2, _ := New(Options{Issuer: is.srv.URL, Audience: []string{"a"}, AllowLoopback: true, Now: func() time.Time { return now }})
	if _, err := v2.Verify(ctx, sign(t, first, jose.ES256, claims), nil); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("a key set with a private key: %v", err)
	}
}

// TestIssuerGuard: without AllowLoopback, an http or loopback issuer is
// never contacted.
func TestIssuerGuard(t *testing.T) {
	is := newIssuer(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := is.addKey("k", k, jose.ES256)
	v, _ := New(Options{Issuer: is.srv.URL, Audience: []string{"a"}})
	claims := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": "a", "exp": time.Now().Add(time.Hour).Unix()}
	if _, err := v.Verify(context.Background(), sign(t, key, jose.ES256, claims), nil); err == nil {
		t.Fatal("a loopback issuer was used")
	}
	if is.fetches.Load() != 0 {
		t.Error("the JWKS of a loopback issuer was fetched")
	}
	if _, err := New(Options{Audience: []string{"a"}}); !errors.Is(err, ErrConfig) {
		t.Errorf("no issuer: %v", err)
	}
}

// TestConcurrentFirstTokens: requests that arrive while the first fetch of
// the issuer's keys is in flight wait for it, rather than being refused
// as if that fetch had failed (found by the end-to-end test: a burst of
// first requests got 401 "keys could not be fetched").
func TestConcurrentFirstTokens(t *testing.T) {
	is := newIssuer(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := is.addKey("k", k, jose.ES256)
	v, _ := New(Options{Issuer: is.srv.URL, Audience: []string{"a"}, AllowLoopback: true})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		claims := map[string]any{"iss": is.srv.URL, "sub": fmt.Sprint("s", i), "aud": "a", "exp": time.Now().Add(time.Hour).Unix()}
		tok := sign(t, key, jose.ES256, claims)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.Verify(context.Background(), tok, nil); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// TestUnavailableIssuer: an issuer whose keys cannot be fetched is
// ErrUnavailable (the gateway answers 503), not a bad token.
func TestUnavailableIssuer(t *testing.T) {
	is := newIssuer(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := is.addKey("k", k, jose.ES256)
	url := is.srv.URL
	is.srv.Close()
	v, _ := New(Options{Issuer: url, Audience: []string{"a"}, AllowLoopback: true})
	tok := sign(t, key, jose.ES256, map[string]any{"iss": url, "sub": "s", "aud": "a", "exp": time.Now().Add(time.Hour).Unix()})
	for range 2 { // the fetch, then the refusal within MinRefresh
		if _, err := v.Verify(context.Background(), tok, nil); !errors.Is(err, ErrUnavailable) || errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("Verify: %v, want ErrUnavailable", err)
		}
	}
}

// TestVerifiedCache: a token seen before is not checked again, but its
// expiry still ends it.
func TestVerifiedCache(t *testing.T) {
	is := newIssuer(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := is.addKey("k", k, jose.ES256)
	now := time.Unix(1_900_000_000, 0)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	v, _ := New(Options{Issuer: is.srv.URL, Audience: []string{"a"}, AllowLoopback: true, Leeway: time.Nanosecond, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	tok := sign(t, key, jose.ES256, map[string]any{"iss": is.srv.URL, "sub": "s", "aud": "a", "exp": now.Add(10 * time.Second).Unix(), "groups": []string{"g"}})
	ti, err := v.Verify(context.Background(), tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := v.Verify(context.Background(), tok, nil)
	if err != nil || again != ti || PrincipalOf(again).Groups[0] != "g" {
		t.Fatalf("cached: %v %v (the same TokenInfo expected)", again, err)
	}
	if v.verified.len() != 1 {
		t.Errorf("%d cached", v.verified.len())
	}
	clock.Add(int64(11 * time.Second))
	if _, err := v.Verify(context.Background(), tok, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("an expired cached token: %v", err)
	}
}

// TestCancelledFetchDoesNotSpoilKeys: a requester that hangs up while the
// keys are fetched neither cancels the fetch nor counts as a failed try
// (found by review: one abandoned request every MinRefresh kept the keys
// from ever being fetched).
func TestCancelledFetchDoesNotSpoilKeys(t *testing.T) {
	is := newIssuer(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := is.addKey("k", k, jose.ES256)
	v, _ := New(Options{Issuer: is.srv.URL, Audience: []string{"a"}, AllowLoopback: true})
	tok := sign(t, key, jose.ES256, map[string]any{"iss": is.srv.URL, "sub": "s", "aud": "a", "exp": time.Now().Add(time.Hour).Unix()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Verify(ctx, tok, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a requester gone at once: %v", err)
	}
	if _, err := v.Verify(context.Background(), tok, nil); err != nil {
		t.Fatalf("the next request: %v", err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

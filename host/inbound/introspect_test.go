package inbound

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// The gateway's credentials at the introspection endpoint: a ':' and a '%'
// in both, which client_secret_basic must form-urlencode (RFC 6749 2.3.1).
const (
	testClientID     = "gw:1%"
	testClientSecret = "s3:cr%t x+y/=é"
)

// An answer of the introspection endpoint: a JSON object (map[string]any),
// an HTTP status, or a raw body.
type (
	status int
	raw    string
)

// endpoint is an RFC 7662 introspection endpoint on 127.0.0.1 answering
// from a table (an unknown token is inactive). It is a stand-in for a real
// authorization server, strict about what the verifier sends; the
// end-to-end test against a real one (zitadel) is written elsewhere.
type endpoint struct {
	srv      *httptest.Server
	requests atomic.Int32
	mu       sync.Mutex
	answers  map[string]any
}

func newEndpoint(t testing.TB) *endpoint {
	t.Helper()
	ep := &endpoint{answers: map[string]any{}}
	ep.srv = httptest.NewServer(http.HandlerFunc(ep.serve))
	t.Cleanup(ep.srv.Close)
	return ep
}

func (ep *endpoint) answer(token string, a any) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.answers[token] = a
}

func (ep *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	ep.requests.Add(1)
	if err := checkIntrospectionRequest(r); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	ep.mu.Lock()
	a, ok := ep.answers[r.PostForm.Get("token")]
	ep.mu.Unlock()
	if !ok {
		a = map[string]any{"active": false}
	}
	switch a := a.(type) {
	case status:
		if a/100 == 3 {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(int(a))
	case raw:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, string(a))
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}
}

// checkIntrospectionRequest checks what RFC 7662 and RFC 6749 2.3.1 ask of
// an introspection request: a form POST of token and the hint, with the
// form-urlencoded client ID and secret as basic credentials.
func checkIntrospectionRequest(r *http.Request) error {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return fmt.Errorf("%s with %q", r.Method, r.Header.Get("Content-Type"))
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	if r.PostForm.Get("token") == "" || r.PostForm.Get("token_type_hint") != "access_token" || len(r.URL.Query()) != 0 {
		return fmt.Errorf("form %v, query %v", r.PostForm, r.URL.Query())
	}
	basic, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Basic ")
	if !ok {
		return errors.New("no basic credentials")
	}
	creds, err := base64.StdEncoding.DecodeString(basic)
	if err != nil {
		return err
	}
	if want := url.QueryEscape(testClientID) + ":" + url.QueryEscape(testClientSecret); string(creds) != want {
		return fmt.Errorf("credentials %q, want %q", creds, want)
	}
	user, pass, _ := r.BasicAuth()
	user, _ = url.QueryUnescape(user)
	pass, _ = url.QueryUnescape(pass)
	if user != testClientID || pass != testClientSecret {
		return fmt.Errorf("credentials decode to %q, %q", user, pass)
	}
	return nil
}

func introspectingVerifier(t testing.TB, introspectionURL string, mod func(*Options)) *Verifier {
	t.Helper()
	o := Options{
		Issuer: "https://as.example.com", Audience: []string{"https://mcp.example.com/mcp"},
		IntrospectionURL: introspectionURL, ClientID: testClientID, ClientSecret: testClientSecret,
		AllowLoopback: true,
	}
	if mod != nil {
		mod(&o)
	}
	v, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIntrospect(t *testing.T) {
	ep := newEndpoint(t)
	now := time.Unix(1_900_000_000, 0)
	const iss, aud = "https://as.example.com", "https://mcp.example.com/mcp"
	v := introspectingVerifier(t, ep.srv.URL+"/introspect", func(o *Options) { o.Now = func() time.Time { return now } })
	active := func(mod func(m map[string]any)) map[string]any {
		m := map[string]any{"active": true, "iss": iss, "sub": "alice", "aud": []string{"project", aud}, "client_id": "agent",
			"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "scope": "mcp read", "groups": []string{"eng", "ops"}, "token_type": "Bearer"}
		if mod != nil {
			mod(m)
		}
		return m
	}
	tests := []struct {
		name            string
		answer          any
		wantErr         string // "" for valid
		wantUnavailable bool   // ErrUnavailable, not auth.ErrInvalidToken
	}{
		{name: "active", answer: active(nil)},
		{name: "aud a string, no iss", answer: active(func(m map[string]any) { m["aud"] = aud; delete(m, "iss") })},
		{name: "expired within the leeway", answer: active(func(m map[string]any) { m["exp"] = now.Add(-10 * time.Second).Unix() })},
		{name: "fractional dates", answer: active(func(m map[string]any) { m["exp"] = float64(now.Add(time.Hour).Unix()) + 0.5 })},
		{name: "inactive", answer: map[string]any{"active": false}, wantErr: "inactive"},
		{name: "inactive with claims", answer: active(func(m map[string]any) { m["active"] = false }), wantErr: "inactive"},
		{name: "foreign audience", answer: active(func(m map[string]any) { m["aud"] = "https://other.example.com" }), wantErr: "aud"},
		{name: "no audience", answer: active(func(m map[string]any) { delete(m, "aud") }), wantErr: "aud"},
		{name: "another issuer", answer: active(func(m map[string]any) { m["iss"] = "https://evil.example.com" }), wantErr: "iss"},
		{name: "expired", answer: active(func(m map[string]any) { m["exp"] = now.Add(-2 * time.Minute).Unix() }), wantErr: "expired"},
		{name: "no expiry", answer: active(func(m map[string]any) { delete(m, "exp") }), wantErr: "exp"},
		{name: "not yet valid", answer: active(func(m map[string]any) { m["nbf"] = now.Add(5 * time.Minute).Unix() }), wantErr: "nbf"},
		{name: "issued in the future", answer: active(func(m map[string]any) { m["iat"] = now.Add(5 * time.Minute).Unix() }), wantErr: "iat"},
		{name: "no subject", answer: active(func(m map[string]any) { delete(m, "sub") }), wantErr: "sub"},
		{name: "empty subject", answer: active(func(m map[string]any) { m["sub"] = "" }), wantErr: "sub"},
		{name: "a refresh token (Hydra)", answer: active(func(m map[string]any) { m["token_use"] = "refresh_token" }), wantErr: "token_use"},
		{name: "a refresh token (Keycloak)", answer: active(func(m map[string]any) { m["typ"] = "Refresh" }), wantErr: "typ"},
		{name: "sender-constrained", answer: active(func(m map[string]any) { m["cnf"] = map[string]any{"jkt": "abc"} }), wantErr: "cnf"},
		{name: "HTTP 500", answer: status(500), wantErr: "HTTP 500", wantUnavailable: true},
		{name: "HTTP 401", answer: status(401), wantErr: "client ID", wantUnavailable: true},
		{name: "a redirect is not followed", answer: status(307), wantErr: "HTTP 307", wantUnavailable: true},
		{name: "not JSON", answer: raw("<html>"), wantErr: "not a JSON object", wantUnavailable: true},
		{name: "JSON null", answer: raw("null"), wantErr: "not a JSON object", wantUnavailable: true},
		{name: "trailing data", answer: raw(`{"active":false}{"active":true}`), wantErr: "after", wantUnavailable: true},
		{name: "no active member", answer: raw(`{"sub":"alice"}`), wantErr: "active", wantUnavailable: true},
		{name: "active a string", answer: active(func(m map[string]any) { m["active"] = "true" }), wantErr: "active", wantUnavailable: true},
		{name: "exp a string", answer: active(func(m map[string]any) { m["exp"] = "tomorrow" }), wantErr: "date", wantUnavailable: true},
		{name: "aud a number", answer: active(func(m map[string]any) { m["aud"] = 7 }), wantErr: "aud", wantUnavailable: true},
		{name: "sub a number", answer: active(func(m map[string]any) { m["sub"] = 7 }), wantErr: "sub", wantUnavailable: true},
		// Strict decoding (issue 33 item 13): one answer, one reading.
		{name: "duplicate active", answer: raw(`{"active":false,"sub":"alice","aud":"https://mcp.example.com/mcp","exp":1900003600,"active":true}`), wantErr: "duplicate"},
		{name: "case-variant sub", answer: raw(`{"active":true,"sub":"alice","aud":"https://mcp.example.com/mcp","exp":1900003600,"Sub":"admin"}`), wantErr: "case-variant"},
		{name: "escaped duplicate", answer: raw(`{"active":true,"sub":"alice","aud":"https://mcp.example.com/mcp","exp":1900003600,"\u0073ub":"admin"}`), wantErr: "duplicate"},
		{name: "Sub alone is not sub", answer: raw(`{"active":true,"Sub":"admin","aud":"https://mcp.example.com/mcp","exp":1900003600}`), wantErr: "sub"},
		{name: "Active alone is not active", answer: raw(`{"Active":true,"sub":"alice","aud":"https://mcp.example.com/mcp","exp":1900003600}`), wantErr: "active", wantUnavailable: true},
		{name: "oversized", answer: active(func(m map[string]any) { m["pad"] = strings.Repeat("x", maxIntrospectionBytes) }), wantErr: "over", wantUnavailable: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := fmt.Sprintf("opaque-%d_token~+/=", i)
			ep.answer(token, tc.answer)
			ti, err := v.Verify(context.Background(), token, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				want := &Principal{Issuer: iss, Subject: "alice", Groups: []string{"eng", "ops"}, Scopes: []string{"mcp", "read"}}
				switch exp := tc.answer.(map[string]any)["exp"].(type) {
				case int64:
					want.Expiry = time.Unix(exp, 0)
				case float64:
					want.Expiry = time.Unix(int64(exp), 0) // NumericDate keeps whole seconds
				}
				if diff := cmp.Diff(want, PrincipalOf(ti)); diff != "" {
					t.Errorf("principal (-want +got):\n%s", diff)
				}
				wantTI := &auth.TokenInfo{Scopes: want.Scopes, Expiration: want.Expiry, UserID: iss + " alice", Extra: map[string]any{principalKey: want}}
				if diff := cmp.Diff(wantTI, ti); diff != "" {
					t.Errorf("token info (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one about %q", err, tc.wantErr)
			}
			if got := errors.Is(err, ErrUnavailable); got != tc.wantUnavailable || errors.Is(err, auth.ErrInvalidToken) == got {
				t.Errorf("err = %v: ErrUnavailable %v, auth.ErrInvalidToken %v; want ErrUnavailable %v and not both",
					err, got, errors.Is(err, auth.ErrInvalidToken), tc.wantUnavailable)
			}
			for _, secret := range []string{token, testClientSecret, url.QueryEscape(testClientSecret)} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error %q quotes %q", err, secret)
				}
			}
		})
	}
}

// TestIntrospectionMemberNames: member names are read with their escapes
// decoded, so that the escaped and non-ASCII names real issuers write
// (System.Text.Json escapes non-ASCII, PHP's json_encode writes "\/") are
// no reason to refuse a token; what could be read two ways still is:
// names equal under Unicode case folding, and a name that is read spelled
// with an escaped letter (issue 33 review, finding 9).
func TestIntrospectionMemberNames(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	const base = `"active":true,"sub":"alice","aud":"https://mcp.example.com/mcp","exp":1900003600`
	tests := []struct {
		name        string
		body        string
		groupsClaim string
		wantGroups  []string
		wantSubject string // "" for "alice"
		wantErr     string // "" to accept
	}{
		{name: "System.Text.Json escapes a non-ASCII name", body: `{` + base + `,"r\u00F4le":"x","\u00E9quipe":["a"]}`},
		{name: "a raw non-ASCII name", body: `{` + base + `,"rôle":"x"}`},
		{name: "PHP escapes the slashes of a URL-named claim", body: `{` + base + `,"https:\/\/x.example\/roles":["eng"]}`},
		{name: "the groups claim named by a URL, slashes escaped", body: `{` + base + `,"https:\/\/x.example\/roles":["eng"]}`, groupsClaim: "https://x.example/roles", wantGroups: []string{"eng"}},
		{name: "the groups claim named in non-ASCII, escaped", body: `{` + base + `,"r\u00F4les":["ops"]}`, groupsClaim: "rôles", wantGroups: []string{"ops"}},
		{name: "escaped quote and backslash in an unread name", body: `{` + base + `,"a\"b\\c":1,"\u0061":2}`},
		{name: "a surrogate pair", body: `{` + base + `,"\uD83D\uDE00":1}`},
		{name: "unread names differing in case only", body: `{` + base + `,"k":1,"K":2}`, wantErr: "case-variant"},
		{name: "Kelvin sign folds to k", body: `{` + base + `,"k":1,"\u212A":2}`, wantErr: "case-variant"},
		{name: "raw Kelvin sign folds to k", body: `{` + base + `,"k":1,"K":2}`, wantErr: "case-variant"},
		{name: "escaped duplicate of sub", body: `{` + base + `,"\u0073ub":"admin"}`, wantErr: "duplicate"},
		{name: "long s folds to sub", body: `{` + base + `,"ſub":"admin"}`, wantErr: "case-variant"},
		{name: "escaped long s folds to sub", body: `{` + base + `,"\u017Fub":"admin"}`, wantErr: "case-variant"},
		{name: "an escaped duplicate of an unread name", body: `{` + base + `,"x":1,"\u0078":2}`, wantErr: "duplicate"},
		{name: "sub spelled with an escape, alone", body: `{"active":true,"\u0073ub":"admin","aud":"https://mcp.example.com/mcp","exp":1900003600}`, wantErr: "escape"},
		{name: "active spelled with an escape", body: `{"act\u0069ve":true,"sub":"alice","aud":"https://mcp.example.com/mcp","exp":1900003600}`, wantErr: "escape"},
		{name: "Sub spelled with an escape", body: `{"active":true,"\u0053ub":"admin","aud":"https://mcp.example.com/mcp","exp":1900003600}`, wantErr: "escape"},
		{name: "scope spelled with an escape", body: `{` + base + `,"sc\u006Fpe":"admin"}`, wantErr: "escape"},
		{name: "token_type with an escaped underscore", body: `{` + base + `,"token\u005Ftype":"refresh_token"}`, wantErr: "escape"},
		{name: "the groups claim with an escaped letter", body: `{` + base + `,"gr\u006Fups":["admin"]}`, wantErr: "escape"},
		{name: "a lone high surrogate", body: `{` + base + `,"\uD800x":1}`, wantErr: "Unicode"},
		{name: "a lone low surrogate", body: `{` + base + `,"\uDC00":1}`, wantErr: "Unicode"},
		{name: "a high surrogate before a non-surrogate", body: `{` + base + `,"\uD800\u0041":1}`, wantErr: "Unicode"},
		{name: "not UTF-8", body: "{" + base + ",\"\xff\":1}", wantErr: "UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := introspectingVerifier(t, "https://as.example.com/introspect", func(o *Options) {
				if tc.groupsClaim != "" {
					o.GroupsClaim = tc.groupsClaim
				}
			})
			p, err := v.principalFrom([]byte(tc.body), now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one about %q", err, tc.wantErr)
				}
				if tc.wantErr != "UTF-8" && !errors.Is(err, auth.ErrInvalidToken) {
					t.Errorf("err = %v, want auth.ErrInvalidToken", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if p.Subject != "alice" || !slices.Equal(p.Groups, tc.wantGroups) {
				t.Errorf("principal %+v, want subject alice and groups %q", p, tc.wantGroups)
			}
		})
	}
}

// TestIntrospectRefusedLocally: what needs no request is refused without
// one; a JWS takes the JWT path even when introspection is configured.
func TestIntrospectRefusedLocally(t *testing.T) {
	ep := newEndpoint(t)
	is := newIssuer(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := is.addKey("k", k, jose.ES256)
	v := introspectingVerifier(t, ep.srv.URL, func(o *Options) { o.Issuer = is.srv.URL })
	claims := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": "https://mcp.example.com/mcp", "exp": time.Now().Add(time.Hour).Unix()}
	if _, err := v.Verify(context.Background(), sign(t, key, jose.ES256, claims), nil); err != nil {
		t.Errorf("a JWT: %v", err)
	}
	for _, token := range []string{
		"eyJhbGciOiJub25lIn0.e30.",    // alg none: a JWS, refused on the JWT path
		"opaque token",                // not RFC 6750 syntax
		"tok\x00en",                   // nor this
		"=",                           // nor this
		strings.Repeat("a", 16<<10+1), // too long
	} {
		if _, err := v.Verify(context.Background(), token, nil); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%.20q: %v, want auth.ErrInvalidToken", token, err)
		}
	}
	if n := ep.requests.Load(); n != 0 {
		t.Errorf("%d introspection requests, want none", n)
	}
	// Opaque tokens with dots are not JWSs.
	for _, token := range []string{"not.a.jwt", "v2.local.abc", "a.b.c.d.e", "e30.e30.e30"} {
		if isJWS(token) {
			t.Errorf("isJWS(%q)", token)
		}
	}
}

func TestIntrospectConfig(t *testing.T) {
	valid := Options{Issuer: "https://as.example.com", Audience: []string{"a"}, IntrospectionURL: "https://as.example.com/introspect", ClientID: "gw"}
	if _, err := New(valid); err != nil {
		t.Fatalf("a valid configuration: %v", err)
	}
	tests := []struct {
		name string
		mod  func(*Options)
	}{
		{"no client ID", func(o *Options) { o.ClientID = "" }},
		{"http", func(o *Options) { o.IntrospectionURL = "http://as.example.com/introspect" }},
		{"a private address", func(o *Options) { o.IntrospectionURL = "https://10.0.0.1/introspect" }},
		{"loopback", func(o *Options) { o.IntrospectionURL = "https://127.0.0.1/introspect" }},
		{"credentials in the URL", func(o *Options) { o.IntrospectionURL = "https://gw:secret@as.example.com/introspect" }},
		{"not a URL", func(o *Options) { o.IntrospectionURL = "https://as.example.com/%zz" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := valid
			tc.mod(&o)
			if _, err := New(o); !errors.Is(err, ErrConfig) {
				t.Errorf("err = %v, want ErrConfig", err)
			}
		})
	}
}

// fakeEndpoint is an introspection endpoint inside a synctest bubble: a
// RoundTripper that answers every request with answer, after release
// is closed when it is not nil.
type fakeEndpoint struct {
	requests atomic.Int32
	release  chan struct{}
	answer   func() map[string]any
}

func (f *fakeEndpoint) RoundTrip(r *http.Request) (*http.Response, error) {
	f.requests.Add(1)
	if err := checkIntrospectionRequest(r); err != nil {
		return nil, err
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	b, _ := json.Marshal(f.answer())
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: r}, nil
}

func fakeVerifier(t *testing.T, f *fakeEndpoint) *Verifier {
	return introspectingVerifier(t, "https://as.example.com/introspect", func(o *Options) {
		o.AllowLoopback = false
		o.HTTPClient = &http.Client{Transport: f}
	})
}

func activeFor(d time.Duration) func() map[string]any {
	return func() map[string]any {
		return map[string]any{"active": true, "sub": "alice", "aud": "https://mcp.example.com/mcp", "exp": time.Now().Add(d).Unix()}
	}
}

// TestIntrospectCache: an active result is reused for
// IntrospectionCacheTTL, or until the token's exp if that is sooner; an
// inactive one is not reused; the cache holds no token.
func TestIntrospectCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEndpoint{answer: activeFor(time.Hour)}
		v := fakeVerifier(t, f)
		ctx := context.Background()
		verify := func(token string, wantRequests int32) {
			t.Helper()
			if _, err := v.Verify(ctx, token, nil); err != nil {
				t.Fatal(err)
			}
			if n := f.requests.Load(); n != wantRequests {
				t.Fatalf("%d requests, want %d", n, wantRequests)
			}
		}
		verify("long-lived", 1)
		verify("long-lived", 1)
		time.Sleep(IntrospectionCacheTTL - time.Second)
		verify("long-lived", 1)
		time.Sleep(time.Second)
		verify("long-lived", 2)

		f.answer = activeFor(10 * time.Second)
		verify("short-lived", 3)
		time.Sleep(9 * time.Second)
		verify("short-lived", 3)
		time.Sleep(time.Second) // at exp: introspected again
		verify("short-lived", 4)

		for _, k := range []string{"long-lived", "short-lived"} {
			if s := fmt.Sprint(v.in.cache.m); strings.Contains(s, k) {
				t.Errorf("the cache holds the token %q: %s", k, s)
			}
		}

		f.answer = func() map[string]any { return map[string]any{"active": false} }
		for range 2 {
			if _, err := v.Verify(ctx, "revoked", nil); !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatal(err)
			}
		}
		if n := f.requests.Load(); n != 6 {
			t.Errorf("%d requests, want 6: an inactive result is not cached", n)
		}
	})
}

// TestIntrospectSingleflight: concurrent requests with one token make one
// introspection, active or not; one whose context ends stops waiting with
// ErrUnavailable while the others get the answer.
func TestIntrospectSingleflight(t *testing.T) {
	for _, answer := range []func() map[string]any{activeFor(time.Hour), func() map[string]any { return map[string]any{"active": false} }} {
		synctest.Test(t, func(t *testing.T) {
			f := &fakeEndpoint{answer: answer, release: make(chan struct{})}
			v := fakeVerifier(t, f)
			const n = 20
			errs := make(chan error, n)
			for range n {
				go func() {
					_, err := v.Verify(context.Background(), "same", nil)
					errs <- err
				}()
			}
			impatient, cancel := context.WithCancel(context.Background())
			go func() {
				_, err := v.Verify(impatient, "same", nil)
				errs <- err
			}()
			synctest.Wait() // all are waiting for the one request
			if got := f.requests.Load(); got != 1 {
				t.Fatalf("%d requests for %d concurrent verifications, want 1", got, n+1)
			}
			cancel()
			if err := <-errs; !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
				t.Errorf("a cancelled verification: %v", err)
			}
			close(f.release)
			for range n {
				err := <-errs
				if active := answer()["active"].(bool); active && err != nil || !active && !errors.Is(err, auth.ErrInvalidToken) {
					t.Errorf("active %v: %v", active, err)
				}
			}
		})
	}
}

// TestIntrospectTimeout: an endpoint that does not answer costs a caller
// IntrospectionTimeout at most, and is ErrUnavailable.
func TestIntrospectTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEndpoint{answer: activeFor(time.Hour), release: make(chan struct{})}
		v := fakeVerifier(t, f)
		start := time.Now()
		_, err := v.Verify(context.Background(), "slow", nil)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
		if d := time.Since(start); d != IntrospectionTimeout {
			t.Errorf("gave up after %v, want %v", d, IntrospectionTimeout)
		}
	})
}

// TestIntrospectUnreachable: a closed endpoint is ErrUnavailable, and the
// error does not name it.
func TestIntrospectUnreachable(t *testing.T) {
	ep := newEndpoint(t)
	v := introspectingVerifier(t, ep.srv.URL+"/introspect", nil)
	ep.srv.Close()
	_, err := v.Verify(context.Background(), "token", nil)
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "/introspect") {
		t.Errorf("the error %q names the endpoint", err)
	}
}

// TestTokenCacheBound: the cache never holds more than its bound, and
// drops expired entries first.
func TestTokenCacheBound(t *testing.T) {
	c := tokenCache{max: 100}
	now := time.Unix(1_900_000_000, 0)
	p := &Principal{Subject: "s"}
	key := func(i int) (k [32]byte) { copy(k[:], fmt.Sprint(i)); return k }
	for i := range 50 {
		c.put(key(i), p, now, now.Add(time.Second)) // expire soon
	}
	for i := 50; i < 100; i++ {
		c.put(key(i), p, now, now.Add(time.Minute))
	}
	later := now.Add(2 * time.Second)
	c.put(key(100), p, later, later.Add(time.Minute))
	if n := c.len(); n != 51 {
		t.Errorf("%d entries, want 51: the 50 expired dropped", n)
	}
	for i := 50; i <= 100; i++ {
		if _, ok := c.get(key(i), later); !ok {
			t.Errorf("entry %d dropped", i)
		}
	}
	for i := 101; i < 1000; i++ {
		c.put(key(i), p, later, later.Add(time.Minute))
		if n := c.len(); n > 100 {
			t.Fatalf("%d entries, over the bound", n)
		}
	}
}

package inbound

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// FuzzVerify: whatever a client sends as a bearer token, Verify returns an
// error wrapping auth.ErrInvalidToken (or accepts a token that really
// verifies), never panics, and fetches nothing beyond the key set it has.
func FuzzVerify(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jk := jose.JSONWebKey{Key: key, KeyID: "k", Algorithm: "ES256", Use: "sig"}
	now := time.Unix(1_900_000_000, 0)
	f.Add(sign(f, jk, jose.ES256, map[string]any{"iss": "https://as.example", "sub": "s", "aud": "a", "exp": now.Add(time.Hour).Unix()}))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		v, _ := New(Options{Issuer: "https://as.example", Audience: []string{"a"}, Now: func() time.Time { return now }, JWKSURL: "https://as.example/jwks"})
		v.keys = &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jk.Public()}}
		v.fetched, v.lastTry = now, now // no fetch: an unknown kid is refused at once
		ti, err := v.Verify(context.Background(), token, nil)
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("an error that is not auth.ErrInvalidToken: %v", err)
			}
			return
		}
		if p := PrincipalOf(ti); p == nil || p.Subject == "" || p.Issuer != "https://as.example" {
			t.Fatalf("accepted %q as %+v", token, ti)
		}
	})
}

// FuzzIntrospectionResponse: whatever the introspection endpoint answers,
// the verdict is an error wrapping exactly one of auth.ErrInvalidToken and
// ErrUnavailable, or a principal that passed every check; never a panic.
func FuzzIntrospectionResponse(f *testing.F) {
	now := time.Unix(1_900_000_000, 0)
	f.Add([]byte(`{"active":true,"iss":"https://as.example","sub":"alice","aud":["p","a"],"exp":1900003600,"scope":"mcp read","groups":["eng"]}`))
	f.Add([]byte(`{"active":true,"sub":"alice","aud":"a","exp":1900000000.5,"nbf":1899999999,"iat":1e9,"groups":"ops"}`))
	f.Add([]byte(`{"active":false}`))
	f.Add([]byte(`{"active":"true"}`))
	f.Add([]byte(`{"active":true,"sub":"s","aud":"a","exp":1e300}`))
	f.Add([]byte(`{"active":true,"sub":"s","aud":"a","exp":1900003600,"cnf":{"jkt":"x"}}`))
	f.Add([]byte(`{"active":true,"active":false}`))
	f.Add([]byte(`{"active":false,"sub":"s","aud":"a","exp":1900003600,"active":true}`))
	f.Add([]byte(`{"active":true,"sub":"alice","aud":"a","exp":1900003600,"Sub":"admin"}`))
	f.Add([]byte(`{"active":true,"\u0073ub":"s","aud":"a","exp":1900003600,"ſub":"x"}`))
	f.Add([]byte(`{"active":true,"sub":"s","aud":"a","exp":1900003600,"r\u00F4le":1,"https:\/\/x\/roles":["a"],"\u212A":1,"k":2}`))
	f.Add([]byte(`{"active":true,"sub":"s","aud":"a","exp":1900003600,"\uD800":1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	v, err := New(Options{Issuer: "https://as.example", Audience: []string{"a"}, IntrospectionURL: "https://as.example/introspect", ClientID: "gw"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := v.principalFrom(body, now)
		if err != nil {
			if errors.Is(err, auth.ErrInvalidToken) == errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want exactly one of auth.ErrInvalidToken and ErrUnavailable", err)
			}
			return
		}
		if p.Subject == "" || p.Issuer != "https://as.example" || now.After(p.Expiry.Add(DefaultLeeway)) {
			t.Fatalf("accepted %q as %+v", body, p)
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil || m["active"] != true {
			t.Fatalf("accepted %q, which is not active", body)
		}
		names := topLevelNames(t, body)
		for i, a := range names {
			for _, b := range names[:i] {
				if strings.EqualFold(a, b) {
					t.Fatalf("accepted %q, with members %q and %q", body, b, a)
				}
			}
		}
	})
}

// topLevelNames returns the decoded names of the members of the JSON
// object body, as encoding/json reads them.
func topLevelNames(t *testing.T, body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for dec.More() {
		n, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

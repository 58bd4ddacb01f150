package inbound

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
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

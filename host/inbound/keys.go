package inbound

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/go-jose/go-jose/v4"
)

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

// fetchJWKS fetches and parses a JWKS, keeping the public keys of its
// valid entries (a set that also holds private keys is refused: it is a
// configuration error at the issuer that must not be papered over).
func fetchJWKS(ctx context.Context, client *http.Client, url string) (*jose.JSONWebKeySet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("the key set is over %d bytes", maxJWKSBytes)
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("not a JWK set: %v", err)
	}
	set := &jose.JSONWebKeySet{}
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil || !k.Valid() {
			continue // a key of a type or curve this build does not know
		}
		if !k.IsPublic() {
			return nil, fmt.Errorf("the key set holds a private key (kid %q)", k.KeyID)
		}
		set.Keys = append(set.Keys, k)
	}
	if len(set.Keys) == 0 {
		return nil, fmt.Errorf("the key set has no usable key")
	}
	return set, nil
}

func isRSA(k any) bool { _, ok := k.(*rsa.PublicKey); return ok }
func isEC(k any) bool  { _, ok := k.(*ecdsa.PublicKey); return ok }
func isEd(k any) bool  { _, ok := k.(ed25519.PublicKey); return ok }

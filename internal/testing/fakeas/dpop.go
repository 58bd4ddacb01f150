package fakeas

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"

	"github.com/golang-jwt/jwt/v5"
)

// checkProof verifies an RFC 9449 DPoP proof for a request (method and URL
// without query) and, if accessToken is set, its ath. It returns the
// proof's nonce claim and the key's RFC 7638 thumbprint (jkt); seen
// collects jtis to detect replays.
func checkProof(proof, method, htu, accessToken string, seen map[string]bool) (nonce, jkt string, err error) {
	if proof == "" {
		return "", "", errors.New("no DPoP proof")
	}
	var x, y string
	t, err := jwt.Parse(proof, func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, errors.New("typ is not dpop+jwt")
		}
		jwk, _ := t.Header["jwk"].(map[string]any)
		if jwk == nil || jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk["d"] != nil {
			return nil, errors.New("jwk is not a public P-256 key")
		}
		x, _ = jwk["x"].(string)
		y, _ = jwk["y"].(string)
		xb, err1 := base64.RawURLEncoding.DecodeString(x)
		yb, err2 := base64.RawURLEncoding.DecodeString(y)
		if err1 != nil || err2 != nil {
			return nil, errors.New("bad jwk coordinates")
		}
		return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(xb), Y: new(big.Int).SetBytes(yb)}, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuedAt())
	if err != nil {
		return "", "", fmt.Errorf("invalid DPoP proof: %w", err)
	}
	c := t.Claims.(jwt.MapClaims)
	jti, _ := c["jti"].(string)
	switch {
	case jti == "" || seen[jti]:
		return "", "", errors.New("missing or replayed jti")
	case c["htm"] != method:
		return "", "", fmt.Errorf("htm %v, want %s", c["htm"], method)
	case c["htu"] != htu:
		return "", "", fmt.Errorf("htu %v, want %s", c["htu"], htu)
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", "", errors.New("ath does not match the access token")
		}
	}
	seen[jti] = true
	nonce, _ = c["nonce"].(string)
	sum := sha256.Sum256(fmt.Appendf(nil, `{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, x, y))
	return nonce, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

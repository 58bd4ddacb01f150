package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DPoP (RFC 9449, SEP-1932): when an authorization server advertises ES256
// in dpop_signing_alg_values_supported, mcphost binds the server's tokens
// to a per-server P-256 key. Every token request (code, refresh, client
// credentials, JWT bearer) carries a DPoP proof; the access token is then
// presented as "Authorization: DPoP <token>" with a fresh proof (and ath)
// on every request to the MCP server. A use_dpop_nonce answer from either
// server is retried once with the nonce it supplied. The key is kept with
// the tokens in the store (owner-only), since the tokens are worthless
// without it. Neither the go-sdk (whose transport always sends "Bearer")
// nor x/oauth2 implements DPoP, so it is done here, at the HTTP level.

// dpopKey is a server's DPoP key and the nonces its servers handed out.
type dpopKey struct {
	key *ecdsa.PrivateKey
	jwk map[string]string

	mu     sync.Mutex
	nonces map[string]string // origin -> last DPoP-Nonce
}

func newDPoPKey() (*dpopKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return wrapDPoPKey(k)
}

func wrapDPoPKey(k *ecdsa.PrivateKey) (*dpopKey, error) {
	pub, err := k.PublicKey.Bytes() // uncompressed point: 0x04 || X || Y
	if err != nil || len(pub) != 65 {
		return nil, errors.New("DPoP key: not a P-256 key")
	}
	b64 := base64.RawURLEncoding.EncodeToString
	return &dpopKey{key: k, nonces: map[string]string{},
		jwk: map[string]string{"kty": "EC", "crv": "P-256", "x": b64(pub[1:33]), "y": b64(pub[33:])}}, nil
}

// parseDPoPKey reads a key saved by pem.
func parseDPoPKey(s string) (*dpopKey, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("DPoP key: no PEM block")
	}
	k, err := x509.ParseECPrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	return wrapDPoPKey(k)
}

// pem returns the private key for the store.
func (d *dpopKey) pem() string {
	der, _ := x509.MarshalECPrivateKey(d.key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// htu is a request's URL without query and fragment (RFC 9449 §4.2).
func htu(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment, v.RawFragment, v.User = "", "", "", nil
	return v.String()
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// proof returns a fresh DPoP proof for a request; accessToken, if set,
// is bound by ath.
func (d *dpopKey) proof(method string, u *url.URL, accessToken string) (string, error) {
	jti := make([]byte, 16)
	rand.Read(jti)
	claims := jwt.MapClaims{
		"jti": base64.RawURLEncoding.EncodeToString(jti),
		"htm": method,
		"htu": htu(u),
		"iat": time.Now().Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	d.mu.Lock()
	if n := d.nonces[origin(u)]; n != "" {
		claims["nonce"] = n
	}
	d.mu.Unlock()
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	t.Header["jwk"] = d.jwk
	return t.SignedString(d.key)
}

// noteNonce keeps a DPoP-Nonce a server sent; it reports whether the nonce
// is new.
func (d *dpopKey) noteNonce(u *url.URL, resp *http.Response) bool {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nonces[origin(u)] == n {
		return false
	}
	d.nonces[origin(u)] = n
	return true
}

// dpopKeyFor returns the handler's DPoP key, creating one if create.
func (h *Handler) dpopKeyFor(create bool) (*dpopKey, error) {
	h.dpopMu.Lock()
	defer h.dpopMu.Unlock()
	if h.dpop == nil && create {
		k, err := newDPoPKey()
		if err != nil {
			return nil, err
		}
		h.dpop = k
	}
	return h.dpop, nil
}

// noteDPoPEndpoint records that tokenURL's server wants DPoP-bound tokens.
func (h *Handler) noteDPoPEndpoint(tokenURL string) {
	h.dpopMu.Lock()
	defer h.dpopMu.Unlock()
	if !slices.Contains(h.dpopEndpoints, tokenURL) {
		h.dpopEndpoints = append(h.dpopEndpoints, tokenURL)
	}
}

func (h *Handler) isDPoPEndpoint(u *url.URL) bool {
	h.dpopMu.Lock()
	defer h.dpopMu.Unlock()
	s := htu(u)
	return slices.ContainsFunc(h.dpopEndpoints, func(e string) bool {
		eu, err := url.Parse(e)
		return err == nil && htu(eu) == s
	})
}

// dpopFetchTransport sits under every OAuth fetch of a handler. It learns
// from authorization server metadata which token endpoints take DPoP, and
// adds a proof to each request to them, retrying once on use_dpop_nonce.
type dpopFetchTransport struct {
	base http.RoundTripper
	h    *Handler
}

func (t *dpopFetchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && t.h.isDPoPEndpoint(req.URL) {
		return t.withProof(req, "")
	}
	resp, err := t.base.RoundTrip(req)
	b, ok := wellKnownJSON(req, resp, err)
	if !ok {
		return resp, err
	}
	var m struct {
		TokenEndpoint string   `json:"token_endpoint"`
		DPoPAlgs      []string `json:"dpop_signing_alg_values_supported"`
	}
	if json.Unmarshal(b, &m) == nil && m.TokenEndpoint != "" && slices.Contains(m.DPoPAlgs, "ES256") {
		t.h.noteDPoPEndpoint(m.TokenEndpoint)
	}
	return resp, nil
}

// withProof sends req with a DPoP proof (binding accessToken if set), and
// once more with the server's nonce if it answers use_dpop_nonce.
func (t *dpopFetchTransport) withProof(req *http.Request, accessToken string) (*http.Response, error) {
	return sendWithProof(t.base, t.h, req, accessToken, func(resp *http.Response) bool {
		if resp.StatusCode != http.StatusBadRequest {
			return false
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var e struct {
			Error string `json:"error"`
		}
		return json.Unmarshal(b, &e) == nil && e.Error == "use_dpop_nonce"
	})
}

// sendWithProof sends req with a fresh proof; if wantsNonce says the
// answer asks for a (new) nonce the server supplied, it sends once more.
func sendWithProof(base http.RoundTripper, h *Handler, req *http.Request, accessToken string, wantsNonce func(*http.Response) bool) (*http.Response, error) {
	key, err := h.dpopKeyFor(true)
	if err != nil {
		return nil, err
	}
	send := func() (*http.Response, error) {
		p, err := key.proof(req.Method, req.URL, accessToken)
		if err != nil {
			return nil, fmt.Errorf("DPoP proof: %w", err)
		}
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			if r.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		r.Header.Set("DPoP", p)
		if accessToken != "" {
			r.Header.Set("Authorization", "DPoP "+accessToken)
		}
		return base.RoundTrip(r)
	}
	resp, err := send()
	if err != nil {
		return nil, err
	}
	fresh := key.noteNonce(req.URL, resp)
	if !fresh || (req.Body != nil && req.GetBody == nil) || !wantsNonce(resp) {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return send()
}

// ResourceTransport wraps the transport of requests to the MCP server: a
// DPoP-bound access token is sent as "Authorization: DPoP" with a fresh
// proof, and a 401
// use_dpop_nonce is retried once with the server's nonce. Other requests
// pass unchanged.
func (h *Handler) ResourceTransport(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// The go-sdk's streamable transport writes "Bearer"; the sse path
		// (oauth2.Token.SetAuthHeader) already writes "DPoP".
		authz := req.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(authz, "Bearer ")
		if !ok {
			tok, ok = strings.CutPrefix(authz, "DPoP ")
		}
		if !ok || !h.isDPoPToken(tok) {
			return base.RoundTrip(req)
		}
		if req.Body != nil && req.GetBody == nil {
			b, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(b))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		}
		return sendWithProof(base, h, req, tok, func(resp *http.Response) bool {
			return resp.StatusCode == http.StatusUnauthorized && strings.Contains(resp.Header.Get("WWW-Authenticate"), "use_dpop_nonce")
		})
	})
}

// isDPoPToken reports whether tok is the handler's current access token
// and DPoP-bound.
func (h *Handler) isDPoPToken(tok string) bool {
	h.mu.Lock()
	src := h.src
	h.mu.Unlock()
	if src == nil {
		return false
	}
	r := src.snapshot()
	return r.Token != nil && r.Token.AccessToken == tok && strings.EqualFold(r.Token.TokenType, "DPoP")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

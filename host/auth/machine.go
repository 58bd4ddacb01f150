package auth

import (
	"cmp"
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/sdk/oauthkit"
)

const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// ErrNoSubjectToken is the failure of a token exchange with no gateway user
// (the server's own connection of a token_exchange server): there is no
// token to exchange.
var ErrNoSubjectToken = errors.New("the token_exchange grant exchanges a gateway user's token, and this request has no gateway user (it is used through `mcphost serve --http` with gateway { oauth })")

// authorizeMachine runs a grant that needs no user: client credentials
// (client_secret_basic/post or private_key_jwt, SEP-1046) or the RFC 7523
// JWT-bearer grant with a workload identity token (SEP-1933). The go-sdk's
// extauth.ClientCredentialsHandler supports neither private_key_jwt nor the
// resource parameter, so the token request is made here, after the same
// discovery the go-sdk performs (using its oauthex functions).
func (h *Handler) authorizeMachine(ctx context.Context, req *http.Request, challenges []oauthex.Challenge, stepUp bool) error {
	prm, asm, err := h.discover(ctx, req.URL.String(), challenges)
	if err != nil {
		return &FlowError{Server: h.cfg.Server, Err: err}
	}
	scopes := h.o.Scopes
	if c := oauthkit.ChallengeParam(challenges, "scope"); c != "" && (len(scopes) == 0 || stepUp) {
		scopes = strings.Fields(c)
	} else if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if stepUp {
		if r := h.Record(); r != nil {
			scopes = union(r.Scopes, scopes)
		}
	}
	form := url.Values{"resource": {prm.Resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	ca := oauthkit.ClientAuth{ClientID: h.o.ClientID, ClientSecret: h.o.ClientSecret, Style: oauthkit.TokenAuthStyle(asm.TokenEndpointAuthMethodsSupported)}
	switch h.o.Grant {
	case config.GrantClientCredentials:
		form.Set("grant_type", "client_credentials")
		if h.o.PrivateKeyFile != "" || h.o.PrivateKey != "" {
			signer, err := h.assertionSigner(asm)
			if err != nil {
				return err
			}
			ca.Assertion = signer
		}
	case config.GrantJWTBearer:
		form.Set("grant_type", grantTypeJWTBearer)
	case config.GrantTokenExchange:
		if err := h.exchangeForm(form, prm, asm, &ca); err != nil {
			return &FlowError{Server: h.cfg.Server, Err: err}
		}
	}
	regrant := func(ctx context.Context) (*oauth2.Token, error) {
		f := oauthkit.CloneValues(form)
		switch h.o.Grant {
		case config.GrantJWTBearer:
			a, err := h.workloadAssertion()
			if err != nil {
				return nil, err
			}
			f.Set("assertion", a)
		case config.GrantTokenExchange:
			// The user's newest token: the one the exchange began with may
			// have expired since.
			tok, _ := h.cfg.SubjectToken()
			if tok == "" {
				return nil, ErrNoSubjectToken
			}
			f.Set("subject_token", tok)
		}
		t, err := oauthkit.PostToken(ctx, h.client, asm.TokenEndpoint, f, ca)
		if err == nil && h.o.Grant == config.GrantTokenExchange {
			err = checkIssuedType(t)
		}
		return t, err
	}
	// In a store several processes share (the gateway's replicas), the
	// token is shared too, and renewed under its lease: one grant per
	// expiry, whichever replica finds it expiring. (Not a token exchange's,
	// which is a user's, made from the inbound token at hand.)
	_, leased := h.cfg.Store.(Leaser)
	shared := leased && h.o.Grant != config.GrantTokenExchange
	if shared && !stepUp {
		if src := h.storedMachine(asm.TokenEndpoint); src != nil {
			src.regrant = regrant
			h.mu.Lock()
			h.src = src
			h.mu.Unlock()
			h.log.Debug("using the token another process obtained", "grant", h.o.Grant)
			return nil
		}
	}
	tok, err := regrant(ctx)
	if err != nil {
		// Surfaced as is: no retry, no switch to another grant (SEP-1933).
		return &FlowError{Server: h.cfg.Server, Err: fmt.Errorf("%s grant: %w", h.o.Grant, err)}
	}
	r := &Record{
		Server: h.cfg.Server, Grant: h.o.Grant, Issuer: asm.Issuer, Resource: prm.Resource,
		ClientID: h.o.ClientID, TokenURL: asm.TokenEndpoint, RevocationURL: asm.RevocationEndpoint,
		Scopes: oauthkit.ScopesOf(tok), Token: tok,
	}
	if r.Scopes == nil {
		r.Scopes = scopes
	}
	// Machine tokens are re-obtained rather than stored: no secret-derived
	// token is written to disk that the configuration cannot recreate. A
	// shared store (sealed at rest) keeps them, for the other replicas.
	src, err := h.install(r, shared)
	if shared && isStoreError(err) {
		// The shared store is unreachable: the token serves this process
		// anyway (the other replicas get their own), rather than being
		// thrown away and granted again on every request. It stays a
		// shared store's token: its renewal reads the store again, and
		// saves the new one there once the store is back (renewLocked).
		h.log.Warn("saving the token in the shared token store failed: it is kept in this process only until its renewal", "server", h.cfg.Server, "grant", h.o.Grant, "error", err)
		src, err = h.use(r, true), nil
	}
	if err != nil {
		return &FlowError{Server: h.cfg.Server, Err: err}
	}
	src.mu.Lock()
	src.regrant = regrant
	src.mu.Unlock()
	return nil
}

// storedMachine returns a token source for a usable token of this
// handler's machine grant at tokenURL that another process stored, or nil.
// A DPoP-bound token's key is installed with it, as stored does. Its
// regrant is the caller's to set.
func (h *Handler) storedMachine(tokenURL string) *tokenSource {
	r, err := h.cfg.Store.Load(h.cfg.StoreKey)
	if err != nil || r.Token == nil || r.Grant != h.o.Grant || r.ClientID != h.o.ClientID || r.TokenURL != tokenURL || !usable(r.Token) {
		return nil
	}
	if cur := h.Record(); cur != nil && cur.Token != nil && cur.Token.AccessToken == r.Token.AccessToken {
		return nil // the one just refused
	}
	if err := h.useStoredDPoPKey(r); err != nil {
		h.log.Warn("stored DPoP key unusable; granting a new token", "server", h.cfg.Server, "error", err)
		return nil
	}
	return &tokenSource{h: h, rec: r, persist: true}
}

// RFC 8693 token types.
const (
	grantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	tokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
)

// exchangeForm fills the RFC 8693 token exchange request for the gateway
// user's token (the subject token is set per request). The go-sdk's
// oauthex.ExchangeToken is made for SEP-990's ID-JAG (it requires an
// id_token subject and authenticates the client in the form only), so the
// request is made here, with the client authentication the AS supports
// (client_secret_basic/post or private_key_jwt).
//
// The user's token goes only to the authorization server that issued it
// (the discovered one must be that issuer) or to the one of
// auth_server_metadata_url: a server naming another authorization server in
// its metadata cannot have the users' tokens sent to it.
func (h *Handler) exchangeForm(form url.Values, prm *oauthex.ProtectedResourceMetadata, asm *oauthex.AuthServerMeta, ca *oauthkit.ClientAuth) error {
	if h.cfg.SubjectToken == nil {
		return ErrNoSubjectToken
	}
	tok, issuer := h.cfg.SubjectToken()
	if tok == "" {
		return ErrNoSubjectToken
	}
	if h.o.AuthServerMetadataURL == "" && strings.TrimSuffix(asm.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		return fmt.Errorf("the server's authorization server %s did not issue the gateway user's token (its issuer is %s): the token is exchanged only at its own issuer, or at auth_server_metadata_url", asm.Issuer, issuer)
	}
	form.Set("grant_type", grantTypeTokenExchange)
	form.Set("subject_token_type", tokenTypeAccessToken)
	form.Set("requested_token_type", tokenTypeAccessToken)
	form.Set("audience", cmp.Or(h.o.Audience, prm.Resource))
	if h.o.PrivateKeyFile != "" || h.o.PrivateKey != "" {
		signer, err := h.assertionSigner(asm)
		if err != nil {
			return err
		}
		ca.Assertion = signer
	}
	return nil
}

// checkIssuedType refuses an exchange's answer that is not an access token
// (RFC 8693 issued_token_type): an ID-JAG or an ID token is no bearer
// credential for the server.
func checkIssuedType(t *oauth2.Token) error {
	it, _ := t.Extra("issued_token_type").(string)
	switch it {
	case "", tokenTypeAccessToken, tokenTypeJWT:
		return nil
	}
	return fmt.Errorf("the token exchange issued a %s, not an access token", it)
}

// discover finds and validates the protected-resource and authorization
// server metadata for a machine grant (no PKCE requirement).
func (h *Handler) discover(ctx context.Context, reqURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	return h.discoverWith(ctx, reqURL, challenges, oauthkit.MetadataOptions{AllowLoopback: h.o.AllowLoopback})
}

// discoverWith finds the protected-resource metadata and the authorization
// server metadata the way the MCP authorization spec orders it: the
// challenge's resource_metadata, then the path-based and root well-knowns;
// the AS metadata by RFC 8414 / OpenID path insertion, with an exact issuer
// match (oauthkit.DiscoverWith). auth_server_metadata_url replaces AS
// discovery (its issuer is the one the URL was built from).
func (h *Handler) discoverWith(ctx context.Context, reqURL string, challenges []oauthex.Challenge, opts oauthkit.MetadataOptions) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	if h.o.AuthServerMetadataURL != "" {
		asm, err := oauthkit.FetchAuthServerMetaAt(ctx, h.client, h.o.AuthServerMetadataURL, issuerFromMetadataURL(h.o.AuthServerMetadataURL), opts)
		if err != nil {
			return nil, nil, fmt.Errorf("auth_server_metadata_url: %w", err)
		}
		return &oauthex.ProtectedResourceMetadata{Resource: h.cfg.ServerURL, AuthorizationServers: []string{asm.Issuer}}, asm, nil
	}
	return oauthkit.DiscoverWith(ctx, h.client, reqURL, challenges, opts)
}

// assertionSigner returns a function making a fresh RFC 7523 client
// assertion (private_key_jwt) for each token request: iss and sub the
// client ID, aud the issuer, a unique jti, five minutes of validity.
func (h *Handler) assertionSigner(asm *oauthex.AuthServerMeta) (func(string) (string, error), error) {
	pemText := []byte(h.o.PrivateKey)
	if h.o.PrivateKeyFile != "" {
		b, err := os.ReadFile(h.o.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s: private_key_file: %w", h.cfg.Server, err)
		}
		pemText = b
	}
	key, method, err := parsePrivateKey(pemText, h.o.SigningAlgorithm)
	if err != nil {
		return nil, fmt.Errorf("%s: private key: %w", h.cfg.Server, err)
	}
	audience := asm.Issuer
	return func(string) (string, error) {
		now := time.Now()
		claims := jwt.RegisteredClaims{
			Issuer: h.o.ClientID, Subject: h.o.ClientID, Audience: jwt.ClaimStrings{audience},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(5 * time.Minute)),
			ID: rand.Text(),
		}
		return jwt.NewWithClaims(method, claims).SignedString(key)
	}, nil
}

// parsePrivateKey reads a PEM private key (PKCS#8, PKCS#1 or SEC 1) and
// the JWS algorithm to sign with (alg, or ES256/RS256 by key type).
func parsePrivateKey(pemText []byte, alg string) (crypto.Signer, jwt.SigningMethod, error) {
	if k, err := jwt.ParseECPrivateKeyFromPEM(pemText); err == nil {
		if alg == "" {
			alg = map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[k.Curve.Params().BitSize]
		}
		m := jwt.GetSigningMethod(alg)
		if m == nil || !strings.HasPrefix(alg, "ES") {
			return nil, nil, fmt.Errorf("an EC key cannot sign %s", alg)
		}
		return k, m, nil
	}
	if k, err := jwt.ParseRSAPrivateKeyFromPEM(pemText); err == nil {
		if alg == "" {
			alg = "RS256"
		}
		m := jwt.GetSigningMethod(alg)
		if m == nil || !(strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")) {
			return nil, nil, fmt.Errorf("an RSA key cannot sign %s", alg)
		}
		return k, m, nil
	}
	return nil, nil, fmt.Errorf("not a PEM-encoded EC or RSA private key")
}

// workloadAssertion returns the workload identity JWT, re-read from
// assertion_file on each use so that a platform can rotate it.
func (h *Handler) workloadAssertion() (string, error) {
	if h.o.AssertionFile == "" {
		return h.o.Assertion, nil
	}
	b, err := os.ReadFile(h.o.AssertionFile)
	if err != nil {
		return "", fmt.Errorf("%s: assertion_file: %w", h.cfg.Server, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// IsMachineGrant reports an oauth block whose grant needs no login (client
// credentials, JWT bearer, token exchange): its tokens are obtained on
// demand whenever the server is connected, kept in memory only, and never
// need a login.
func IsMachineGrant(o *config.OAuth) bool {
	return o != nil && (o.Grant == config.GrantClientCredentials || o.Grant == config.GrantJWTBearer || o.Grant == config.GrantTokenExchange)
}

// isMachineGrant reports whether grant needs no user (authorizeMachine).
func isMachineGrant(grant string) bool {
	switch grant {
	case config.GrantClientCredentials, config.GrantJWTBearer, config.GrantTokenExchange:
		return true
	}
	return false
}

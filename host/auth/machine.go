package auth

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/host/config"
)

const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// authorizeMachine runs a grant that needs no user: client credentials
// (client_secret_basic/post or private_key_jwt, SEP-1046) or the RFC 7523
// JWT-bearer grant with a workload identity token (SEP-1933). The go-sdk's
// extauth.ClientCredentialsHandler supports neither private_key_jwt nor the
// resource parameter, so the token request is made here, after the same
// discovery the go-sdk performs (using its oauthex functions).
func (h *Handler) authorizeMachine(ctx context.Context, req *http.Request, challenges []oauthex.Challenge, stepUp bool) error {
	prm, asm, err := h.discover(ctx, req.URL.String(), challenges)
	if err != nil {
		return fmt.Errorf("%s: %w", h.cfg.Server, err)
	}
	scopes := h.o.Scopes
	if c := challengeParam(challenges, "scope"); c != "" && (len(scopes) == 0 || stepUp) {
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
	ca := clientAuth{ClientID: h.o.ClientID, ClientSecret: h.o.ClientSecret, Style: tokenAuthStyle(asm.TokenEndpointAuthMethodsSupported)}
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
	}
	regrant := func(ctx context.Context) (*oauth2.Token, error) {
		f := cloneValues(form)
		if h.o.Grant == config.GrantJWTBearer {
			a, err := h.workloadAssertion()
			if err != nil {
				return nil, err
			}
			f.Set("assertion", a)
		}
		return postToken(ctx, h.client, asm.TokenEndpoint, f, ca)
	}
	tok, err := regrant(ctx)
	if err != nil {
		// Surfaced as is: no retry, no switch to another grant (SEP-1933).
		return fmt.Errorf("%s: %s grant failed: %w", h.cfg.Server, h.o.Grant, err)
	}
	r := &Record{
		Server: h.cfg.Server, Grant: h.o.Grant, Issuer: asm.Issuer, Resource: prm.Resource,
		ClientID: h.o.ClientID, TokenURL: asm.TokenEndpoint, RevocationURL: asm.RevocationEndpoint,
		Scopes: scopesOf(tok), Token: tok,
	}
	if r.Scopes == nil {
		r.Scopes = scopes
	}
	// Machine tokens are re-obtained rather than stored: no secret-derived
	// token is written to disk that the configuration cannot recreate.
	src, _ := h.install(r, false)
	src.mu.Lock()
	src.regrant = regrant
	src.mu.Unlock()
	return nil
}

// discover finds the protected-resource metadata and the authorization
// server metadata the way the MCP authorization spec orders it: the
// challenge's resource_metadata, then the path-based and root well-knowns;
// the AS metadata by RFC 8414 / OpenID path insertion, with issuer binding
// and the PKCE check (oauthex.GetAuthServerMeta). auth_server_metadata_url
// replaces AS discovery.
func (h *Handler) discover(ctx context.Context, reqURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	if h.o.AuthServerMetadataURL != "" {
		asm, err := oauthex.GetAuthServerMeta(ctx, h.o.AuthServerMetadataURL, issuerFromMetadataURL(h.o.AuthServerMetadataURL), h.client)
		if err != nil || asm == nil {
			return nil, nil, fmt.Errorf("auth_server_metadata_url %s: %v", h.o.AuthServerMetadataURL, err)
		}
		return &oauthex.ProtectedResourceMetadata{Resource: reqURL, AuthorizationServers: []string{asm.Issuer}}, asm, nil
	}
	return Discover(ctx, h.client, reqURL, challenges)
}

// Discover finds the protected-resource metadata of the server at reqURL
// (from the 401's resource_metadata, then the path-based and root
// well-knowns, falling back to the server's origin as its authorization
// server) and the metadata of its first authorization server, through
// client (a guarded client, see NewGuardedClient).
func Discover(ctx context.Context, client *http.Client, reqURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	var prm *oauthex.ProtectedResourceMetadata
	for _, u := range prmURLs(challengeParam(challenges, "resource_metadata"), reqURL) {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, u[0], u[1], client)
		if err == nil && p != nil {
			prm = p
			break
		}
	}
	if prm == nil {
		// 2025-03-26 fallback: the server's origin is the authorization server.
		u, err := url.Parse(reqURL)
		if err != nil {
			return nil, nil, err
		}
		u.Path, u.RawQuery = "", ""
		prm = &oauthex.ProtectedResourceMetadata{Resource: reqURL, AuthorizationServers: []string{u.String()}}
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, nil, fmt.Errorf("protected resource metadata names no authorization server")
	}
	asm, err := FetchAuthServerMetadata(ctx, client, prm.AuthorizationServers[0])
	if err != nil {
		return nil, nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		as := prm.AuthorizationServers[0]
		asm = &oauthex.AuthServerMeta{Issuer: as, TokenEndpoint: strings.TrimSuffix(as, "/") + "/token"}
	}
	return prm, asm, nil
}

// prmURLs lists where protected-resource metadata may be, each with the
// resource it must name (RFC 9728 §3.3).
func prmURLs(fromChallenge, resource string) [][2]string {
	var out [][2]string
	if fromChallenge != "" {
		out = append(out, [2]string{fromChallenge, resource})
	}
	ru, err := url.Parse(resource)
	if err != nil {
		return out
	}
	mu := *ru
	mu.RawQuery = ""
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	out = append(out, [2]string{mu.String(), resource})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawQuery = "", ""
	return append(out, [2]string{mu.String(), root.String()})
}

// tokenAuthStyle picks the client authentication the AS supports,
// preferring client_secret_basic (RFC 6749's default) then _post.
func tokenAuthStyle(supported []string) oauth2.AuthStyle {
	if len(supported) == 0 || slices.Contains(supported, "client_secret_basic") {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
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

// FetchAuthServerMetadata fetches an authorization server's RFC 8414 or
// OpenID metadata from the well-known URLs the MCP specification lists for
// issuer (path insertion, then path appending), checking that the document
// names the same issuer. It returns nil, nil if none is found.
//
// Unlike the go-sdk's auth.GetAuthServerMetadata it does not insist on
// code_challenge_methods_supported: PKCE protects the authorization-code
// flow, which the grants using this (client credentials, JWT bearer, token
// exchange) never run, and IdPs and JWT-bearer-only servers that do not
// list it are valid. The authorization-code flow keeps the go-sdk's check.
func FetchAuthServerMetadata(ctx context.Context, client *http.Client, issuer string) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("invalid issuer %q", issuer)
	}
	var urls []string
	p := strings.Trim(u.Path, "/")
	for _, wk := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		v := *u
		v.RawQuery, v.Fragment = "", ""
		v.Path = wk
		if p != "" {
			v.Path += "/" + p
		}
		urls = append(urls, v.String())
	}
	if p != "" {
		v := *u
		v.RawQuery, v.Fragment = "", ""
		v.Path = "/" + p + "/.well-known/openid-configuration"
		urls = append(urls, v.String())
	}
	for _, mu := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mu, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata %s: %w", redactURL(mu), err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			continue
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("authorization server metadata %s: HTTP %d", redactURL(mu), resp.StatusCode)
		}
		var asm oauthex.AuthServerMeta
		if err := json.Unmarshal(body, &asm); err != nil {
			return nil, fmt.Errorf("authorization server metadata %s: %w", redactURL(mu), err)
		}
		if strings.TrimSuffix(asm.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("authorization server metadata %s names issuer %q, not %q", redactURL(mu), asm.Issuer, issuer)
		}
		if asm.TokenEndpoint == "" {
			return nil, fmt.Errorf("authorization server metadata %s has no token_endpoint", redactURL(mu))
		}
		// Endpoints are fetched through the guarded client, which checks
		// every URL (https, no internal addresses) when it is used.
		return &asm, nil
	}
	return nil, nil
}

// TokenGrant sends one token request (form carries grant_type and the
// grant's parameters) as the client clientID, authenticated with
// clientSecret the way asm advertises (client_secret_basic unless only
// client_secret_post is listed; a public client sends client_id only).
// Errors are *oauth2.RetrieveError for OAuth error responses; response
// bodies never appear in them beyond the RFC 6749 error fields.
func TokenGrant(ctx context.Context, client *http.Client, asm *oauthex.AuthServerMeta, form url.Values, clientID, clientSecret string) (*oauth2.Token, error) {
	return postToken(ctx, client, asm.TokenEndpoint, form, clientAuth{ClientID: clientID, ClientSecret: clientSecret, Style: tokenAuthStyle(asm.TokenEndpointAuthMethodsSupported)})
}

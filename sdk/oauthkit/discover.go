package oauthkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Discover finds the protected-resource metadata of the server at reqURL
// (from the 401's resource_metadata, then the path-based and root
// well-knowns, falling back to the server's origin as its authorization
// server) and the metadata of its first authorization server, through
// client (a guarded client, see NewGuardedClient).
func Discover(ctx context.Context, client *http.Client, reqURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	var prm *oauthex.ProtectedResourceMetadata
	for _, u := range prmURLs(ChallengeParam(challenges, "resource_metadata"), reqURL) {
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

// TokenAuthStyle picks the client authentication the AS supports,
// preferring client_secret_basic (RFC 6749's default) then _post.
func TokenAuthStyle(supported []string) oauth2.AuthStyle {
	if len(supported) == 0 || slices.Contains(supported, "client_secret_basic") {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
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
			return nil, fmt.Errorf("authorization server metadata %s: %w", RedactURL(mu), err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			continue
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("authorization server metadata %s: HTTP %d", RedactURL(mu), resp.StatusCode)
		}
		var asm oauthex.AuthServerMeta
		if err := json.Unmarshal(body, &asm); err != nil {
			return nil, fmt.Errorf("authorization server metadata %s: %w", RedactURL(mu), err)
		}
		if strings.TrimSuffix(asm.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("authorization server metadata %s names issuer %q, not %q", RedactURL(mu), asm.Issuer, issuer)
		}
		if asm.TokenEndpoint == "" {
			return nil, fmt.Errorf("authorization server metadata %s has no token_endpoint", RedactURL(mu))
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
	return PostToken(ctx, client, asm.TokenEndpoint, form, ClientAuth{ClientID: clientID, ClientSecret: clientSecret, Style: TokenAuthStyle(asm.TokenEndpointAuthMethodsSupported)})
}

// ChallengeParam returns a parameter of the first Bearer or DPoP challenge
// that has it.
func ChallengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" || c.Scheme == "dpop" {
			if v := c.Params[name]; v != "" {
				return v
			}
		}
	}
	return ""
}

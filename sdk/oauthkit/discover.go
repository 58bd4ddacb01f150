package oauthkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Discover finds the protected-resource metadata of the server at reqURL
// and the metadata of its first authorization server, through client (a
// guarded client, see NewGuardedClient), validated for grants without an
// authorization request (no PKCE requirement). It is DiscoverWith with
// loopback URLs accepted in documents; the guarded client still checks
// every URL when it is used.
func Discover(ctx context.Context, client *http.Client, reqURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	return DiscoverWith(ctx, client, reqURL, challenges, MetadataOptions{AllowLoopback: true})
}

// DiscoverWith finds the protected-resource metadata of the server at
// reqURL (from the 401's resource_metadata, then the path-based and root
// well-knowns, falling back to the server's origin as its authorization
// server when none answers) and the metadata of its first authorization
// server (FetchAuthServerMeta: exact issuer, PKCE S256 with
// opts.RequirePKCE). Without authorization server metadata it fails with
// ErrNoAuthServerMetadata rather than guess endpoints; when a
// protected-resource document could not be used either, the error says why.
func DiscoverWith(ctx context.Context, client *http.Client, reqURL string, challenges []oauthex.Challenge, opts MetadataOptions) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	var (
		prm     *oauthex.ProtectedResourceMetadata
		prmErrs []error
	)
	for _, u := range prmURLs(ChallengeParam(challenges, "resource_metadata"), reqURL) {
		p, err := FetchProtectedResourceMetadata(ctx, client, u[0], u[1], opts)
		if err != nil {
			prmErrs = append(prmErrs, err)
			continue
		}
		if p != nil {
			prm = p
			break
		}
	}
	if prm == nil {
		// 2025-03-26 fallback: the server's origin is the authorization server.
		u, err := url.Parse(reqURL)
		if err != nil || u.Host == "" {
			return nil, nil, fmt.Errorf("%w: server URL %s", ErrInvalidMetadata, quote(RedactURL(reqURL)))
		}
		u.Path, u.RawPath, u.RawQuery, u.Fragment = "", "", "", ""
		prm = &oauthex.ProtectedResourceMetadata{Resource: reqURL, AuthorizationServers: []string{u.String()}}
	}
	asm, err := FetchAuthServerMeta(ctx, client, prm.AuthorizationServers[0], opts)
	if err != nil {
		if len(prmErrs) > 0 {
			err = fmt.Errorf("%w (and no protected resource metadata was usable: %w)", err, errors.Join(prmErrs...))
		}
		return nil, nil, err
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
// issuer, checking that the document names exactly the same issuer. It
// returns nil, nil if none is found.
//
// Unlike the go-sdk's auth.GetAuthServerMetadata it does not insist on
// code_challenge_methods_supported: PKCE protects the authorization-code
// flow, which the grants using this (client credentials, JWT bearer, token
// exchange) never run, and IdPs and JWT-bearer-only servers that do not
// list it are valid. The authorization-code flow uses FetchAuthServerMeta
// with RequirePKCE. URLs in the document may be loopback; the guarded
// client checks each endpoint again when it is used.
func FetchAuthServerMetadata(ctx context.Context, client *http.Client, issuer string) (*oauthex.AuthServerMeta, error) {
	asm, err := FetchAuthServerMeta(ctx, client, issuer, MetadataOptions{AllowLoopback: true})
	if errors.Is(err, ErrNoAuthServerMetadata) {
		return nil, nil
	}
	return asm, err
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

// MaxChallengeBytes bounds the WWW-Authenticate values ParseChallenges reads.
const MaxChallengeBytes = 8 << 10

// ErrChallengeTooLarge is returned by ParseChallenges for values over
// MaxChallengeBytes.
var ErrChallengeTooLarge = errors.New("WWW-Authenticate is too large")

// ParseChallenges parses a response's WWW-Authenticate values with the
// go-sdk's oauthex.ParseWWWAuthenticate, once their total size is known to
// be at most MaxChallengeBytes: that parser takes time quadratic in the
// number of commas, and a server may send megabytes of header.
func ParseChallenges(values []string) ([]oauthex.Challenge, error) {
	n := 0
	for _, v := range values {
		n += len(v)
	}
	if n > MaxChallengeBytes {
		return nil, fmt.Errorf("%w (%d bytes)", ErrChallengeTooLarge, n)
	}
	return oauthex.ParseWWWAuthenticate(values)
}

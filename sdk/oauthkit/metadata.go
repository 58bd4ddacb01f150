package oauthkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Errors classifying a failed discovery. They are wrapped with context
// (which URL, which issuer); test them with errors.Is. A fetch the SSRF
// guard refused wraps ErrBlockedAddress.
var (
	// ErrNoAuthServerMetadata: none of the authorization server's
	// well-known metadata URLs answered. The 2025-03-26 fallback to
	// default endpoints (/authorize, /token) is not used: without metadata
	// nothing says the server supports PKCE, or who issued it.
	ErrNoAuthServerMetadata = errors.New("no authorization server metadata found")
	// ErrIssuerMismatch: the metadata's issuer is not exactly the issuer its
	// URL was built from (RFC 8414 §3.3; no trailing-slash or case leeway).
	ErrIssuerMismatch = errors.New("authorization server metadata names another issuer")
	// ErrPKCENotSupported: the metadata does not list S256 in
	// code_challenge_methods_supported (required for the
	// authorization-code flow).
	ErrPKCENotSupported = errors.New("the authorization server does not advertise PKCE S256")
	// ErrResourceMismatch: protected-resource metadata names another
	// resource than the one it was fetched for (RFC 9728 §3.3).
	ErrResourceMismatch = errors.New("protected resource metadata names another resource")
	// ErrInvalidMetadata: a metadata document is malformed (not one JSON
	// object, duplicate or case-variant keys, a required field missing, an
	// unsafe or non-https URL).
	ErrInvalidMetadata = errors.New("invalid OAuth metadata")
)

// MetadataOptions says how strictly metadata is validated.
type MetadataOptions struct {
	// AllowLoopback accepts http:// and loopback URLs (local development and
	// tests), as GuardOptions.AllowLoopback does for fetches.
	AllowLoopback bool
	// RequirePKCE requires S256 in code_challenge_methods_supported and an
	// authorization_endpoint: set for the authorization-code flow.
	RequirePKCE bool
}

// maxMetadataBytes bounds a metadata document.
const maxMetadataBytes = 1 << 20

// quote shows a value taken from a document in a message: quoted, escaped
// and short, so that a message never carries a document's body.
func quote(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// ParseAuthServerMeta decodes and validates RFC 8414 authorization server
// metadata fetched for issuer: one JSON object without duplicate or
// case-variant keys; issuer identical to the issuer the URL was built from
// (RFC 8414 §3.3); a token_endpoint; every URL field http(s), and every
// endpoint the client calls https to a public address (or loopback when
// allowed). With opts.RequirePKCE it also needs an authorization_endpoint
// and S256 in code_challenge_methods_supported.
//
// The go-sdk's oauthex.GetAuthServerMeta compares issuers ignoring a
// trailing slash, accepts any listed PKCE method and hides the cause of a
// failure behind a plain string; mcphost validates here instead so that
// the issuer binding is exact and failures can be told apart with errors.Is.
func ParseAuthServerMeta(body []byte, issuer string, opts MetadataOptions) (*oauthex.AuthServerMeta, error) {
	if err := checkStrictObject(body, asmFields); err != nil {
		return nil, err
	}
	var asm oauthex.AuthServerMeta
	if err := json.Unmarshal(body, &asm); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
	}
	if asm.Issuer != issuer {
		return nil, fmt.Errorf("%w: the document names %s, but was fetched for %s", ErrIssuerMismatch, quote(asm.Issuer), quote(issuer))
	}
	if err := checkIssuerURL(asm.Issuer, opts.AllowLoopback); err != nil {
		return nil, err
	}
	if asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("%w: no token_endpoint", ErrInvalidMetadata)
	}
	// Endpoints the client sends requests to: https, public addresses.
	for _, f := range []struct{ name, value string }{
		{"token_endpoint", asm.TokenEndpoint},
		{"registration_endpoint", asm.RegistrationEndpoint},
		{"revocation_endpoint", asm.RevocationEndpoint},
		{"introspection_endpoint", asm.IntrospectionEndpoint},
		{"jwks_uri", asm.JWKSURI},
	} {
		if err := checkEndpoint(f.name, f.value, opts.AllowLoopback); err != nil {
			return nil, err
		}
	}
	// Documentation links are never fetched; they only must not be
	// javascript:, data: or the like.
	for _, f := range []struct{ name, value string }{
		{"service_documentation", asm.ServiceDocumentation},
		{"op_policy_uri", asm.OpPolicyURI},
		{"op_tos_uri", asm.OpTOSURI},
	} {
		if err := checkWebURL(f.name, f.value); err != nil {
			return nil, err
		}
	}
	if opts.RequirePKCE {
		if asm.AuthorizationEndpoint == "" {
			return nil, fmt.Errorf("%w: no authorization_endpoint", ErrInvalidMetadata)
		}
		// Opened in the browser: https, or http to loopback when allowed.
		if err := checkEndpoint("authorization_endpoint", asm.AuthorizationEndpoint, opts.AllowLoopback); err != nil {
			return nil, err
		}
		if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
			return nil, fmt.Errorf("%w (issuer %s)", ErrPKCENotSupported, issuer)
		}
	} else if err := checkWebURL("authorization_endpoint", asm.AuthorizationEndpoint); err != nil {
		return nil, err
	}
	return &asm, nil
}

// ParseProtectedResourceMetadata decodes and validates RFC 9728
// protected-resource metadata fetched for resource: one JSON object
// without duplicate or case-variant keys; resource identical to the
// expected one (RFC 9728 §3.3); at least one authorization server, each a
// valid issuer URL (https, no query or fragment).
func ParseProtectedResourceMetadata(body []byte, resource string, opts MetadataOptions) (*oauthex.ProtectedResourceMetadata, error) {
	if err := checkStrictObject(body, prmFields); err != nil {
		return nil, err
	}
	var prm oauthex.ProtectedResourceMetadata
	if err := json.Unmarshal(body, &prm); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
	}
	if prm.Resource != resource {
		return nil, fmt.Errorf("%w: the document names %s, but was fetched for %s", ErrResourceMismatch, quote(prm.Resource), quote(resource))
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%w: protected resource metadata names no authorization server", ErrInvalidMetadata)
	}
	for _, as := range prm.AuthorizationServers {
		if err := checkIssuerURL(as, opts.AllowLoopback); err != nil {
			return nil, fmt.Errorf("authorization_servers: %w", err)
		}
	}
	return &prm, nil
}

// checkIssuerURL: an issuer is an https URL (http to loopback when
// allowed) with a host and no query or fragment (RFC 8414 §2).
func checkIssuerURL(issuer string, allowLoopback bool) error {
	u, err := url.Parse(issuer)
	if err != nil || !u.IsAbs() || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" || strings.ContainsAny(issuer, "?# \t\r\n") {
		return fmt.Errorf("%w: issuer %s is not an https URL without query or fragment", ErrInvalidMetadata, quote(issuer))
	}
	if err := CheckOAuthURL(u, allowLoopback); err != nil {
		return fmt.Errorf("issuer %s: %w", quote(issuer), err)
	}
	return nil
}

// checkEndpoint: an endpoint the client calls, if present, passes the SSRF
// guard's URL rules.
func checkEndpoint(name, raw string, allowLoopback bool) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.User != nil || u.Opaque != "" || strings.ContainsFunc(raw, isCtlOrSpace) {
		return fmt.Errorf("%w: %s %s is not an absolute URL", ErrInvalidMetadata, name, quote(raw))
	}
	if err := CheckOAuthURL(u, allowLoopback); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// checkWebURL: a URL that is only shown, if present, is http(s).
func checkWebURL(name, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || strings.ContainsFunc(raw, isCtlOrSpace) {
		return fmt.Errorf("%w: %s %s is not an http(s) URL", ErrInvalidMetadata, name, quote(raw))
	}
	return nil
}

func isCtlOrSpace(r rune) bool { return r <= ' ' || r == 0x7f }

// The JSON field names of the metadata types, by folded name.
var (
	asmFields = jsonFields(reflect.TypeFor[oauthex.AuthServerMeta]())
	prmFields = jsonFields(reflect.TypeFor[oauthex.ProtectedResourceMetadata]())
)

func jsonFields(t reflect.Type) map[string]string {
	m := map[string]string{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if name != "-" {
			m[foldKey(name)] = name
		}
	}
	return m
}

// foldKey folds a key the way encoding/json matches field names (ASCII
// case, and the Unicode 'ſ' and Kelvin sign that fold to 's' and 'k').
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case 'ſ':
			return 's'
		case '\u212a':
			return 'k'
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, k)
}

// checkStrictObject accepts exactly one JSON object whose top-level keys
// are distinct even after the case folding encoding/json applies: a
// document with two "issuer" keys (or "issuer" and "Issuer") is read
// differently by different parsers, and encoding/json silently takes one.
//
// A key that encoding/json would take for one of the document's fields
// without being spelled exactly like it ("Issuer", "iſsuer") is refused too.
func checkStrictObject(body []byte, fields map[string]string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%w: not a JSON object", ErrInvalidMetadata)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: malformed JSON", ErrInvalidMetadata)
		}
		k, _ := tok.(string)
		f := foldKey(k)
		if seen[f] {
			return fmt.Errorf("%w: duplicate key %s", ErrInvalidMetadata, quote(k))
		}
		seen[f] = true
		if name, ok := fields[f]; ok && name != k {
			return fmt.Errorf("%w: key %s is not spelled %q", ErrInvalidMetadata, quote(k), name)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("%w: malformed JSON", ErrInvalidMetadata)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return fmt.Errorf("%w: malformed JSON", ErrInvalidMetadata)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON object", ErrInvalidMetadata)
	}
	return nil
}

// getMetadata GETs a metadata document: (nil, nil) for a 4xx (not there),
// the body for a 200 application/json answer, else an error that never
// quotes the body.
func getMetadata(ctx context.Context, client *http.Client, metadataURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a URL", ErrInvalidMetadata, quote(RedactURL(metadataURL)))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", RedactURL(metadataURL), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("fetching %s: HTTP %d", RedactURL(metadataURL), resp.StatusCode)
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", RedactURL(metadataURL), err)
	case len(body) > maxMetadataBytes:
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalidMetadata, RedactURL(metadataURL), maxMetadataBytes)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("%w: %s is not application/json", ErrInvalidMetadata, RedactURL(metadataURL))
	}
	return body, nil
}

// FetchProtectedResourceMetadata fetches RFC 9728 metadata from
// metadataURL and validates it for resource (ParseProtectedResourceMetadata).
// It returns nil, nil if the server answers 4xx.
func FetchProtectedResourceMetadata(ctx context.Context, client *http.Client, metadataURL, resource string, opts MetadataOptions) (*oauthex.ProtectedResourceMetadata, error) {
	body, err := getMetadata(ctx, client, metadataURL)
	if err != nil || body == nil {
		return nil, err
	}
	prm, err := ParseProtectedResourceMetadata(body, resource, opts)
	if err != nil {
		return nil, fmt.Errorf("protected resource metadata %s: %w", RedactURL(metadataURL), err)
	}
	return prm, nil
}

// AuthServerMetadataURLs lists the well-known URLs of an issuer's metadata
// in the order the MCP specification gives: RFC 8414 then OpenID path
// insertion, then OpenID path appending (RFC 8414 §3.1: a trailing '/' of
// the issuer's path is removed before inserting).
func AuthServerMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: issuer %s is not a URL", ErrInvalidMetadata, quote(issuer))
	}
	var urls []string
	p := strings.Trim(u.Path, "/")
	for _, wk := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		v := *u
		v.RawQuery, v.Fragment, v.RawPath = "", "", ""
		v.Path = wk
		if p != "" {
			v.Path += "/" + p
		}
		urls = append(urls, v.String())
	}
	if p != "" {
		v := *u
		v.RawQuery, v.Fragment, v.RawPath = "", "", ""
		v.Path = "/" + p + "/.well-known/openid-configuration"
		urls = append(urls, v.String())
	}
	return urls, nil
}

// FetchAuthServerMeta fetches issuer's authorization server metadata from
// its well-known URLs (AuthServerMetadataURLs) and validates it
// (ParseAuthServerMeta). If no URL answers it returns an error wrapping
// ErrNoAuthServerMetadata; the first document found decides (a document
// that fails validation is not skipped for the next URL).
func FetchAuthServerMeta(ctx context.Context, client *http.Client, issuer string, opts MetadataOptions) (*oauthex.AuthServerMeta, error) {
	urls, err := AuthServerMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	for _, mu := range urls {
		body, err := getMetadata(ctx, client, mu)
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata: %w", err)
		}
		if body == nil {
			continue
		}
		asm, err := ParseAuthServerMeta(body, issuer, opts)
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata %s: %w", RedactURL(mu), err)
		}
		return asm, nil
	}
	return nil, fmt.Errorf("%w for issuer %s (tried %s)", ErrNoAuthServerMetadata, quote(issuer), strings.Join(urls, ", "))
}

// FetchAuthServerMetaAt fetches authorization server metadata from a
// configured metadataURL and validates it for issuer (the issuer that URL
// was built from). A 4xx answer is ErrNoAuthServerMetadata.
func FetchAuthServerMetaAt(ctx context.Context, client *http.Client, metadataURL, issuer string, opts MetadataOptions) (*oauthex.AuthServerMeta, error) {
	body, err := getMetadata(ctx, client, metadataURL)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if body == nil {
		return nil, fmt.Errorf("%w at %s", ErrNoAuthServerMetadata, RedactURL(metadataURL))
	}
	asm, err := ParseAuthServerMeta(body, issuer, opts)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata %s: %w", RedactURL(metadataURL), err)
	}
	return asm, nil
}

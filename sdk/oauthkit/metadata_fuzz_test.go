package oauthkit

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

const (
	fuzzIssuer   = "https://as.example.com"
	fuzzResource = "https://mcp.example.com/mcp"
)

// metadataSeeds are valid documents for both metadata fuzz targets; the
// seed corpora in testdata/fuzz add the shapes a parser differential hides
// in (duplicate and case-variant keys, concatenated objects, "\x00\xff{}",
// huge values, deep nesting) and the known attacks (trailing-slash issuer,
// private and NAT64 addresses, javascript: URLs).
var metadataSeeds = []string{
	`{"issuer":"https://as.example.com","authorization_endpoint":"https://as.example.com/authorize","token_endpoint":"https://as.example.com/token","code_challenge_methods_supported":["S256"],"response_types_supported":["code"]}`,
	`{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"scopes_supported":["mcp"]}`,
}

// checkAllocBound fails if parsing body allocated far more than its size
// (measured only for large inputs, where it matters and the cost of
// reading the memory statistics is amortised).
func checkAllocBound(t *testing.T, body []byte, parse func()) {
	if len(body) < 4096 {
		parse()
		return
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	parse()
	runtime.ReadMemStats(&after)
	if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(body)+1<<20); n > limit {
		t.Fatalf("parsing %d bytes allocated %d bytes (limit %d)", len(body), n, limit)
	}
}

// assertHTTPSEndpoint: an accepted endpoint passes the production guard
// (https, public address) when loopback is not allowed.
func assertHTTPSEndpoint(t *testing.T, name, raw string) {
	t.Helper()
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || CheckOAuthURL(u, false) != nil {
		t.Fatalf("accepted %s %q", name, raw)
	}
}

// FuzzParseAuthServerMeta: RFC 8414 metadata as the host validates it.
// Invariants: no panic; allocation bounded by the input; an accepted
// document names exactly the expected issuer, has https endpoints on
// public addresses, S256 when PKCE is required, and survives a re-encoding
// unchanged (the go-sdk is handed the re-encoded document).
func FuzzParseAuthServerMeta(f *testing.F) {
	for _, s := range metadataSeeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, requirePKCE bool) {
		opts := MetadataOptions{RequirePKCE: requirePKCE}
		var (
			asm *oauthex.AuthServerMeta
			err error
		)
		checkAllocBound(t, body, func() { asm, err = ParseAuthServerMeta(body, fuzzIssuer, opts) })
		if err != nil {
			if !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, ErrIssuerMismatch) && !errors.Is(err, ErrPKCENotSupported) && !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("unclassified error: %v", err)
			}
			if len(body) > 200 && strings.Contains(err.Error(), string(body)) {
				t.Fatalf("the error quotes the document")
			}
			return
		}
		if asm.Issuer != fuzzIssuer {
			t.Fatalf("accepted issuer %q, want exactly %q", asm.Issuer, fuzzIssuer)
		}
		if asm.TokenEndpoint == "" {
			t.Fatal("accepted without token_endpoint")
		}
		for name, v := range map[string]string{"token_endpoint": asm.TokenEndpoint, "registration_endpoint": asm.RegistrationEndpoint, "revocation_endpoint": asm.RevocationEndpoint, "introspection_endpoint": asm.IntrospectionEndpoint, "jwks_uri": asm.JWKSURI} {
			assertHTTPSEndpoint(t, name, v)
		}
		if requirePKCE {
			assertHTTPSEndpoint(t, "authorization_endpoint", asm.AuthorizationEndpoint)
			if asm.AuthorizationEndpoint == "" || !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
				t.Fatalf("accepted without PKCE S256 / authorization_endpoint: %+v", asm)
			}
		}
		again, _ := json.Marshal(asm)
		asm2, err := ParseAuthServerMeta(again, fuzzIssuer, opts)
		if err != nil || !reflect.DeepEqual(asm, asm2) {
			t.Fatalf("re-encoded document parses differently: %v\n%+v\n%+v", err, asm, asm2)
		}
	})
}

// FuzzParseProtectedResourceMetadata: RFC 9728 metadata as the host
// validates it. Invariants: no panic; allocation bounded; an accepted
// document names exactly the expected resource and only https
// authorization servers on public addresses without query or fragment,
// and survives a re-encoding unchanged.
func FuzzParseProtectedResourceMetadata(f *testing.F) {
	for _, s := range metadataSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var (
			prm *oauthex.ProtectedResourceMetadata
			err error
		)
		checkAllocBound(t, body, func() { prm, err = ParseProtectedResourceMetadata(body, fuzzResource, MetadataOptions{}) })
		if err != nil {
			if !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, ErrResourceMismatch) && !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if prm.Resource != fuzzResource {
			t.Fatalf("accepted resource %q", prm.Resource)
		}
		if len(prm.AuthorizationServers) == 0 {
			t.Fatal("accepted without authorization servers")
		}
		for _, as := range prm.AuthorizationServers {
			assertHTTPSEndpoint(t, "authorization server", as)
			if u, _ := url.Parse(as); u.RawQuery != "" || u.Fragment != "" {
				t.Fatalf("accepted issuer %q with query or fragment", as)
			}
		}
		again, _ := json.Marshal(prm)
		prm2, err := ParseProtectedResourceMetadata(again, fuzzResource, MetadataOptions{})
		if err != nil || !reflect.DeepEqual(prm, prm2) {
			t.Fatalf("re-encoded document parses differently: %v", err)
		}
	})
}

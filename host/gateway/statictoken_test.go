package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// TestStaticTokenAnswers: the static token's 401s say precisely what is
// wrong and what to send, never quote what was sent, and carry a plain
// Bearer challenge (no resource_metadata: there is no OAuth); the scheme is
// case-insensitive (RFC 7235 §2.1).
func TestStaticTokenAnswers(t *testing.T) {
	t.Parallel()
	const token = "CANARY-static-0123456789"
	url := httpGateway(t, &streamable.Options{Token: token})
	tests := []struct {
		name      string
		auth      []string // Authorization header values
		want      int
		body      string // in the answer
		challenge string // WWW-Authenticate
	}{
		{"no header", nil, 401, "a bearer token is required: send Authorization: Bearer <token> (mcphost serve printed it, or $MCPHOST_SERVE_TOKEN)", `Bearer realm="mcphost"`},
		{"empty bearer", []string{"Bearer "}, 401, "a bearer token is required", `Bearer realm="mcphost"`},
		{"wrong token", []string{"Bearer CANARY-wrong-token-99"}, 401, "the bearer token is not valid", `Bearer realm="mcphost", error="invalid_token", error_description="the bearer token is not valid"`},
		{"a prefix of the token", []string{"Bearer " + token[:10]}, 401, "the bearer token is not valid", `Bearer realm="mcphost", error="invalid_token", error_description="the bearer token is not valid"`},
		{"another scheme", []string{"Basic " + token}, 401, "the Authorization header is not a bearer token: send Authorization: Bearer <token>", `Bearer realm="mcphost"`},
		{"the token without a scheme", []string{token}, 401, "not a bearer token", `Bearer realm="mcphost"`},
		{"two headers", []string{"Bearer " + token, "Bearer " + token}, 401, "more than one Authorization header", `Bearer realm="mcphost"`},
		{"bearer in lower case", []string{"bearer " + token}, 200, "", ""},
		{"BEARER, two spaces", []string{"BEARER  " + token}, 200, "", ""},
		{"Bearer", []string{"Bearer " + token}, 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for _, v := range tc.auth {
				req.Header.Add("Authorization", v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
			if tc.want != 401 {
				return
			}
			if !strings.Contains(string(b), tc.body) {
				t.Errorf("body %q, want it to say %q", b, tc.body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
			if strings.Contains(string(b)+resp.Header.Get("WWW-Authenticate"), "CANARY") {
				t.Errorf("the answer quotes the presented token: %s", b)
			}
		})
	}
}

// TestNoOAuthHandler: on a gateway with the static token, the OAuth
// discovery and registration a client tries after a 401 get 404 with an
// OAuth error body saying to send the token.
func TestNoOAuthHandler(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	for _, p := range streamable.NoOAuthPaths() {
		mux.Handle(p, streamable.NoOAuthHandler())
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/.well-known/oauth-protected-resource"},
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp"},
		{http.MethodGet, "/.well-known/oauth-authorization-server"},
		{http.MethodGet, "/.well-known/openid-configuration"},
		{http.MethodGet, "/.well-known/openid-configuration/mcp"},
		{http.MethodPost, "/register"},
		{http.MethodGet, "/authorize"},
		{http.MethodPost, "/token"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{"redirect_uris":["http://localhost/cb"]}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" ||
				!strings.Contains(string(b), `"error":"invalid_request"`) || !strings.Contains(string(b), "does not use OAuth: send Authorization: Bearer <token>") {
				t.Errorf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/.well-known/oauth-protected-resource", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a rebound Host got %d, want 403", resp.StatusCode)
	}
}

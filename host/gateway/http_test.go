package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

func httpGateway(t *testing.T, opts *streamable.Options) string {
	t.Helper()
	_, url := gatewayServer(t, nil, opts)
	return url
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestHTTPExposure: a token is required, a foreign Origin or Host is refused,
// and a CLI-style request (no Origin) with the token is served.
func TestHTTPExposure(t *testing.T) {
	t.Parallel()
	url := httpGateway(t, &streamable.Options{Token: "s3cret", AllowedOrigins: []string{"http://localhost:6274"}})
	tests := []struct {
		name    string
		headers map[string]string
		host    string
		want    int
	}{
		{"no token", nil, "", http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, "", http.StatusUnauthorized},
		{"token in another scheme", map[string]string{"Authorization": "Basic s3cret"}, "", http.StatusUnauthorized},
		{"foreign origin", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}, "", http.StatusForbidden},
		{"foreign host (DNS rebinding)", map[string]string{"Authorization": "Bearer s3cret"}, "evil.example", http.StatusForbidden},
		{"cli with token", map[string]string{"Authorization": "Bearer s3cret"}, "", http.StatusOK},
		{"allowed origin with token", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://localhost:6274"}, "", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a WWW-Authenticate challenge")
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header sent: %q", resp.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestHTTPGatewayWithAGoSDKClient(t *testing.T) {
	t.Parallel()
	url := httpGateway(t, &streamable.Options{Token: "tok"})
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"tok", http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "over http"}})
	if err != nil || host.TextOf(res.Content) != "over http" {
		t.Fatalf("%v %v", res, err)
	}
	// Without the token the same client cannot connect.
	_, err = mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err == nil {
		t.Error("connected without the token")
	}
}

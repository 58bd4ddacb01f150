package streamable

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcphost/mcphost/host/inbound"
)

// TestAuthRefusalReason: a refused token's audit reason says which check
// refused it (the verifier's class of failure, e.g. a strictly refused
// introspection answer), never the token.
func TestAuthRefusalReason(t *testing.T) {
	const token = "CANARY-token-0123456789"
	tests := []struct {
		name       string
		header     string
		err        error
		wantStatus int
		wantReason string
	}{
		{"no token", "", nil, http.StatusUnauthorized, "no token"},
		{"duplicate introspection member", "Bearer " + token,
			fmt.Errorf("the introspection response has a duplicate, case-variant or escaped member name: %w", auth.ErrInvalidToken),
			http.StatusUnauthorized, "the introspection response has a duplicate, case-variant or escaped member name: invalid token"},
		{"bad signature", "Bearer " + token, fmt.Errorf("bad signature: %w", auth.ErrInvalidToken), http.StatusUnauthorized, "bad signature: invalid token"},
		{"issuer down", "Bearer " + token, fmt.Errorf("%w: HTTP 500", inbound.ErrUnavailable), http.StatusServiceUnavailable, "authorization server unavailable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthenticator(&InboundOAuth{
				Verify: func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
					return nil, tc.err
				},
				Resource: "https://gw.example/mcp",
			})
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			ar, status, reason := a.check(w, r)
			if ar != nil || status != tc.wantStatus || reason != tc.wantReason {
				t.Fatalf("check = %v, %d, %q; want nil, %d, %q", ar != nil, status, reason, tc.wantStatus, tc.wantReason)
			}
			if w.Code != tc.wantStatus {
				t.Errorf("answered %d, want %d", w.Code, tc.wantStatus)
			}
		})
	}
}

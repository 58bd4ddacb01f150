package auth

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// TestStepUpIsCapped (SECURITY.md A10): a server that keeps answering 403
// insufficient_scope gets MaxStepUps re-authorizations within
// StepUpWindow; the next 403 is an error, with no token request.
func TestStepUpIsCapped(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	h, err := NewHandler(HandlerConfig{Server: "svc", ServerURL: as.URL(), OAuth: &config.OAuth{
		Grant: config.GrantClientCredentials, ClientID: "c", ClientSecret: "s", AllowLoopback: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	forbidden := func() *http.Response {
		return &http.Response{StatusCode: http.StatusForbidden, Body: http.NoBody, Header: http.Header{
			"Www-Authenticate": {`Bearer error="insufficient_scope", scope="admin"`},
		}}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, as.URL(), nil)
	for i := 1; i <= MaxStepUps; i++ {
		if err := h.Authorize(ctx, req, forbidden()); err != nil {
			t.Fatalf("step-up %d: %v", i, err)
		}
		if n := len(as.Requests("/token")); n != i {
			t.Fatalf("after step-up %d: %d token requests", i, n)
		}
		if got := as.Requests("/token")[i-1].Form.Get("scope"); !strings.Contains(got, "admin") {
			t.Errorf("step-up %d asked for scope %q, want the challenged admin", i, got)
		}
	}
	err = h.Authorize(ctx, req, forbidden())
	if err == nil || !strings.Contains(err.Error(), "insufficient_scope") {
		t.Errorf("step-up beyond the cap: %v", err)
	}
	if n := len(as.Requests("/token")); n != MaxStepUps {
		t.Errorf("%d token requests, want %d", n, MaxStepUps)
	}
}

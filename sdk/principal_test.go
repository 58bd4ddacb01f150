package sdk_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

// recordingAuth records the ServerRef of every call, as the plugin sees it.
type recordingAuth struct {
	mu   sync.Mutex
	seen map[string]sdk.ServerRef // by method
}

func (a *recordingAuth) record(method string, s sdk.ServerRef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen[method] = s
}

func (a *recordingAuth) Token(_ context.Context, r *sdk.TokenRequest) (*sdk.TokenResponse, error) {
	a.record("Token", r.Server)
	return &sdk.TokenResponse{AccessToken: "t"}, nil
}

func (a *recordingAuth) Authorize(_ context.Context, r *sdk.AuthorizeRequest) (*sdk.AuthorizeResponse, error) {
	a.record("Authorize", r.Server)
	return &sdk.AuthorizeResponse{}, nil
}

func (a *recordingAuth) CompleteInteraction(_ context.Context, r *sdk.CompleteInteractionRequest) (*sdk.CompleteInteractionResponse, error) {
	a.record("CompleteInteraction", r.Server)
	return &sdk.CompleteInteractionResponse{}, nil
}

func (a *recordingAuth) Forget(_ context.Context, r *sdk.ForgetRequest) (*sdk.ForgetResponse, error) {
	a.record("Forget", r.Server)
	return &sdk.ForgetResponse{}, nil
}

// TestServerRefThroughGRPC: every Auth call delivers the host's ServerRef to
// the plugin as it was, with its Principal (nil for the host's own user).
func TestServerRefThroughGRPC(t *testing.T) {
	t.Parallel()
	base := sdk.ServerRef{
		Scheme:     "rec",
		ServerName: "s",
		ServerURL:  "https://x/mcp",
		Config:     json.RawMessage(`{"audience":"x"}`),
		IdP:        json.RawMessage(`{"name":"corp","issuer":"https://idp"}`),
		SavedState: []byte("state"),
	}
	with := func(p *sdk.Principal) sdk.ServerRef {
		s := base
		s.Principal = p
		return s
	}
	tests := []struct {
		name   string
		server sdk.ServerRef
	}{
		{"host's own user", base},
		{"zero ServerRef", sdk.ServerRef{}},
		{"principal", with(&sdk.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng", "ops"}})},
		{"principal with inbound token", with(&sdk.Principal{Issuer: "https://idp", Subject: "bob", Groups: []string{"eng"}, Token: "inbound-token"})},
		{"principal without groups", with(&sdk.Principal{Issuer: "https://idp", Subject: "carol"})},
		// An empty principal still differs from none.
		{"empty principal", with(&sdk.Principal{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recordingAuth{seen: map[string]sdk.ServerRef{}}
			a := sdktest.Auth(t, &sdk.ServeOpts{Info: sdk.Info{Name: "a", AuthSchemes: []sdk.Component{{Name: "rec"}}}, Auth: rec})
			ctx := context.Background()
			if _, err := a.Token(ctx, &sdk.TokenRequest{Server: tt.server}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Authorize(ctx, &sdk.AuthorizeRequest{Server: tt.server, Status: 401}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CompleteInteraction(ctx, &sdk.CompleteInteractionRequest{Server: tt.server, ID: "i1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Forget(ctx, &sdk.ForgetRequest{Server: tt.server}); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"Token", "Authorize", "CompleteInteraction", "Forget"} {
				got, ok := rec.seen[m]
				if !ok {
					t.Errorf("%s: the plugin was not called", m)
					continue
				}
				if diff := cmp.Diff(tt.server, got); diff != "" {
					t.Errorf("%s: ServerRef as the plugin saw it (-sent +got):\n%s", m, diff)
				}
			}
		})
	}
}

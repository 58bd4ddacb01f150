// Command auth-static is a test auth plugin: scheme "static" hands out the
// configured token, optionally only after the server has challenged once
// (require_authorize), so tests can exercise Token and Authorize end to end
// through a real plugin process.
package main

import (
	"context"
	"os"
	"sync"

	"github.com/mcphost/mcphost/sdk"
)

type config struct {
	Token            string `json:"token"`
	RequireAuthorize bool   `json:"require_authorize,omitempty"`
}

type static struct {
	mu         sync.Mutex
	authorized map[string]bool
}

func (s *static) Token(_ context.Context, r *sdk.TokenRequest) (*sdk.TokenResponse, error) {
	var c config
	if d := sdk.DecodeConfig(r.Server.Config, &c); d.HasErrors() {
		return &sdk.TokenResponse{Diagnostics: d}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.RequireAuthorize && !s.authorized[r.Server.ServerName] {
		return &sdk.TokenResponse{}, nil
	}
	return &sdk.TokenResponse{AccessToken: c.Token, TokenType: "Bearer"}, nil
}

func (s *static) Authorize(_ context.Context, r *sdk.AuthorizeRequest) (*sdk.AuthorizeResponse, error) {
	if r.Status == 403 {
		return &sdk.AuthorizeResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "Forbidden", "the server refused the token")}}, nil
	}
	s.mu.Lock()
	s.authorized[r.Server.ServerName] = true
	s.mu.Unlock()
	return &sdk.AuthorizeResponse{}, nil
}

func main() {
	err := sdk.Serve(&sdk.ServeOpts{
		Info: sdk.Info{Name: "auth-static", Version: "0.0.1", AuthSchemes: []sdk.Component{{
			Name: "static",
			Config: []sdk.Attribute{
				{Name: "token", Type: sdk.TypeString, Required: true, Sensitive: true},
				{Name: "require_authorize", Type: sdk.TypeBool},
			},
		}}},
		Auth: &static{authorized: map[string]bool{}},
	})
	if err != nil {
		sdk.Logger().Error("cannot serve", "error", err)
		os.Exit(1)
	}
}

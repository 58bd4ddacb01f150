package sdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/mcphost/mcphost/sdk"
)

// TestServeReturnsInvalidOpts: Serve hands invalid options back to the
// plugin's main as an error wrapping ErrInvalidOpts, without serving. (It
// used to log and call os.Exit(1), which ended the caller's process.)
func TestServeReturnsInvalidOpts(t *testing.T) {
	t.Parallel()
	ws := []sdk.Component{{Name: "ws"}}
	tests := []struct {
		name string
		opts *sdk.ServeOpts
	}{
		{"nil options", nil},
		{"no name", &sdk.ServeOpts{Info: sdk.Info{Transports: ws}, Transport: echoTransport{}}},
		{"nothing served", &sdk.ServeOpts{Info: sdk.Info{Name: "p"}}},
		{"transport not named", &sdk.ServeOpts{Info: sdk.Info{Name: "p"}, Transport: echoTransport{}}},
		{"transports named, none served", &sdk.ServeOpts{Info: sdk.Info{Name: "p", Transports: ws, AuthSchemes: ws}, Auth: &recordingAuth{}}},
		{"auth not named", &sdk.ServeOpts{Info: sdk.Info{Name: "p"}, Auth: &recordingAuth{}}},
		{"headers not described", &sdk.ServeOpts{Info: sdk.Info{Name: "p"}, Headers: staticHeaders{}}},
		{"headers described, none served", &sdk.ServeOpts{Info: sdk.Info{Name: "p", Transports: ws, Headers: &sdk.Component{Name: "h"}}, Transport: echoTransport{}}},
		{"interceptor not described", &sdk.ServeOpts{Info: sdk.Info{Name: "p"}, Interceptor: &recordingInterceptor{}}},
		{"interceptor described, none served", &sdk.ServeOpts{Info: sdk.Info{Name: "p", Transports: ws, Interceptor: &sdk.Component{Name: "g"}}, Transport: echoTransport{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var log strings.Builder
			opts := tt.opts
			if opts != nil {
				o := *opts
				o.Logger = hclog.New(&hclog.LoggerOptions{Output: &log})
				opts = &o
			}
			err := sdk.Serve(opts)
			if !errors.Is(err, sdk.ErrInvalidOpts) {
				t.Fatalf("Serve(%s) = %v, want an error wrapping ErrInvalidOpts", tt.name, err)
			}
			// Logged too, for a main that ignores the error.
			if opts != nil && !strings.Contains(log.String(), "invalid plugin") {
				t.Errorf("Serve(%s) did not log why: %q", tt.name, log.String())
			}
		})
	}
}

// TestServeReturnsWhenDone: valid options are served (here in go-plugin's
// test mode) until the host side ends them, and then Serve returns nil.
func TestServeReturnsWhenDone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	opts := *echoOpts
	opts.Logger = hclog.NewNullLogger()
	opts.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	done := make(chan error, 1)
	go func() { done <- sdk.Serve(&opts) }()
	select {
	case <-reattach:
	case err := <-done:
		t.Fatalf("Serve returned %v before serving", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v after the host ended it, want nil", err)
	}
	<-closed
}

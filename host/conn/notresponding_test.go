package conn

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/sdk"
)

// brokenAuth is an auth plugin whose every RPC fails at the gRPC level (the
// plugin crashed), with a cause that quotes a secret.
type brokenAuth struct{ err error }

func (b brokenAuth) Token(context.Context, *sdk.TokenRequest) (*sdk.TokenResponse, error) {
	return nil, b.err
}

func (b brokenAuth) Authorize(context.Context, *sdk.AuthorizeRequest) (*sdk.AuthorizeResponse, error) {
	return nil, b.err
}

func (b brokenAuth) CompleteInteraction(context.Context, *sdk.CompleteInteractionRequest) (*sdk.CompleteInteractionResponse, error) {
	return nil, b.err
}

func (b brokenAuth) Forget(context.Context, *sdk.ForgetRequest) (*sdk.ForgetResponse, error) {
	return nil, b.err
}

func (b brokenAuth) Auth(context.Context, string) (sdk.AuthClient, string, error) {
	return b, "auth-broken", nil
}

// TestPluginNotRespondingKeepsTheGRPCCause: every way a plugin RPC fails
// reports a NotRespondingError that errors.Is/As and status.FromError see
// through to the gRPC status, in the words users saw before, with the
// plugin's secrets masked. (The cause used to be flattened with %v.)
func TestPluginNotRespondingKeepsTheGRPCCause(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-very-secret"
	cause := status.Error(codes.Unavailable, "connection error: token="+secret)
	b := brokenAuth{err: cause}
	m := NewManager([]*config.Server{{Name: "s", Transport: "http", URL: "https://mcp.invalid/mcp", AuthScheme: "broken"}}, &Options{Auth: b})
	t.Cleanup(func() { m.Close() })
	c := m.Get("s")
	pa := &pluginAuth{client: b, plugin: "auth-broken", ref: sdk.ServerRef{ServerName: "s"}}
	resp := func() *http.Response { return &http.Response{StatusCode: http.StatusUnauthorized, Body: http.NoBody} }
	const authText = "auth plugin auth-broken did not respond; see its log (rpc error: code = Unavailable desc = connection error: token="
	tests := []struct {
		name     string
		call     func(context.Context) error
		wantText string
		wantKind string
		closed   bool // also a lost connection (errTransportClosed)
	}{
		{"Token", func(ctx context.Context) error { _, err := pa.Token(ctx); return err }, authText, sdk.KindAuth, false},
		{"Authorize", func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://mcp.invalid/mcp", nil)
			return pa.Authorize(ctx, req, resp())
		}, authText, sdk.KindAuth, false},
		{"login", func(ctx context.Context) error { return c.loginPlugin(ctx, nil) }, authText, sdk.KindAuth, false},
		{"Logout", c.Logout, authText, sdk.KindAuth, false},
		{"transport", func(context.Context) error { return pluginError("transport-ws", cause) },
			"connection closed: plugin transport-ws did not respond; see its log (rpc error: code = Unavailable", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(t.Context())
			var nr *plugins.NotRespondingError
			if !errors.As(err, &nr) {
				t.Fatalf("error %v (%T): not a NotRespondingError", err, err)
			}
			if nr.Kind != tt.wantKind {
				t.Errorf("Kind = %q, want %q", nr.Kind, tt.wantKind)
			}
			if !errors.Is(err, cause) {
				t.Errorf("errors.Is does not reach the gRPC cause: %v", err)
			}
			if got := status.Code(err); got != codes.Unavailable {
				t.Errorf("status.Code = %v, want Unavailable", got)
			}
			if got := IsTerminal(err); got != tt.closed {
				t.Errorf("IsTerminal = %v, want %v", got, tt.closed)
			}
			if !strings.HasPrefix(err.Error(), tt.wantText) {
				t.Errorf("text %q, want it to start %q", err.Error(), tt.wantText)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the plugin's secret leaked into %q", err.Error())
			}
		})
	}
}

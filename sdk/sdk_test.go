package sdk_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

func TestProtocolVersionMatchesProto(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("proto/mcphost/plugin/v1/plugin.proto")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// Protocol version: (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("plugin.proto does not state its protocol version")
	}
	if v, _ := strconv.Atoi(string(m[1])); v != sdk.ProtocolVersion {
		t.Errorf("plugin.proto says version %d, sdk.ProtocolVersion is %d", v, sdk.ProtocolVersion)
	}
	if !strings.Contains(string(b), "package mcphost.plugin.v"+strconv.Itoa(sdk.ProtocolVersion)+";") {
		t.Error("the proto package does not carry the protocol version")
	}
}

// TestSDKDoesNotImportHost: the SDK is the public contract; it must not
// depend on the host.
func TestSDKDoesNotImportHost(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/mcphost/mcphost/sdk/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/mcphost/mcphost/host") || strings.HasPrefix(dep, "github.com/mcphost/mcphost/internal") {
			t.Errorf("sdk depends on %s", dep)
		}
	}
}

// echoTransport answers every message with itself, prefixed by the server name.
type echoTransport struct{}

type echoConn struct {
	name   string
	in     chan []byte
	closed chan struct{}
	once   sync.Once
}

func (echoTransport) Open(_ context.Context, req *sdk.OpenRequest) (sdk.Conn, error) {
	switch req.URL {
	case "ws://refused":
		return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: "connection refused"}
	case "ws://locked":
		return nil, &sdk.TransportError{Code: sdk.CodeAuth, HTTPStatus: 401, WWWAuthenticate: `Bearer realm="x"`, Message: "unauthorized"}
	}
	return &echoConn{name: req.ServerName + "|" + req.Headers["X-Test"], in: make(chan []byte, 16), closed: make(chan struct{})}, nil
}

func (c *echoConn) Recv(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		if string(m) == "hang up" {
			return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: "server went away"}
		}
		return append([]byte(c.name+":"), m...), nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *echoConn) Send(_ context.Context, msg []byte) error {
	c.in <- msg
	return nil
}

func (c *echoConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

var echoOpts = &sdk.ServeOpts{
	Info: sdk.Info{Name: "echo", Version: "1.0.0", Transports: []sdk.Component{{
		Name: "ws", Config: []sdk.Attribute{{Name: "ping_interval", Type: sdk.TypeString, Description: "keepalive"}},
	}}},
	Transport: echoTransport{},
}

func TestTransportThroughGRPC(t *testing.T) {
	t.Parallel()
	tr := sdktest.Transport(t, echoOpts)
	ctx := context.Background()
	conn, err := tr.Open(ctx, &sdk.OpenRequest{Transport: "ws", ServerName: "s1", URL: "ws://ok", Headers: map[string]string{"X-Test": "h"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		msg := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `}`)
		if err := conn.Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
		got, err := conn.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := "s1|h:" + string(msg); string(got) != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	conn.Send(ctx, []byte("hang up"))
	_, err = conn.Recv(ctx)
	var te *sdk.TransportError
	if !errors.As(err, &te) || te.Code != sdk.CodeTerminal || te.Message != "server went away" {
		t.Errorf("after hang-up: %v", err)
	}
	conn.Close()
}

func TestTransportOpenErrorsAreClassified(t *testing.T) {
	t.Parallel()
	tr := sdktest.Transport(t, echoOpts)
	for url, want := range map[string]*sdk.TransportError{
		"ws://refused": {Code: sdk.CodeTerminal, Message: "connection refused"},
		"ws://locked":  {Code: sdk.CodeAuth, HTTPStatus: 401, WWWAuthenticate: `Bearer realm="x"`, Message: "unauthorized"},
	} {
		_, err := tr.Open(context.Background(), &sdk.OpenRequest{URL: url})
		var te *sdk.TransportError
		if !errors.As(err, &te) {
			t.Errorf("%s: %v is not a TransportError", url, err)
			continue
		}
		if diff := cmp.Diff(want, te); diff != "" {
			t.Errorf("%s (-want +got):\n%s", url, diff)
		}
	}
}

func TestCloseEndsTheServerSide(t *testing.T) {
	t.Parallel()
	tr := sdktest.Transport(t, echoOpts)
	conn, err := tr.Open(context.Background(), &sdk.OpenRequest{URL: "ws://ok"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Recv(context.Background())
		done <- err
	}()
	conn.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Recv after Close returned a message")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Recv")
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	info, err := sdktest.Info(t, echoOpts).GetInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&echoOpts.Info, info); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

type staticHeaders struct{}

func (staticHeaders) GetHeaders(_ context.Context, r *sdk.HeadersRequest) (*sdk.HeadersResponse, error) {
	if r.ServerName == "bad" {
		return &sdk.HeadersResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("command", "Helper failed", "exit status 1")}}, nil
	}
	return &sdk.HeadersResponse{Headers: map[string]string{"Authorization": "Bearer for-" + r.ServerName, "X-Url": r.ServerURL}}, nil
}

func TestHeadersThroughGRPC(t *testing.T) {
	t.Parallel()
	h := sdktest.Headers(t, &sdk.ServeOpts{Info: sdk.Info{Name: "h", Headers: &sdk.Component{Name: "helper"}}, Headers: staticHeaders{}})
	resp, err := h.GetHeaders(context.Background(), &sdk.HeadersRequest{ServerName: "s", ServerURL: "https://x/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"Authorization": "Bearer for-s", "X-Url": "https://x/mcp"}, resp.Headers); diff != "" {
		t.Error(diff)
	}
	resp, err = h.GetHeaders(context.Background(), &sdk.HeadersRequest{ServerName: "bad"})
	if err != nil || !resp.Diagnostics.HasErrors() || resp.Diagnostics.Err().Error() != "command: Helper failed: exit status 1" {
		t.Errorf("diagnostics: %v %v", resp, err)
	}
}

type tokenAuth struct{}

func (tokenAuth) Token(_ context.Context, r *sdk.TokenRequest) (*sdk.TokenResponse, error) {
	return &sdk.TokenResponse{AccessToken: "tok-" + r.Server.ServerName, TokenType: "Bearer", Expiry: time.UnixMilli(1_900_000_000_000)}, nil
}

func (tokenAuth) Authorize(_ context.Context, r *sdk.AuthorizeRequest) (*sdk.AuthorizeResponse, error) {
	return &sdk.AuthorizeResponse{Interaction: &sdk.Interaction{ID: "i1", OpenURL: "https://idp/authorize", CallbackPath: "/cb"}}, nil
}

func TestAuthThroughGRPC(t *testing.T) {
	t.Parallel()
	a := sdktest.Auth(t, &sdk.ServeOpts{Info: sdk.Info{Name: "a", AuthSchemes: []sdk.Component{{Name: "tok"}}}, Auth: tokenAuth{}})
	ctx := context.Background()
	tok, err := a.Token(ctx, &sdk.TokenRequest{Server: sdk.ServerRef{Scheme: "tok", ServerName: "s"}})
	if err != nil || tok.AccessToken != "tok-s" || !tok.Expiry.Equal(time.UnixMilli(1_900_000_000_000)) {
		t.Errorf("token %+v %v", tok, err)
	}
	az, err := a.Authorize(ctx, &sdk.AuthorizeRequest{Status: 401})
	if err != nil || az.Interaction == nil || az.Interaction.CallbackPath != "/cb" {
		t.Errorf("authorize %+v %v", az, err)
	}
	// tokenAuth is not Interactive: completing says so as a diagnostic.
	ci, err := a.CompleteInteraction(ctx, &sdk.CompleteInteractionRequest{ID: "i1"})
	if err != nil || !ci.Diagnostics.HasErrors() {
		t.Errorf("complete %+v %v", ci, err)
	}
}

package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/status"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
	"github.com/mcphost/mcphost/sdk"
)

// PluginTransports gives access to transports served by plugins.
type PluginTransports interface {
	// Transport returns the client of the plugin that serves the named
	// transport, starting the plugin if needed, and the plugin's name.
	Transport(ctx context.Context, transport string) (sdk.Transport, string, error)
}

// pluginTransport adapts a plugin's sdk.Transport to mcp.Transport, so the
// go-sdk client, registry and gateway work unchanged over it.
type pluginTransport struct {
	plugins PluginTransports
	server  *config.Server
	// auth, if set, supplies the credential (as an Authorization header).
	auth *pluginAuth
	// authFailed is set when the plugin reports that the server refused the credentials.
	authFailed bool
	// conn is the connection Connect returned.
	conn *pluginConn
}

func (t *pluginTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	tr, name, err := t.plugins.Transport(ctx, t.server.Transport)
	if err != nil {
		return nil, err
	}
	req, err := openRequest(t.server)
	if err != nil {
		return nil, err
	}
	c, err := t.open(ctx, tr, req)
	if err != nil {
		var te *sdk.TransportError
		if errors.As(err, &te) && te.Code == sdk.CodeAuth {
			t.authFailed = true
		}
		return nil, pluginError(name, err)
	}
	t.conn = newPluginConn(c, name)
	return t.conn, nil
}

// open opens the connection with the auth plugin's credential, if any; after
// an auth failure the auth plugin reacts and the open is tried once more.
func (t *pluginTransport) open(ctx context.Context, tr sdk.Transport, req *sdk.OpenRequest) (sdk.Conn, error) {
	for attempt := 0; ; attempt++ {
		if t.auth != nil {
			tok, err := t.auth.Token(ctx)
			if err != nil {
				return nil, err
			}
			headers := map[string]string{}
			for k, v := range req.Headers {
				headers[k] = v
			}
			if tok != nil {
				headers["Authorization"] = tok.Type() + " " + tok.AccessToken
			}
			req.Headers = headers
		}
		c, err := tr.Open(ctx, req)
		var te *sdk.TransportError
		if err == nil || t.auth == nil || attempt > 0 || !errors.As(err, &te) || te.Code != sdk.CodeAuth {
			return c, err
		}
		if aerr := t.auth.authorize(ctx, req.URL, te.HTTPStatus, te.WWWAuthenticate); aerr != nil {
			return nil, aerr
		}
	}
}

// openRequest builds the plugin's view of a server: URL, headers, TLS
// material read from the configured files, proxy and transport options.
func openRequest(s *config.Server) (*sdk.OpenRequest, error) {
	req := &sdk.OpenRequest{
		Transport: s.Transport, ServerName: s.Name, URL: s.URL,
		Headers: s.Headers, ProxyURL: s.ProxyURL, Config: s.TransportOptions,
	}
	if s.CAFile != "" || s.ClientCertFile != "" || s.TLSServerName != "" || s.TLSInsecureSkipVerify {
		req.TLS = &sdk.TLSConfig{ServerName: s.TLSServerName, InsecureSkipVerify: s.TLSInsecureSkipVerify}
		for path, dst := range map[string]*[]byte{s.CAFile: &req.TLS.CAPEM, s.ClientCertFile: &req.TLS.ClientCertPEM, s.ClientKeyFile: &req.TLS.ClientKeyPEM} {
			if path == "" {
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("reading TLS material for %s: %w", s.Name, err)
			}
			*dst = b
		}
	}
	return req, nil
}

// pluginError explains an error from a plugin: a classified transport error
// is the server's problem; a gRPC failure means the plugin broke.
func pluginError(plugin string, err error) error {
	var te *sdk.TransportError
	if errors.As(err, &te) {
		if te.Code == sdk.CodeTerminal {
			return fmt.Errorf("%w: %v", errTransportClosed, te)
		}
		return te
	}
	if _, ok := status.FromError(err); ok {
		return fmt.Errorf("%w: %w", errTransportClosed, &plugins.NotRespondingError{Plugin: plugin, Err: err})
	}
	return err
}

// pluginConn is an mcp.Connection over a plugin connection, with a raw
// lane (rawLane) beside the go-sdk client for the gateway's relay path.
type pluginConn struct {
	c      sdk.Conn
	plugin string
	*rawLane
	// sendMu serializes the go-sdk's writes and the raw lane's: sdk.Conn's
	// Send is not called concurrently with itself.
	sendMu sync.Mutex
}

func newPluginConn(c sdk.Conn, plugin string) *pluginConn {
	p := &pluginConn{c: c, plugin: plugin}
	p.rawLane = newRawLane(func(msg []byte) error {
		// (A send blocks only while the plugin's stream is full; closing
		// the connection ends it.)
		return p.send(context.Background(), msg)
	})
	return p
}

func (p *pluginConn) send(ctx context.Context, msg []byte) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if err := p.c.Send(ctx, msg); err != nil {
		return pluginError(p.plugin, err)
	}
	return nil
}

func (p *pluginConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		b, err := p.c.Recv(ctx)
		if err != nil {
			p.fail(err)
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, pluginError(p.plugin, err)
		}
		if p.response(b) {
			continue
		}
		return jsonrpcmsg.Decode(b)
	}
}

func (p *pluginConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if !p.captured() {
		p.written(msg)
	}
	return p.send(ctx, b)
}

func (p *pluginConn) Close() error {
	p.fail(errTransportClosed)
	return p.c.Close()
}

func (p *pluginConn) SessionID() string { return "" }

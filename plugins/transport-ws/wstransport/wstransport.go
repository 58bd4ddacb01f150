// Package wstransport is the transport-ws plugin: MCP over WebSocket. Each
// JSON-RPC message travels as one text frame on a connection that negotiated
// the "mcp" subprotocol, over ws:// or wss:// (custom CA, client certificates
// for mutual TLS, proxies), with custom headers and keepalive pings.
//
// Messages are forwarded as bytes; the plugin never decodes them.
package wstransport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/sdk"
)

// Subprotocol is the WebSocket subprotocol of MCP.
const Subprotocol = "mcp"

// Defaults for the transport's configuration.
const (
	DefaultPingInterval = 30 * time.Second
	DefaultReadLimit    = 4 << 20
)

// Info describes the plugin.
var Info = sdk.Info{
	Name:    "transport-ws",
	Version: "1.0.0",
	Transports: []sdk.Component{{
		Name:        "ws",
		Description: "MCP over WebSocket (subprotocol mcp, one JSON-RPC message per text frame)",
		Config: []sdk.Attribute{
			{Name: "ping_interval", Type: sdk.TypeString, Description: `keepalive ping interval, e.g. "30s"; "0s" disables pings`},
			{Name: "read_limit", Type: sdk.TypeNumber, Description: "largest message accepted from the server, in bytes (default 4 MiB)"},
		},
	}},
}

// Main serves the plugin. It is the plugin's main function.
func Main() int {
	log := sdk.Logger()
	if err := sdk.Serve(&sdk.ServeOpts{Info: Info, Transport: &Transport{Log: log}, Logger: log}); err != nil {
		log.Error("cannot serve", "error", err)
		return 1
	}
	return 0
}

// Transport opens WebSocket connections.
type Transport struct {
	// Log receives the transport's logs. OPTIONAL.
	Log hclog.Logger
}

var _ sdk.Transport = (*Transport)(nil)

type config struct {
	PingInterval string `json:"ping_interval,omitempty"`
	ReadLimit    int64  `json:"read_limit,omitempty"`
}

// Open dials the server.
func (t *Transport) Open(ctx context.Context, req *sdk.OpenRequest) (sdk.Conn, error) {
	log := t.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	var cfg config
	if diags := sdk.DecodeConfig(req.Config, &cfg); diags.HasErrors() {
		return nil, &sdk.TransportError{Code: sdk.CodeOther, Message: diags.Err().Error()}
	}
	ping := DefaultPingInterval
	if cfg.PingInterval != "" {
		d, err := time.ParseDuration(cfg.PingInterval)
		if err != nil || d < 0 {
			return nil, &sdk.TransportError{Code: sdk.CodeOther, Message: fmt.Sprintf("ping_interval %q is not a duration", cfg.PingInterval)}
		}
		ping = d
	}
	limit := cfg.ReadLimit
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") {
		return nil, &sdk.TransportError{Code: sdk.CodeOther, Message: fmt.Sprintf("url %q must be ws:// or wss://", req.URL)}
	}
	hc, err := httpClient(req)
	if err != nil {
		return nil, &sdk.TransportError{Code: sdk.CodeOther, Message: err.Error()}
	}
	header := http.Header{}
	for k, v := range req.Headers {
		header.Set(k, v)
	}
	c, resp, err := websocket.Dial(ctx, req.URL, &websocket.DialOptions{
		HTTPClient:   hc,
		HTTPHeader:   header,
		Subprotocols: []string{Subprotocol},
	})
	if err != nil {
		return nil, dialError(err, resp)
	}
	if c.Subprotocol() != Subprotocol {
		c.Close(websocket.StatusProtocolError, "the mcp subprotocol is required")
		return nil, &sdk.TransportError{Code: sdk.CodeOther, Message: fmt.Sprintf("the server did not accept the %q subprotocol", Subprotocol)}
	}
	c.SetReadLimit(limit)
	conn := &conn{c: c, done: make(chan struct{})}
	if ping > 0 {
		conn.wg.Add(1)
		go conn.keepalive(ping, log.With("server", req.ServerName)) // ends on Close
	}
	log.Debug("connected", "server", req.ServerName, "url", redactURL(u))
	return conn, nil
}

// redactURL drops the query, which may hold secrets, from a URL for logs.
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.User = "", nil
	return c.String()
}

func httpClient(req *sdk.OpenRequest) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A WebSocket goes through a proxy as a CONNECT tunnel, for ws:// as well
	// as wss:// (Go's transport tunnels only https by itself).
	tr.Proxy = nil
	proxy, err := proxyFor(req)
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		tr.DialContext = connectVia(proxy)
	}
	if t := req.TLS; t != nil {
		cfg := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
		if len(t.CAPEM) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(t.CAPEM) {
				return nil, errors.New("tls: no certificate found in the CA PEM")
			}
			cfg.RootCAs = pool
		}
		if len(t.ClientCertPEM) > 0 || len(t.ClientKeyPEM) > 0 {
			cert, err := tls.X509KeyPair(t.ClientCertPEM, t.ClientKeyPEM)
			if err != nil {
				return nil, fmt.Errorf("tls: client certificate: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

// proxyFor returns the proxy for a connection: proxy_url, else the
// environment's (HTTPS_PROXY for wss://, HTTP_PROXY for ws://, NO_PROXY).
func proxyFor(req *sdk.OpenRequest) (*url.URL, error) {
	if req.ProxyURL != "" {
		p, err := url.Parse(req.ProxyURL)
		if err != nil || p.Host == "" {
			return nil, fmt.Errorf("proxy url %q is not a URL", req.ProxyURL)
		}
		return p, nil
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, err
	}
	hu := *u
	hu.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	return http.ProxyFromEnvironment(&http.Request{URL: &hu})
}

// connectVia dials through an HTTP proxy with a CONNECT tunnel.
func connectVia(proxy *url.URL) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", proxy.Host)
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", proxy.Host, err)
		}
		req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
		if u := proxy.User; u != nil {
			pw, _ := u.Password()
			req.SetBasicAuth(u.Username(), pw)
			req.Header.Set("Proxy-Authorization", req.Header.Get("Authorization"))
			req.Header.Del("Authorization")
		}
		if d, ok := ctx.Deadline(); ok {
			c.SetDeadline(d)
		}
		if err := req.Write(c); err != nil {
			c.Close()
			return nil, err
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("proxy %s: %w", proxy.Host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.Close()
			return nil, fmt.Errorf("proxy %s refused the tunnel to %s: %s", proxy.Host, addr, resp.Status)
		}
		c.SetDeadline(time.Time{})
		if br.Buffered() > 0 {
			return &bufferedConn{Conn: c, r: br}, nil
		}
		return c, nil
	}
}

// bufferedConn reads first what the proxy's response left buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// dialError classifies a failed handshake.
func dialError(err error, resp *http.Response) error {
	if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		return &sdk.TransportError{Code: sdk.CodeAuth, HTTPStatus: resp.StatusCode, WWWAuthenticate: resp.Header.Get("WWW-Authenticate"), Message: err.Error()}
	}
	te := &sdk.TransportError{Code: sdk.CodeOther, Message: err.Error()}
	if resp != nil {
		te.HTTPStatus = resp.StatusCode
	}
	var ne net.Error
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, io.EOF) || (errors.As(err, &ne) && ne.Timeout()) {
		te.Code = sdk.CodeTerminal
	}
	return te
}

// conn is one WebSocket connection.
type conn struct {
	c    *websocket.Conn
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

var _ sdk.Conn = (*conn)(nil)

func (c *conn) Recv(ctx context.Context) ([]byte, error) {
	for {
		typ, msg, err := c.c.Read(ctx)
		if err != nil {
			return nil, recvError(err)
		}
		if typ == websocket.MessageText {
			return msg, nil
		}
		// Binary frames are not MCP messages; skip them.
	}
}

func recvError(err error) error {
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return io.EOF
	case -1:
		if errors.Is(err, context.Canceled) {
			return err
		}
		return &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
	}
	return &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
}

func (c *conn) Send(ctx context.Context, msg []byte) error {
	if err := c.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
	}
	return nil
}

func (c *conn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.done)
		err = c.c.Close(websocket.StatusNormalClosure, "")
		c.wg.Wait()
	})
	return err
}

// keepalive pings the server until the connection is closed; a ping that gets
// no pong within the interval closes the connection.
func (c *conn) keepalive(every time.Duration, log hclog.Logger) {
	defer c.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := c.c.Ping(ctx)
		cancel()
		if err != nil {
			select {
			case <-c.done:
				return
			default:
			}
			log.Warn("keepalive ping failed; closing", "error", err)
			c.c.Close(websocket.StatusGoingAway, "keepalive timeout")
			return
		}
	}
}

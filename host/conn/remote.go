package conn

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequestTimeout bounds the wait for response headers of one HTTP request to a
// remote server. Streams (SSE bodies) are not cut off by it.
const RequestTimeout = 60 * time.Second

// headerTransport adds static headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// newHTTPClient returns the client used for one remote server: its own
// connection pool, a 60 s response-header timeout, static headers, and no
// redirects (so credentials never follow a redirect to another origin).
func newHTTPClient(headers map[string]string) *http.Client {
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: RequestTimeout,
	}
	return &http.Client{
		Transport: &headerTransport{base: base, headers: headers},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// lifetimeTransport gives a transport's Connect a context that lives as long as
// the connection, not just the connect call: the SSE client ties its event
// stream to the context Connect receives. The connect call's own deadline still
// bounds the wait for Connect to return.
type lifetimeTransport struct {
	t    mcp.Transport
	life context.Context
}

func (l lifetimeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	lctx, cancel := context.WithCancel(l.life)
	stop := context.AfterFunc(ctx, cancel)
	c, err := l.t.Connect(lctx)
	if !stop() { // ctx ended first: the stream's context is already cancelled
		if c != nil {
			c.Close()
		}
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: c, cancel: cancel}, nil
}

// cancelOnClose ends the connection's lifetime context when it is closed.
type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelOnClose) Close() error {
	err := c.Connection.Close()
	c.once.Do(c.cancel)
	return err
}

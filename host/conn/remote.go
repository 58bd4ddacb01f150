package conn

import (
	"net"
	"net/http"
	"time"
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

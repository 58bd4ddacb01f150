package auth

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// recorder watches a flow's OAuth traffic for what the go-sdk's
// AuthorizationCodeHandler discovers but does not expose: the authorization
// server metadata it used (for the revocation endpoint at logout) and the
// resource it sent at the token endpoint (to send again on refresh). It only
// reads; requests and responses pass unchanged.
type recorder struct {
	base http.RoundTripper

	mu       sync.Mutex
	metas    []*oauthex.AuthServerMeta
	resource string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.GetBody != nil &&
		strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(body, 1<<16))
			body.Close()
			if form, err := url.ParseQuery(string(b)); err == nil && form.Get("grant_type") == "authorization_code" && form.Get("resource") != "" {
				r.mu.Lock()
				r.resource = form.Get("resource")
				r.mu.Unlock()
			}
		}
	}
	resp, err := r.base.RoundTrip(req)
	b, ok := wellKnownJSON(req, resp, err)
	if !ok {
		return resp, err
	}
	var m oauthex.AuthServerMeta
	if json.Unmarshal(b, &m) == nil && m.Issuer != "" && m.TokenEndpoint != "" {
		r.mu.Lock()
		r.metas = append(r.metas, &m)
		r.mu.Unlock()
	}
	return resp, nil
}

// wellKnownJSON returns the body of a successful JSON answer to a GET of a
// well-known metadata document, leaving resp's body readable again.
func wellKnownJSON(req *http.Request, resp *http.Response, err error) ([]byte, bool) {
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !strings.Contains(req.URL.Path, "/.well-known/") {
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, false
	}
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b, rerr == nil
}

// metaFor returns the recorded metadata whose token endpoint is tokenURL.
func (r *recorder) metaFor(tokenURL string) *oauthex.AuthServerMeta {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.metas) - 1; i >= 0; i-- {
		if r.metas[i].TokenEndpoint == tokenURL {
			return r.metas[i]
		}
	}
	return nil
}

func (r *recorder) lastResource() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resource
}

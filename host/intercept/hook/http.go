package hook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/mcphost/mcphost/host/config"
)

// webhook is an HTTP hook: the input is POSTed to url with headers.
type webhook struct {
	url     string
	headers http.Header
	client  *http.Client
}

func newWebhook(h *config.Hook, lookup func(string) (string, bool), client *http.Client) (*webhook, error) {
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q is not an http or https URL", h.URL)
	}
	allowed := map[string]bool{}
	for _, k := range h.AllowedEnvVars {
		allowed[k] = true
	}
	headers := http.Header{}
	for k, v := range h.Headers {
		headers.Set(k, interpolate(v, allowed, lookup))
	}
	headers.Set("Content-Type", "application/json")
	if client == nil {
		client = &http.Client{}
	}
	return &webhook{url: h.URL, headers: headers, client: client}, nil
}

// post sends in and reads the response: its status and body (at most
// MaxStdout bytes: more is ErrOutputTooLarge). A request that fails
// (connection, timeout) is an error.
func (w *webhook) post(ctx context.Context, in []byte) (output, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(in))
	if err != nil {
		return output{http: true}, fmt.Errorf("building the request: %w", err)
	}
	req.Header = w.headers.Clone()
	resp, err := w.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return output{http: true}, ctx.Err()
		}
		return output{http: true}, fmt.Errorf("POST failed: %w", stripURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxStdout+1))
	out := output{http: true, status: resp.StatusCode, stdout: body}
	switch {
	case err != nil && ctx.Err() != nil:
		return out, ctx.Err()
	case err != nil:
		return out, fmt.Errorf("reading the response: %w", err)
	case len(body) > MaxStdout:
		return out, fmt.Errorf("response body over %d bytes: %w", MaxStdout, ErrOutputTooLarge)
	}
	return out, nil
}

// stripURL returns the cause of a *url.Error: the hook's name already
// holds the URL.
func stripURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

package conn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/sdk"
)

// ErrNoOAuth is returned by Login and Logout for a server without an oauth block.
var ErrNoOAuth = errors.New("server has no oauth block")

// OAuth returns the server's built-in OAuth handler, creating it (with its
// stored token) on first use.
func (c *Conn) OAuth() (*hauth.Handler, error) {
	if c.cfg.OAuth == nil {
		return nil, fmt.Errorf("%s: %w", c.cfg.Name, ErrNoOAuth)
	}
	if c.primary != nil {
		return c.primary.OAuth() // one login for both sessions (legacy.go)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.oauth != nil {
		return c.oauth, nil
	}
	hc := hauth.HandlerConfig{
		Server: c.cfg.Name, ServerURL: c.cfg.URL, OAuth: c.cfg.OAuth,
		Store: c.m.opts.TokenStore, StoreKey: c.storeKey(),
		Logger: c.log.Named("oauth"),
	}
	if tel := c.m.opts.Telemetry; tel.Enabled() {
		name := c.cfg.Name
		hc.OnRefresh = func(outcome string) { tel.RecordTokenRefresh(context.Background(), name, outcome) }
	}
	if c.user != nil {
		hc.SubjectToken = c.user.subjectToken
	}
	h, err := hauth.NewHandler(hc)
	if err != nil {
		return nil, err
	}
	c.oauth = h
	return h, nil
}

// Login runs the server's OAuth login: the current session (if any) is
// closed, the needs-auth state is cleared, and a new connection is made
// during which the authorization-code flow may present a URL through
// present. It returns when the server accepted the new credentials.
func (c *Conn) Login(ctx context.Context, present hauth.Presenter) error {
	if c.cfg.OAuth == nil && c.cfg.AuthScheme != "" {
		if err := c.loginPlugin(ctx, present); err != nil {
			return err
		}
		return c.loginOutcome(c.reconnect(ctx))
	}
	h, err := c.OAuth()
	if err != nil {
		return err
	}
	end := h.BeginLogin(ctx, present)
	defer end()
	return c.loginOutcome(c.reconnect(ctx))
}

// loginOutcome is the error a login reports, from the connect that
// followed it: what failed, never the advice to log in (the user is doing
// just that).
func (c *Conn) loginOutcome(err error) error {
	var fe *hauth.FlowError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return fe
	case errors.Is(err, ErrNeedsAuth):
		// The login went through but the server still wants one.
		return &hauth.FlowError{Server: c.cfg.Name, Err: hauth.ErrCredentialsRefused}
	}
	return err
}

// reconnect closes the session, clears needs-auth and connects again.
func (c *Conn) reconnect(ctx context.Context) error {
	c.Reset()
	c.mu.Lock()
	if c.state == StateNeedsAuth || c.state == StateFailed {
		c.state, c.needsAuthUntil, c.retryAt = StatePending, time.Time{}, time.Time{}
	}
	c.mu.Unlock()
	_, err := c.Session(ctx)
	return err
}

// Logout revokes and deletes the server's tokens and closes its session.
// For a server whose credentials come from an auth plugin, the plugin
// drops what it holds (Forget) and the host deletes its saved state. Another
// running mcphost process (e.g. `serve`) has its own plugin process, which
// keeps its tokens until it restarts or they expire.
func (c *Conn) Logout(ctx context.Context) error {
	if c.cfg.OAuth == nil && c.cfg.AuthScheme != "" {
		err := c.forgetPlugin(ctx)
		if st := c.m.opts.TokenStore; st != nil { // deleted even if the plugin failed
			if derr := st.Delete(c.storeKey()); derr != nil && !errors.Is(derr, hauth.ErrNotFound) {
				err = fmt.Errorf("deleting stored credentials of %s: %w", c.cfg.Name, derr)
			}
		}
		c.Reset()
		return err
	}
	h, err := c.OAuth()
	if err != nil {
		return err
	}
	err = h.Logout(ctx)
	c.Reset()
	return err
}

// oauthTransport gives the SSE transport, which has no OAuthHandler, the
// same behaviour the go-sdk gives the streamable one: the handler's token
// on every request, and after a 401 (or 403 insufficient_scope) one
// Authorize and one retry.
type oauthTransport struct {
	base http.RoundTripper
	h    *hauth.Handler
}

func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.GetBody == nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.send(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if aerr := t.h.Authorize(req.Context(), req, resp); aerr != nil {
		return nil, aerr
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.send(retry)
}

func (t *oauthTransport) send(req *http.Request) (*http.Response, error) {
	ts, err := t.h.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		if err != nil && !errors.Is(err, hauth.ErrLoginRequired) {
			return nil, err
		}
		if tok != nil {
			req = req.Clone(req.Context())
			tok.SetAuthHeader(req)
		}
	}
	return t.base.RoundTrip(req)
}

// forgetPlugin tells the server's auth plugin to drop its credentials.
func (c *Conn) forgetPlugin(ctx context.Context) error {
	if c.plug.Auth == nil {
		return nil
	}
	pa, err := c.newPluginAuth(ctx, nil)
	if err != nil {
		return err
	}
	r, err := pa.client.Forget(ctx, &sdk.ForgetRequest{Server: pa.serverRef()})
	if err != nil {
		return &plugins.NotRespondingError{Plugin: pa.plugin, Kind: sdk.KindAuth, Err: err}
	}
	if err := r.Diagnostics.Err(); err != nil {
		return &AuthError{Server: c.cfg.Name, Plugin: pa.plugin, Err: err}
	}
	return nil
}

// SavedPluginState returns the stored record of a server whose
// credentials come from an auth plugin, or nil.
func (c *Conn) SavedPluginState() *hauth.Record {
	st := c.m.opts.TokenStore
	if st == nil || c.cfg.AuthScheme == "" {
		return nil
	}
	r, err := st.Load(c.storeKey())
	if err != nil {
		return nil
	}
	return r
}

// CredentialsStored tells the Manager that credentials were stored under
// key (a token store key) by someone else: another replica of the gateway
// that ran a login, or `mcphost auth login`. The connections of that key
// waiting for a login are woken (see Conn.CredentialsStored); it reports
// whether there was one.
func (m *Manager) CredentialsStored(key string) bool {
	var cs []*Conn
	m.mu.Lock()
	for _, c := range m.conns {
		cs = append(cs, c)
	}
	m.mu.Unlock()
	cs = append(cs, m.userConns("")...)
	woke := false
	for _, c := range cs {
		if c.cfg.OAuth != nil && c.storeKey() == key && c.CredentialsStored() {
			woke = true
		}
	}
	return woke
}

// CredentialsStored wakes the connection if it waits for a login (needs
// auth): its next use connects again, and its OAuth handler adopts the
// credentials stored meanwhile by another process. It reports whether it
// was waiting.
func (c *Conn) CredentialsStored() bool {
	waited := false
	for _, c := range []*Conn{c, c.legacy.conn()} {
		if c == nil {
			continue
		}
		c.mu.Lock()
		if c.state == StateNeedsAuth {
			c.state, c.needsAuthUntil = StatePending, time.Time{}
			waited = true
		}
		c.mu.Unlock()
	}
	if waited {
		// Its lists (the authenticate pseudo-tool alone) are stale.
		for _, kind := range []ChangeKind{ToolsChanged, PromptsChanged, ResourcesChanged} {
			c.listChanged(kind)
		}
	}
	return waited
}

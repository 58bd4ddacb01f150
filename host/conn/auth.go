package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/sdk"
)

// AuthPlugins gives access to auth schemes served by plugins.
type AuthPlugins interface {
	Auth(ctx context.Context, scheme string) (sdk.AuthClient, string, error)
}

// pluginAuth adapts an auth plugin to the go-sdk's auth.OAuthHandler: a token
// for every request, and Authorize after a 401 or 403. Every remote
// transport gets credentials through it: http through the go-sdk's
// OAuthHandler, sse and plugin transports through Token.
type pluginAuth struct {
	client sdk.AuthClient
	plugin string
	tel    *telemetry.Telemetry // traces the plugin RPCs
	store  hauth.Store          // keeps the plugin's saved state; may be nil
	key    string

	// principal, for a per-user connection, is its user as the plugin is
	// told (with the newest inbound token when the block asks for it).
	principal func() *sdk.Principal

	mu    sync.Mutex
	ref   sdk.ServerRef
	token *oauth2.Token
}

var _ auth.OAuthHandler = (*pluginAuth)(nil)

func (c *Conn) newPluginAuth(ctx context.Context, store hauth.Store) (*pluginAuth, error) {
	s := c.cfg
	client, name, err := c.plug.Auth.Auth(ctx, s.AuthScheme)
	if err != nil {
		return nil, err
	}
	ref := sdk.ServerRef{Scheme: s.AuthScheme, ServerName: s.Name, ServerURL: s.URL, Config: s.AuthConfig}
	if p := s.IdP; p != nil {
		ref.IdP, err = json.Marshal(sdk.IdPConfig{Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			IDToken: p.IDToken, IDTokenFile: p.IDTokenFile, Scopes: p.Scopes, CallbackPort: p.CallbackPort, LoginHint: p.LoginHint, AllowLoopback: p.AllowLoopback})
		if err != nil {
			return nil, fmt.Errorf("idp %s: %w", p.Name, err)
		}
	}
	pa := &pluginAuth{client: client, plugin: name, tel: c.m.opts.Telemetry, ref: ref, store: store, key: c.storeKey()}
	if uc := c.user; uc != nil {
		inbound := s.AuthInboundToken
		pa.principal = func() *sdk.Principal {
			u := uc.user()
			p := &sdk.Principal{Issuer: u.Issuer, Subject: u.Subject, Groups: slices.Clone(u.Groups)}
			if inbound {
				p.Token = u.Token
			}
			return p
		}
	}
	if store != nil {
		if r, err := store.Load(pa.key); err == nil {
			pa.ref.SavedState = r.PluginState
		}
	}
	return pa, nil
}

// serverRef returns the reference to send, with the current saved state.
func (p *pluginAuth) serverRef() sdk.ServerRef {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refLocked()
}

// refLocked is serverRef with p.mu held.
func (p *pluginAuth) refLocked() sdk.ServerRef {
	r := p.ref
	if p.principal != nil {
		r.Principal = p.principal()
	}
	return r
}

// save keeps state the plugin returned, with the token's expiry (for
// `mcphost auth status`; never the token itself).
func (p *pluginAuth) save(state []byte, expiry time.Time) error {
	p.ref.SavedState = state
	if p.store == nil {
		return nil
	}
	return p.store.Save(p.key, &hauth.Record{Server: p.ref.ServerName, Grant: "plugin " + p.ref.Scheme, PluginState: state, Token: &oauth2.Token{Expiry: expiry}})
}

// Token returns the current credential, asking the plugin when there is none
// or it expired.
func (p *pluginAuth) Token(ctx context.Context) (*oauth2.Token, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token.Valid() {
		return p.token, nil
	}
	rctx, span := p.tel.StartPluginRPC(ctx, p.plugin, "Token")
	resp, err := p.client.Token(rctx, &sdk.TokenRequest{Server: p.refLocked()})
	span.End(err)
	if err != nil {
		return nil, &plugins.NotRespondingError{Plugin: p.plugin, Kind: sdk.KindAuth, Err: err}
	}
	if err := resp.Diagnostics.Err(); err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", p.ref.ServerName, err)
	}
	if len(resp.SavedState) > 0 && !bytes.Equal(resp.SavedState, p.ref.SavedState) {
		if err := p.save(resp.SavedState, resp.Expiry); err != nil {
			return nil, fmt.Errorf("saving credentials for %s: %w", p.ref.ServerName, err)
		}
	}
	if resp.AccessToken == "" {
		return nil, nil
	}
	typ := resp.TokenType
	if typ == "" {
		typ = "Bearer"
	}
	p.token = &oauth2.Token{AccessToken: resp.AccessToken, TokenType: typ, Expiry: resp.Expiry}
	return p.token, nil
}

// TokenSource implements auth.OAuthHandler.
func (p *pluginAuth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	tok, err := p.Token(ctx)
	if err != nil || tok == nil {
		return nil, err
	}
	return tokenSource{p}, nil
}

type tokenSource struct{ p *pluginAuth }

func (t tokenSource) Token() (*oauth2.Token, error) {
	tok, err := t.p.Token(context.Background())
	if err == nil && tok == nil {
		err = errors.New("no credential")
	}
	return tok, err
}

// Authorize implements auth.OAuthHandler: the plugin reacts to the challenge;
// the next Token asks it again.
func (p *pluginAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	status, challenge := resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	resp.Body.Close()
	return p.authorize(ctx, req.URL.String(), status, challenge)
}

func (p *pluginAuth) authorize(ctx context.Context, url string, status int, challenge string) error {
	p.mu.Lock()
	p.token = nil
	p.mu.Unlock()
	rctx, span := p.tel.StartPluginRPC(ctx, p.plugin, "Authorize")
	r, err := p.client.Authorize(rctx, &sdk.AuthorizeRequest{Server: p.serverRef(), RequestURL: url, Status: status, WWWAuthenticate: challenge})
	span.End(err)
	if err != nil {
		return &plugins.NotRespondingError{Plugin: p.plugin, Kind: sdk.KindAuth, Err: err}
	}
	if err := r.Diagnostics.Err(); err != nil {
		return &AuthError{Server: p.ref.ServerName, Plugin: p.plugin, Err: err}
	}
	if r.Interaction != nil {
		// A login needs the user: it runs only when they ask for it
		// (`mcphost auth login`, the authenticate pseudo-tool).
		return fmt.Errorf("%w: the %s plugin needs a browser login", hauth.ErrLoginRequired, p.plugin)
	}
	return nil
}

// AuthError is an auth plugin's refusal to authorize a server (e.g. the IdP
// denied access): a failure to report as is, not a login to offer.
type AuthError struct {
	Server, Plugin string
	Err            error
}

// Error describes the refusal.
func (e *AuthError) Error() string {
	return fmt.Sprintf("authorizing %s (auth plugin %s): %v", e.Server, e.Plugin, e.Err)
}

// Unwrap returns the plugin's diagnostics as an error.
func (e *AuthError) Unwrap() error { return e.Err }

// bearerTransport adds the plugin's credential to each request (for the SSE
// transport, which has no OAuthHandler).
type bearerTransport struct {
	base http.RoundTripper
	auth *pluginAuth
}

func (b *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := b.auth.Token(req.Context())
	if err != nil {
		return nil, err
	}
	if tok != nil {
		req = req.Clone(req.Context())
		tok.SetAuthHeader(req)
	}
	return b.base.RoundTrip(req)
}

// loginPlugin asks the server's auth plugin to authorize it and drives the
// interaction it asks for, if any: the URL is checked and presented (a
// browser, a printed link, a downstream elicitation), the one-shot
// 127.0.0.1 callback is passed to the plugin's CompleteInteraction. This
// runs only when the user asks to log in; a background 401 that needs an
// interaction puts the server in needs-auth instead.
func (c *Conn) loginPlugin(ctx context.Context, present hauth.Presenter) error {
	if c.plug.Auth == nil {
		return fmt.Errorf("server %s uses auth scheme %q, but no auth plugin is available", c.cfg.Name, c.cfg.AuthScheme)
	}
	pa, err := c.newPluginAuth(ctx, c.m.opts.TokenStore)
	if err != nil {
		return err
	}
	r, err := pa.client.Authorize(ctx, &sdk.AuthorizeRequest{Server: pa.serverRef(), RequestURL: c.cfg.URL, Status: http.StatusUnauthorized})
	if err != nil {
		return &plugins.NotRespondingError{Plugin: pa.plugin, Kind: sdk.KindAuth, Err: err}
	}
	if err := r.Diagnostics.Err(); err != nil {
		return &AuthError{Server: c.cfg.Name, Plugin: pa.plugin, Err: err}
	}
	ia := r.Interaction
	if ia == nil {
		return nil // the plugin had what it needed (e.g. an IdP login shared with another server)
	}
	if err := hauth.CheckAuthorizationURL(ia.OpenURL); err != nil {
		return fmt.Errorf("the %s plugin's login URL for %s: %w", pa.plugin, c.cfg.Name, err)
	}
	if present == nil {
		return fmt.Errorf("%w: logging in to %s needs a browser", hauth.ErrLoginRequired, c.cfg.Name)
	}
	if ia.CallbackPath == "" {
		return present(ctx, ia.OpenURL)
	}
	cb, err := hauth.ListenInteraction(ia.CallbackPort, ia.CallbackPath)
	if err != nil {
		return err
	}
	defer cb.Close()
	ctx, cancel := context.WithTimeout(ctx, hauth.FlowTimeout)
	defer cancel()
	if err := present(ctx, ia.OpenURL); err != nil {
		return err
	}
	q, err := cb.Wait(ctx)
	if err != nil {
		return fmt.Errorf("waiting for the login to %s: %w", c.cfg.Name, err)
	}
	done, err := pa.client.CompleteInteraction(ctx, &sdk.CompleteInteractionRequest{Server: pa.serverRef(), ID: ia.ID, CallbackQuery: q, RedirectURI: cb.RedirectURL()})
	if err != nil {
		return &plugins.NotRespondingError{Plugin: pa.plugin, Kind: sdk.KindAuth, Err: err}
	}
	if err := done.Diagnostics.Err(); err != nil {
		return &AuthError{Server: c.cfg.Name, Plugin: pa.plugin, Err: err}
	}
	// Ask for the new credential now, so that its saved state is stored
	// even if no request follows in this process.
	_, err = pa.Token(ctx)
	return err
}

// authFailure classifies a failed connect that involved authorization (by
// type, never by message), or returns nil for any other failure.
// refused: a plugin transport reported the server refused the
// credentials; unauthorized: the server answered 401.
//
//   - A login is needed: needs-auth, with the advice to log in.
//   - An attempt to get credentials failed (hauth.FlowError): what failed.
//     For the authorization-code grant the server stays in needs-auth (a
//     new login may succeed); a machine grant is an ordinary failure,
//     retried with backoff, since a login cannot help it.
//   - An auth plugin refused (AuthError): as is.
//   - A 401 for a server with no oauth or auth block: it needs
//     configuration, not a login, and is told so.
func (c *Conn) authFailure(err error, refused, unauthorized bool) error {
	name := c.cfg.Name
	hasAuth := c.cfg.OAuth != nil || c.cfg.AuthScheme != ""
	var (
		fe *hauth.FlowError
		ae *AuthError
	)
	switch {
	case (refused || unauthorized) && !hasAuth:
		return fmt.Errorf("%w: the server answered 401 Unauthorized: it requires authorization, and its server block has no `oauth {}` or `auth \"SCHEME\" {}` block (`mcphost auth login` cannot help); add one, or the headers it expects", ErrNeedsAuth)
	case refused:
		return fmt.Errorf("%w: the server refused the credentials; run `mcphost auth login %s`", ErrNeedsAuth, name)
	case errors.Is(err, hauth.ErrLoginRequired):
		return fmt.Errorf("%w: run `mcphost auth login %s` or call the mcp__%s__authenticate tool", ErrNeedsAuth, name, name)
	case errors.As(err, &fe):
		if hauth.IsMachineGrant(c.cfg.OAuth) {
			return fe
		}
		return fmt.Errorf("%w: %w", ErrNeedsAuth, fe)
	case errors.As(err, &ae):
		return ae
	case unauthorized:
		return fmt.Errorf("%w: the server answered 401 Unauthorized; run `mcphost auth login %s`", ErrNeedsAuth, name)
	}
	return nil
}

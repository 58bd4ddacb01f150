package xaa

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// login is one OIDC login at an IdP, run by extauth.PerformOIDCLogin in a
// goroutine owned by the plugin: its code fetcher hands the authorization
// URL to Authorize (which returns it to the host as an interaction) and
// waits for the callback that CompleteInteraction delivers.
type login struct {
	id       string
	idpKey   string
	redirect string
	urlc     chan string     // the authorization URL, once
	callback chan url.Values // the callback's query, once
	done     chan struct{}   // closed when the login ended
	token    *oauth2.Token
	err      error
	cancel   context.CancelFunc
}

// errAccessDenied is an access_denied callback from the IdP.
var errAccessDenied = errors.New("access_denied")

// startLogin starts (or joins) the OIDC login at r's IdP and returns the
// interaction for the host: open the URL, deliver the callback.
func (p *Plugin) startLogin(r *request) (*sdk.Interaction, sdk.Diagnostics) {
	if r.idp.CallbackPort == 0 {
		return nil, sdk.Diagnostics{sdk.Errorf("", "No id_token", "idp %s has no id_token source and no callback_port for a browser login", r.idp.Name)}
	}
	p.mu.Lock()
	l := p.byIdP[r.idpKey]
	if l != nil {
		select {
		case <-l.done:
			l = nil
		default:
		}
	}
	if l == nil {
		ctx, cancel := context.WithTimeout(p.ctx, oauthkit.FlowTimeout)
		l = &login{
			id: newID(), idpKey: r.idpKey, redirect: fmt.Sprintf("http://127.0.0.1:%d%s", r.idp.CallbackPort, CallbackPath),
			urlc: make(chan string, 1), callback: make(chan url.Values, 1), done: make(chan struct{}), cancel: cancel,
		}
		p.logins[l.id] = l
		p.byIdP[r.idpKey] = l
		go p.runLogin(ctx, l, r.idp)
	}
	p.mu.Unlock()
	select {
	case u := <-l.urlc:
		l.urlc <- u // for a second server joining the same login
		return &sdk.Interaction{ID: l.id, OpenURL: u, CallbackPath: CallbackPath, CallbackPort: r.idp.CallbackPort}, nil
	case <-l.done:
		return nil, sdk.Diagnostics{sdk.Errorf("", "IdP login failed", "idp %s: %v", r.idp.Name, l.err)}
	}
}

// runLogin performs the OIDC login; it ends when the login completes,
// fails, or times out (oauthkit.FlowTimeout), or the plugin closes.
func (p *Plugin) runLogin(ctx context.Context, l *login, idp sdkIdP) {
	defer func() {
		l.cancel()
		p.mu.Lock()
		delete(p.logins, l.id)
		if p.byIdP[l.idpKey] == l {
			delete(p.byIdP, l.idpKey)
		}
		if l.err == nil {
			p.idTokens[l.idpKey], _ = l.token.Extra("id_token").(string)
		}
		p.mu.Unlock()
		close(l.done)
	}()
	scopes := idp.Scopes
	if len(scopes) == 0 {
		scopes = []string{"openid"}
	}
	client := oauthkit.NewGuardedClient(oauthkit.GuardOptions{AllowLoopback: idp.AllowLoopback})
	l.token, l.err = extauth.PerformOIDCLogin(ctx, &extauth.OIDCLoginConfig{
		IssuerURL:   idp.Issuer,
		Credentials: credentials(idp.ClientID, idp.ClientSecret),
		RedirectURL: l.redirect,
		Scopes:      scopes,
		LoginHint:   idp.LoginHint,
		HTTPClient:  client,
	}, func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		l.urlc <- args.URL
		select {
		case q := <-l.callback:
			if e := q.Get("error"); e != "" {
				if e == "access_denied" {
					return nil, fmt.Errorf("%w: %s", errAccessDenied, q.Get("error_description"))
				}
				return nil, fmt.Errorf("the IdP returned error %q: %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("the login was not completed within %v", oauthkit.FlowTimeout)
		}
	})
	if l.err == nil {
		if s, _ := l.token.Extra("id_token").(string); s == "" {
			l.err = errors.New("the IdP returned no id_token")
		}
	}
}

type sdkIdP = sdk.IdPConfig

// CompleteInteraction delivers an OIDC login's callback. When the login
// succeeds, the id_token is cached for every server on the IdP and this
// server's access token is obtained right away.
func (p *Plugin) CompleteInteraction(ctx context.Context, req *sdk.CompleteInteractionRequest) (*sdk.CompleteInteractionResponse, error) {
	r, d := parse(req.Server)
	if d.HasErrors() {
		return &sdk.CompleteInteractionResponse{Diagnostics: d}, nil
	}
	p.mu.Lock()
	l := p.logins[req.ID]
	p.mu.Unlock()
	if l == nil || l.idpKey != r.idpKey {
		return &sdk.CompleteInteractionResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "Unknown login", "the login for %s expired or was already completed; log in again", r.ref.ServerName)}}, nil
	}
	if req.RedirectURI != "" && req.RedirectURI != l.redirect {
		l.cancel()
		return &sdk.CompleteInteractionResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "Wrong redirect", "the host listened on %s, but the login was started for %s", req.RedirectURI, l.redirect)}}, nil
	}
	q, err := url.ParseQuery(req.CallbackQuery)
	if err != nil {
		l.cancel()
		return &sdk.CompleteInteractionResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "Invalid callback", "the IdP's callback could not be parsed")}}, nil
	}
	select {
	case l.callback <- q:
	default:
		return &sdk.CompleteInteractionResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "Login already completed", "this login's callback was already delivered")}}, nil
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if l.err != nil {
		if errors.Is(l.err, errAccessDenied) {
			return &sdk.CompleteInteractionResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "Access denied",
				"the IdP %s denied the login (%v); mcphost does not retry", r.idp.Name, l.err)}}, nil
		}
		return &sdk.CompleteInteractionResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("", "IdP login failed", "idp %s: %v", r.idp.Name, redactErr(l.err))}}, nil
	}
	idToken, _ := l.token.Extra("id_token").(string)
	flight := p.flight(r.key)
	flight.Lock()
	defer flight.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, d = p.exchange(ctx, r, idToken, r.ref.ServerURL, nil)
	return &sdk.CompleteInteractionResponse{Diagnostics: d}, nil
}

package testidp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
)

// loginPath is the login UI, where the OP sends the browser (with
// ?authRequestID=) to authenticate the user of an authorization request.
const loginPath = "/login"

// loginPage is the login form. The driver below reads it as a browser
// would: the form's action, its hidden fields, and an error paragraph.
var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>testidp: sign in</title></head>
<body>
<form method="POST" action="{{.Action}}">
<input type="hidden" name="authRequestID" value="{{.ID}}">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
{{if .Error}}<p class="error">{{.Error}}</p>
{{end}}<button type="submit">Sign in</button>
</form>
</body>
</html>
`))

// newLoginHandler serves the login form (GET) and checks it (POST): on
// success the auth request is done and the browser goes on to the OP's
// callback, which redirects to the client with the code; on failure the
// form comes back with the error.
func (p *IdP) newLoginHandler() http.Handler {
	render := func(w http.ResponseWriter, id, errMsg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := loginPage.Execute(w, struct{ Action, ID, Error string }{loginPath, id, errMsg}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
	callback := op.AuthCallbackURL(p.provider)
	check := func(w http.ResponseWriter, r *http.Request) {
		id := r.PostFormValue("authRequestID")
		if err := p.st.checkLogin(id, r.PostFormValue("username"), r.PostFormValue("password")); err != nil {
			render(w, id, err.Error())
			return
		}
		// op.AuthCallbackURL needs the issuer in the context: the
		// interceptor below puts it there.
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	}
	interceptor := op.NewIssuerInterceptor(p.provider.IssuerFromRequest)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			render(w, r.URL.Query().Get("authRequestID"), "")
		case http.MethodPost:
			interceptor.HandlerFunc(check)(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

// ErrLoginRefused: the login page refused the credentials (TryLogin's
// error wraps it, with the page's message).
var ErrLoginRefused = errors.New("login refused")

var (
	formRe   = regexp.MustCompile(`<form method="POST" action="([^"]*)">`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
	errorRe  = regexp.MustCompile(`<p class="error">([^<]*)</p>`)
)

// login drives the authorization code flow with PKCE (S256) for the public
// client clientID, step by step as the browser and the client would:
//
//  1. GET the authorization URL (client_id, redirect_uri, scope, state,
//     code_challenge); the OP redirects to the login page.
//  2. GET the login page and read its form.
//  3. POST the form with the credentials; the login page redirects to the
//     OP's callback (or shows the form again with an error).
//  4. GET the callback; the OP redirects to redirect_uri with code and
//     state, a redirect that is captured, not followed.
//  5. POST the code and the code_verifier to the token endpoint
//     (golang.org/x/oauth2's Exchange).
//
// No cookies are involved: the auth request ID travels in the URLs.
func (p *IdP) login(ctx context.Context, clientID, username, password string, scopes []string) (string, error) {
	if len(scopes) == 0 {
		scopes = p.DefaultScopes()
	}
	browser := p.httpClient()
	cfg := oauth2.Config{
		ClientID:    clientID,
		Endpoint:    oauth2.Endpoint{AuthURL: p.AuthorizationURL(), TokenURL: p.TokenURL(), AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: RedirectURI,
		Scopes:      scopes,
	}
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()

	// 1. The authorization request.
	loc, err := redirect(ctx, browser, http.MethodGet, cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), nil)
	if err != nil {
		return "", fmt.Errorf("authorization request: %w", err)
	}
	if strings.HasPrefix(loc.String(), RedirectURI) {
		return "", fmt.Errorf("authorization request: %w", redirectError(loc))
	}

	// 2. The login page.
	page, err := get(ctx, browser, loc.String())
	if err != nil {
		return "", fmt.Errorf("login page: %w", err)
	}
	m := formRe.FindStringSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("login page %s has no form", loc)
	}
	action, err := loc.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return "", fmt.Errorf("login form action: %w", err)
	}
	form := url.Values{"username": {username}, "password": {password}}
	for _, h := range hiddenRe.FindAllStringSubmatch(page, -1) {
		form.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
	}

	// 3. The login form, submitted.
	loc, err = redirect(ctx, browser, http.MethodPost, action.String(), form)
	if err != nil {
		return "", fmt.Errorf("login: %w", err)
	}

	// 4. The OP's callback, which redirects to the client.
	loc, err = redirect(ctx, browser, http.MethodGet, loc.String(), nil)
	if err != nil {
		return "", fmt.Errorf("callback: %w", err)
	}
	if !strings.HasPrefix(loc.String(), RedirectURI+"?") {
		return "", fmt.Errorf("callback redirected to %s, not to the client", loc)
	}
	q := loc.Query()
	if q.Get("error") != "" {
		return "", redirectError(loc)
	}
	if q.Get("state") != state {
		return "", fmt.Errorf("callback: state %q, sent %q", q.Get("state"), state)
	}

	// 5. The token request.
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, browser), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("token request: no access token")
	}
	return tok.AccessToken, nil
}

// redirectError is the OAuth error of a redirect to the client.
func redirectError(loc *url.URL) error {
	q := loc.Query()
	return fmt.Errorf("the authorization server answered %s: %s", q.Get("error"), q.Get("error_description"))
}

// redirect sends a request that must be answered by a redirect and
// returns its absolute Location. A page with the login form's error is
// ErrLoginRefused with the page's message.
func redirect(ctx context.Context, c *http.Client, method, target string, form url.Values) (*url.URL, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch resp.StatusCode {
	case http.StatusFound, http.StatusSeeOther, http.StatusMovedPermanently, http.StatusTemporaryRedirect:
	default:
		if m := errorRe.FindSubmatch(b); m != nil {
			return nil, fmt.Errorf("%w: %s", ErrLoginRefused, html.UnescapeString(string(m[1])))
		}
		return nil, fmt.Errorf("%s %s: HTTP %d, not a redirect: %.200s", method, target, resp.StatusCode, b)
	}
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, target, err)
	}
	return loc, nil
}

// get fetches a page that must be 200.
func get(ctx context.Context, c *http.Client, target string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: HTTP %d", target, resp.StatusCode)
	}
	return string(b), nil
}

// Authorize completes, as a user's browser would, an authorization request
// a client made (authURL, with the client's own redirect URI, state and
// PKCE challenge): it logs username in through the login page and follows
// the redirect back to the client's redirect URI (e.g. the loopback
// listener of a native client), whose answer it returns an error for
// unless it is 2xx. The client then redeems the code itself.
func (p *IdP) Authorize(ctx context.Context, authURL, username, password string) error {
	browser := p.httpClient()
	loc, err := redirect(ctx, browser, http.MethodGet, authURL, nil)
	if err != nil {
		return fmt.Errorf("authorization request: %w", err)
	}
	if loc.Query().Get("error") != "" {
		return fmt.Errorf("authorization request: %w", redirectError(loc))
	}
	page, err := get(ctx, browser, loc.String())
	if err != nil {
		return fmt.Errorf("login page: %w", err)
	}
	m := formRe.FindStringSubmatch(page)
	if m == nil {
		return fmt.Errorf("login page %s has no form", loc)
	}
	action, err := loc.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return fmt.Errorf("login form action: %w", err)
	}
	form := url.Values{"username": {username}, "password": {password}}
	for _, h := range hiddenRe.FindAllStringSubmatch(page, -1) {
		form.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
	}
	if loc, err = redirect(ctx, browser, http.MethodPost, action.String(), form); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	if loc, err = redirect(ctx, browser, http.MethodGet, loc.String(), nil); err != nil {
		return fmt.Errorf("callback: %w", err)
	}
	if loc.Query().Get("error") != "" {
		return redirectError(loc)
	}
	// The client's redirect URI.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the client's redirect URI: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the client's redirect URI answered %s", resp.Status)
	}
	return nil
}

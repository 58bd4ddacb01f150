package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// ErrLoginRequired is returned when a server needs a user login that was not
// asked for: the host never opens a browser on its own; `mcphost auth login`
// or the mcp__SERVER__authenticate tool starts one.
var ErrLoginRequired = errors.New("login required")

// Step-up limits (SECURITY.md A10): at most MaxStepUps re-authorizations for
// insufficient_scope per server within StepUpWindow.
const (
	MaxStepUps   = 2
	StepUpWindow = 10 * time.Minute
	// RefreshAhead is how long before expiry a token is refreshed.
	RefreshAhead = time.Minute
	// RefreshLeaseTTL is how long a process may hold the refresh lease of a
	// credential in a store that several processes share (a Leaser), or
	// less if its request ends sooner; it bounds the refresh request. It is
	// shorter than the 30 s a token request may wait, so that a request
	// queued behind a holder that died can still take over in time.
	RefreshLeaseTTL = 20 * time.Second
)

// The backoff of a process polling the store while another holds the
// refresh lease: doubling from leaseWaitMin to leaseWaitMax.
const (
	leaseWaitMin = 50 * time.Millisecond
	leaseWaitMax = 500 * time.Millisecond
)

// Presenter shows an authorization URL to the user: opens a browser, prints
// it, or sends it to a downstream client as a URL-mode elicitation. It
// returns once the URL is on its way; the callback completes the flow.
type Presenter func(ctx context.Context, authURL string) error

// HandlerConfig configures a Handler.
type HandlerConfig struct {
	// Server is the server's name, for messages. REQUIRED.
	Server string
	// ServerURL is the MCP endpoint. REQUIRED.
	ServerURL string
	// OAuth is the server's oauth block. REQUIRED.
	OAuth *config.OAuth
	// Store keeps tokens across runs under StoreKey. OPTIONAL: without it
	// tokens live in memory only.
	Store    Store
	StoreKey string
	// Logger receives debug events; never a token. OPTIONAL.
	Logger hclog.Logger
	// SubjectToken returns the gateway user's inbound token and its issuer,
	// for the token_exchange grant (RFC 8693): the token is sent only to
	// that issuer's token endpoint, or to the authorization server of
	// auth_server_metadata_url. REQUIRED for that grant; unused by others.
	SubjectToken func() (token, issuer string)
	// OnRefresh is told the outcome ("ok" or "error") of each refresh or
	// re-grant of the token (telemetry). OPTIONAL.
	OnRefresh func(outcome string)
}

// Handler is the built-in OAuth client of one server. It implements the
// go-sdk's auth.OAuthHandler, so the http transport uses it directly and the
// sse transport through BearerTransport.
//
// Tokens come from the store at start and are refreshed ahead of expiry,
// one refresh at a time, sending the resource again; a rotated refresh token
// is saved before it is used. Before refreshing, the stored record is read
// again: a token another process refreshed since is used rather than
// refreshed again, and a refresh starts from the stored (unspent) refresh
// token. With a store that several processes share (a Leaser), one process
// refreshes a credential at a time, under its lease, and the others wait
// for its result. A 401 first forces one refresh, then (for the
// authorization-code grant) needs a login, which only Login allows; the
// client-credentials and JWT-bearer grants re-run on their own.
type Handler struct {
	cfg HandlerConfig
	o   *config.OAuth
	log hclog.Logger
	// client is the SSRF-guarded client for every OAuth fetch.
	client *http.Client

	mu         sync.Mutex
	src        *tokenSource
	login      *loginState
	stepUps    []time.Time
	lastForced time.Time
	// wanted holds scopes a server asked for (403 insufficient_scope)
	// while no login was allowed; the next login requests them.
	wanted []string

	// DPoP (dpop.go): the key, and the token endpoints that take proofs.
	dpopMu        sync.Mutex
	dpop          *dpopKey
	dpopEndpoints []string
}

// loginState is a login allowed by BeginLogin: at most one
// authorization-code flow runs in it, plus step-ups the server asks for
// after that flow succeeded. Its fields are guarded by Handler.mu.
type loginState struct {
	ctx     context.Context
	present Presenter
	run     *flowRun // the flow started in this login, if any
}

// flowRun is one run of the authorization-code flow; done is closed when
// it ends, err then says how.
type flowRun struct {
	done chan struct{}
	err  error
}

// begin starts this login's flow (run), or returns the flow already
// started (prev; running reports it had not ended yet): a failed flow is
// never run again in the same login, and a successful one only again for a
// step-up.
func (l *loginState) begin(stepUp bool) (run, prev *flowRun, running bool) {
	if l.run != nil {
		select {
		case <-l.run.done:
			if l.run.err != nil || !stepUp {
				return nil, l.run, false
			}
			// A step-up after a successful flow runs a new one.
		default:
			return nil, l.run, true
		}
	}
	l.run = &flowRun{done: make(chan struct{})}
	return l.run, nil, false
}

func (r *flowRun) finish(err error) {
	r.err = err
	close(r.done)
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewHandler returns a server's OAuth handler, with the stored token if
// there is one.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.OAuth == nil || cfg.ServerURL == "" {
		return nil, errors.New("auth.NewHandler: OAuth and ServerURL are required")
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	h := &Handler{cfg: cfg, o: cfg.OAuth, log: log, client: oauthkit.NewGuardedClient(oauthkit.GuardOptions{AllowLoopback: cfg.OAuth.AllowLoopback})}
	h.client.Transport = &dpopFetchTransport{base: h.client.Transport, h: h}
	if src := h.stored(""); src != nil {
		h.src = src
	}
	return h, nil
}

// stored returns a token source for the stored credentials, or nil when
// there are none usable or their access token is except (the one just
// refused). A DPoP-bound token's key is installed with it.
func (h *Handler) stored(except string) *tokenSource {
	if h.cfg.Store == nil {
		return nil
	}
	r, err := h.cfg.Store.Load(h.cfg.StoreKey)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		h.log.Warn("stored credentials unusable", "error", err)
		return nil
	case r.Token == nil || (except != "" && r.Token.AccessToken == except):
		return nil
	case isMachineGrant(r.Grant):
		// Renewed by its grant, which only authorizeMachine can make.
		return nil
	}
	if err := h.useStoredDPoPKey(r); err != nil {
		h.log.Warn("stored DPoP key unusable; a new login is needed", "error", err)
		return nil
	}
	// A stored token's refreshes are stored too: its rotated refresh
	// token must outlive this process.
	return &tokenSource{h: h, rec: r, persist: true}
}

// adoptStored answers a challenge no login of this process can meet with
// the credentials stored since (a login by another replica of the gateway,
// or by `mcphost auth login`): it reports whether it installed them, so
// that the request is retried with them.
func (h *Handler) adoptStored() bool {
	h.mu.Lock()
	var current string
	if h.src != nil {
		if t := h.src.snapshot().Token; t != nil {
			current = t.AccessToken
		}
	}
	h.mu.Unlock()
	src := h.stored(current)
	if src == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.login != nil {
		return false // a login began meanwhile: it decides
	}
	h.src = src
	h.log.Debug("using the credentials another process stored", "server", h.cfg.Server)
	return true
}

// TokenSource implements auth.OAuthHandler: nil until there is a token.
func (h *Handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.src == nil {
		return nil, nil
	}
	return h.src, nil
}

// Record returns a copy of the current credentials record, or nil.
func (h *Handler) Record() *Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.src == nil {
		return nil
	}
	return h.src.snapshot()
}

// BeginLogin allows one interactive login through present until the
// returned function is called, and drops the current token so that the next
// request is challenged.
func (h *Handler) BeginLogin(ctx context.Context, present Presenter) (end func()) {
	h.mu.Lock()
	h.login = &loginState{ctx: ctx, present: present}
	h.src = nil
	h.stepUps = nil
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.login = nil
		h.mu.Unlock()
	}
}

// Authorize implements auth.OAuthHandler; the go-sdk's transport calls it
// after a 401 or 403 and retries the request once if it returns nil.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	challenges, _ := oauthkit.ParseChallenges(resp.Header.Values("WWW-Authenticate"))
	stepUp := false
	if resp.StatusCode == http.StatusForbidden {
		if oauthkit.ChallengeParam(challenges, "error") != "insufficient_scope" {
			return nil // not an auth problem; the retry surfaces the 403
		}
		if !h.allowStepUp() {
			return fmt.Errorf("%s: the server still answers insufficient_scope after %d step-up authorizations; giving up", h.cfg.Server, MaxStepUps)
		}
		stepUp = true
	} else if h.forceRefresh(ctx) {
		return nil
	}
	h.log.Debug("authorization required", "status", resp.StatusCode, "step_up", stepUp)
	switch h.o.Grant {
	case config.GrantClientCredentials, config.GrantJWTBearer, config.GrantTokenExchange:
		return h.authorizeMachine(ctx, req, challenges, stepUp)
	default:
		return h.authorizeCode(ctx, req, challenges, stepUp)
	}
}

// allowStepUp counts a step-up and reports whether it is within the limit.
func (h *Handler) allowStepUp() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.stepUps = slices.DeleteFunc(h.stepUps, func(t time.Time) bool { return now.Sub(t) > StepUpWindow })
	if len(h.stepUps) >= MaxStepUps {
		return false
	}
	h.stepUps = append(h.stepUps, now)
	return true
}

// forceRefresh answers a 401 with one refresh (at most one per 30 s), for a
// token the server revoked or expired early.
func (h *Handler) forceRefresh(ctx context.Context) bool {
	h.mu.Lock()
	src := h.src
	if src == nil || time.Since(h.lastForced) < 30*time.Second {
		h.mu.Unlock()
		return false
	}
	h.lastForced = time.Now()
	h.mu.Unlock()
	if err := src.renew(ctx); err != nil {
		h.log.Debug("refresh after 401 failed", "error", err)
		return false
	}
	return true
}

// authorizeCode runs the authorization-code flow, at most once per login
// (loginState.begin). A flow that failed is not started again by the
// requests that follow in the same login (the go-sdk's client falls back
// from server/discover to initialize, each answered 401): they get the same
// error.
func (h *Handler) authorizeCode(ctx context.Context, req *http.Request, challenges []oauthex.Challenge, stepUp bool) error {
	h.mu.Lock()
	login := h.login
	var granted []string
	if h.src != nil {
		granted = h.src.snapshot().Scopes
	}
	if stepUp {
		h.wanted = union(union(h.wanted, granted), strings.Fields(oauthkit.ChallengeParam(challenges, "scope")))
	}
	wanted := h.wanted
	if login == nil {
		h.mu.Unlock()
		if !stepUp && h.adoptStored() {
			return nil
		}
		return fmt.Errorf("%w: %s needs a login; run `mcphost auth login %s` or call the mcp__%s__authenticate tool", ErrLoginRequired, h.cfg.Server, h.cfg.Server, h.cfg.Server)
	}
	run, prev, running := login.begin(stepUp)
	h.mu.Unlock()
	if run == nil {
		return h.afterFlow(ctx, prev, running)
	}
	err := h.codeFlow(ctx, req, login, challenges, stepUp, granted, wanted)
	if err != nil {
		if !errors.As(err, new(*FlowError)) {
			err = &FlowError{Server: h.cfg.Server, Err: err}
		}
	} else {
		h.mu.Lock()
		h.wanted = nil
		h.mu.Unlock()
		h.log.Info("logged in", "server", h.cfg.Server)
	}
	run.finish(err)
	return err
}

// afterFlow answers a request that needs a flow while this login's flow
// runs or has run: it waits for a running flow, then lets the request be
// retried with the new token; a flow that failed gives its error again; a
// server that refuses the token a finished flow just obtained gets
// ErrCredentialsRefused rather than a second browser window.
func (h *Handler) afterFlow(ctx context.Context, prev *flowRun, running bool) error {
	select {
	case <-prev.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if prev.err != nil {
		return prev.err
	}
	if running {
		return nil
	}
	return &FlowError{Server: h.cfg.Server, Err: ErrCredentialsRefused}
}

// codeFlow is one run of the authorization-code flow with PKCE through the
// go-sdk's AuthorizationCodeHandler (client ID metadata documents,
// pre-registration or DCR, PKCE, state and RFC 9207 iss checks, the token
// request), with mcphost's loopback callback, store and SSRF guard.
//
// Discovery is done here first, strictly (discoverCode: exact issuer
// match, PKCE S256 advertised, no guessed endpoints), and the go-sdk is then
// given exactly the validated documents (pinnedTransport): its own
// discovery accepts an issuer differing by a trailing slash and falls back
// to default endpoints without any metadata, and reports failures as plain
// strings that cannot be classified.
func (h *Handler) codeFlow(ctx context.Context, req *http.Request, login *loginState, challenges []oauthex.Challenge, stepUp bool, granted, wanted []string) error {
	prm, asm, err := h.discoverCode(ctx, req.URL.String(), challenges)
	if err != nil {
		return err
	}
	cb, err := listenCallback(h.o.CallbackPort)
	if err != nil {
		return err
	}
	defer cb.close()
	pin, err := newPinnedTransport(h.client.Transport, prm, asm)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: pin, CheckRedirect: h.client.CheckRedirect, Timeout: h.client.Timeout}
	redirect := cb.RedirectURL()
	var installErr error
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		Client:              client,
		// RFC 9207 §2.4: an iss that is present is compared, advertised
		// or not; the callback has already refused a different one.
		AcceptUnadvertisedIss: true,
		ScopeFilter: func(discovered []string) []string {
			scopes := discovered
			if len(h.o.Scopes) > 0 && !stepUp {
				scopes = h.o.Scopes
			}
			if stepUp {
				scopes = union(granted, scopes)
			}
			return union(scopes, wanted)
		},
		AuthorizationCodeFetcher: func(fctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := CheckAuthorizationURL(args.URL); err != nil {
				return nil, fmt.Errorf("the authorization URL: %w", err)
			}
			u, _ := url.Parse(args.URL)
			cb.expect(u.Query().Get("state"), asm.Issuer, asm.AuthorizationResponseIssParameterSupported)
			wctx, cancel := context.WithTimeout(fctx, FlowTimeout)
			defer cancel()
			stop := context.AfterFunc(login.ctx, cancel)
			defer stop()
			if err := login.present(wctx, args.URL); err != nil {
				return nil, fmt.Errorf("presenting the login URL: %w", err)
			}
			res, err := cb.wait(wctx)
			if err != nil && login.ctx.Err() != nil {
				return nil, fmt.Errorf("login cancelled: %w", login.ctx.Err())
			}
			if err != nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: no login completed within %s", ErrLoginTimeout, FlowTimeout)
			}
			return res, err
		},
		NewTokenSource: func(_ context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			r := &Record{
				Server: h.cfg.Server, Grant: config.GrantAuthorizationCode,
				ClientID: oc.ClientID, ClientSecret: oc.ClientSecret, AuthStyle: oc.Endpoint.AuthStyle,
				TokenURL: oc.Endpoint.TokenURL, Resource: prm.Resource, Token: tok,
				Scopes: oauthkit.ScopesOf(tok), Issuer: asm.Issuer, RevocationURL: asm.RevocationEndpoint,
			}
			if r.Scopes == nil {
				r.Scopes = oc.Scopes
			}
			src, err := h.install(r, true)
			installErr = err
			return src, err
		},
	}
	switch {
	case h.o.ClientID != "":
		pc := &oauthex.ClientCredentials{ClientID: h.o.ClientID}
		if h.o.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.o.ClientSecret}
		}
		cfg.PreregisteredClient = pc
	default:
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "mcphost",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	if h.o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.o.ClientMetadataURL}
	}
	ach, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return fmt.Errorf("OAuth configuration: %w", err)
	}
	// The go-sdk reads only the request's URL (the resource it discovers
	// for) and the challenge; both are the pinned ones.
	preq, err := http.NewRequestWithContext(ctx, http.MethodPost, prm.Resource, nil)
	if err != nil {
		return fmt.Errorf("%w: resource %q", oauthkit.ErrInvalidMetadata, prm.Resource)
	}
	presp := &http.Response{
		StatusCode: http.StatusUnauthorized,
		Header:     http.Header{"Www-Authenticate": {pin.challenge(challenges)}},
		Body:       http.NoBody,
	}
	if err := ach.Authorize(ctx, preq, presp); err != nil {
		return err
	}
	return installErr
}

// discoverCode finds and validates the server's protected-resource and
// authorization server metadata for the authorization-code flow (PKCE S256
// required); auth_server_metadata_url replaces AS discovery.
func (h *Handler) discoverCode(ctx context.Context, reqURL string, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	return h.discoverWith(ctx, reqURL, challenges, oauthkit.MetadataOptions{AllowLoopback: h.o.AllowLoopback, RequirePKCE: true})
}

// install makes r the current credentials, saving it first when persist.
// A failed save is a *storeError.
func (h *Handler) install(r *Record, persist bool) (*tokenSource, error) {
	if err := h.bindDPoPKey(r); err != nil {
		return nil, err
	}
	if persist && h.cfg.Store != nil {
		if err := h.cfg.Store.Save(h.cfg.StoreKey, r); err != nil {
			return nil, &storeError{fmt.Errorf("saving credentials for %s: %w", h.cfg.Server, err)}
		}
	}
	return h.use(r, persist), nil
}

// bindDPoPKey dates r and, for a DPoP-bound token, records in it the key
// the token is bound to (the handler's), to be stored with it.
func (h *Handler) bindDPoPKey(r *Record) error {
	r.UpdatedAt = time.Now()
	if r.Token != nil && strings.EqualFold(r.Token.TokenType, "DPoP") {
		k, err := h.dpopKeyFor(false)
		if err != nil || k == nil {
			return fmt.Errorf("%s: a DPoP-bound token without a DPoP key", h.cfg.Server)
		}
		r.DPoPKey = k.pem()
	}
	return nil
}

// use makes r, as it is, the current credentials.
func (h *Handler) use(r *Record, persist bool) *tokenSource {
	src := &tokenSource{h: h, rec: r, persist: persist}
	h.mu.Lock()
	h.src = src
	h.mu.Unlock()
	return src
}

// useStoredDPoPKey makes the DPoP key (RFC 9449) stored with r the
// handler's, for r's tokens read from the store (stored by this process
// before, or by another sharing the store): they are bound to that key, and
// a proof signed with any other is refused. The key already in use is kept
// (with the nonces its servers sent) when it is that one. A record without
// a key changes nothing; a DPoP-bound token stored without one cannot be
// used.
func (h *Handler) useStoredDPoPKey(r *Record) error {
	if r.DPoPKey == "" {
		if r.Token != nil && strings.EqualFold(r.Token.TokenType, "DPoP") {
			return errors.New("a DPoP-bound token stored without its DPoP key")
		}
		return nil
	}
	h.dpopMu.Lock()
	same := h.dpop != nil && h.dpop.pem() == r.DPoPKey
	h.dpopMu.Unlock()
	if !same {
		k, err := parseDPoPKey(r.DPoPKey)
		if err != nil {
			return err
		}
		h.dpopMu.Lock()
		h.dpop = k
		h.dpopMu.Unlock()
	}
	h.noteDPoPEndpoint(r.TokenURL)
	return nil
}

// storeError is a failure of the token store (reading, saving or leasing a
// record), as opposed to one of the authorization server: a machine grant,
// which needs nothing stored, gets its token without the store then.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// isStoreError reports whether err is (or wraps) a *storeError.
func isStoreError(err error) bool {
	var se *storeError
	return errors.As(err, &se)
}

// Logout revokes the refresh and access tokens at the authorization
// server's RFC 7009 endpoint (if it has one), then deletes them locally
// whatever the revocation's outcome. The returned error reports a failed
// revocation; the local tokens are gone either way.
func (h *Handler) Logout(ctx context.Context) error {
	h.mu.Lock()
	src := h.src
	h.src = nil
	h.mu.Unlock()
	var rec *Record
	if src != nil {
		rec = src.snapshot()
	} else if h.cfg.Store != nil {
		if r, err := h.cfg.Store.Load(h.cfg.StoreKey); err == nil {
			rec = r
		}
	}
	var revokeErr error
	if rec != nil && rec.Token != nil {
		revokeErr = h.revoke(ctx, rec)
	}
	h.dpopMu.Lock()
	h.dpop = nil // the next login binds its tokens to a new key
	h.dpopMu.Unlock()
	if h.cfg.Store != nil {
		if err := h.cfg.Store.Delete(h.cfg.StoreKey); err != nil {
			return fmt.Errorf("deleting stored credentials of %s: %w", h.cfg.Server, err)
		}
	}
	return revokeErr
}

// revoke sends RFC 7009 revocation requests: the refresh token first (which
// at most servers also ends its access tokens), then the access token.
func (h *Handler) revoke(ctx context.Context, rec *Record) error {
	if rec.RevocationURL == "" {
		return fmt.Errorf("%s: the authorization server has no revocation endpoint; the tokens were deleted locally but stay valid until they expire", h.cfg.Server)
	}
	var errs []error
	for _, t := range []struct{ value, hint string }{{rec.Token.RefreshToken, "refresh_token"}, {rec.Token.AccessToken, "access_token"}} {
		if t.value == "" {
			continue
		}
		form := url.Values{"token": {t.value}, "token_type_hint": {t.hint}}
		if err := h.postRevocation(ctx, rec, form); err != nil {
			errs = append(errs, fmt.Errorf("revoking the %s: %w", strings.ReplaceAll(t.hint, "_", " "), err))
		}
	}
	return errors.Join(errs...)
}

func (h *Handler) postRevocation(ctx context.Context, rec *Record, form url.Values) error {
	req, err := oauthkit.NewFormRequest(ctx, rec.RevocationURL, form, oauthkit.ClientAuth{ClientID: rec.ClientID, ClientSecret: rec.ClientSecret, Style: rec.AuthStyle})
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revocation endpoint answered %s", resp.Status)
	}
	return nil
}

// tokenSource hands out a server's access token, refreshing it ahead of
// expiry. Its mutex makes concurrent callers share one refresh (and one
// wait for another process's refresh).
type tokenSource struct {
	h *Handler
	// persist: the record lives in the handler's store (saved after each
	// refresh, read again before each).
	persist bool

	mu  sync.Mutex
	rec *Record
	// regrant re-runs a grant that has no refresh token (client
	// credentials, JWT bearer).
	regrant func(ctx context.Context) (*oauth2.Token, error)
}

func (s *tokenSource) snapshot() *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := *s.rec
	if r.Token != nil {
		t := *r.Token
		r.Token = &t
	}
	return &r
}

// usable reports whether tok can be used without refreshing it first.
func usable(tok *oauth2.Token) bool {
	return tok != nil && (tok.Expiry.IsZero() || time.Until(tok.Expiry) > RefreshAhead)
}

// Token implements oauth2.TokenSource.
func (s *tokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok := s.rec.Token
	if usable(tok) {
		return tok, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.renewLocked(ctx); err != nil {
		if tok != nil && time.Now().Before(tok.Expiry) {
			return tok, nil // still valid: try again on the next request
		}
		return nil, err
	}
	return s.rec.Token, nil
}

// renew refreshes now, whatever the expiry (the server refused the token).
func (s *tokenSource) renew(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewLocked(ctx)
}

// renewLocked replaces the current token, found expiring or refused: by
// the one another process stored since, if it differs and is usable, or by
// a refresh. A refresh starts from the stored record, whose refresh token
// is the unspent one when another process refreshed since; a store that is
// a Leaser is refreshed under the credential's lease (renewLeased).
//
// Without a Leaser, a store that cannot be read (or has no record) leaves
// the refresh to the record in memory, as before stores were shared.
func (s *tokenSource) renewLocked(ctx context.Context) error {
	store := s.h.cfg.Store
	if !s.persist || store == nil {
		return s.refreshLocked(ctx)
	}
	stale := ""
	if s.rec.Token != nil {
		stale = s.rec.Token.AccessToken
	}
	if l, ok := store.(Leaser); ok {
		err := s.renewLeased(ctx, l, stale)
		if err != nil && s.regrant != nil && isStoreError(err) {
			// A machine grant needs nothing stored: with the shared store
			// unreachable, this process renews its token on its own (and
			// saves it if the store is back by then) rather than stop
			// working.
			s.h.log.Warn("the shared token store is unreachable: renewing the token in this process only", "server", s.h.cfg.Server, "error", err)
			return s.refreshLocked(ctx)
		}
		return err
	}
	switch adopted, err := s.reloadLocked(stale); {
	case err != nil:
		s.h.log.Debug("stored credentials not read again before refreshing", "server", s.h.cfg.Server, "error", err)
	case adopted:
		return nil
	}
	return s.refreshLocked(ctx)
}

// renewLeased renews the token in a store shared by several processes, so
// that one refresh token is spent once: it uses a token another process
// stored since; otherwise it takes the credential's lease, reads the store
// again (the previous holder may just have finished), refreshes and saves
// under the lease. While another process holds the lease it polls the
// store until that process's token appears, or until the lease is free
// (its holder failed, or died and the lease expired) and it takes it. It
// gives up when ctx ends. It never refreshes without the lease: an error
// taking it (other than ErrLeaseHeld) fails the refresh.
func (s *tokenSource) renewLeased(ctx context.Context, l Leaser, stale string) error {
	wait, waited := leaseWaitMin, false
	for {
		if adopted, err := s.reloadLocked(stale); adopted || err != nil {
			return err
		}
		if !s.refreshableLocked() {
			return s.refreshLocked(ctx) // says why not, without a lease
		}
		ttl := RefreshLeaseTTL
		if dl, ok := ctx.Deadline(); ok {
			ttl = min(ttl, time.Until(dl))
		}
		if ttl <= 0 {
			return fmt.Errorf("refreshing the token of %s: %w", s.h.cfg.Server, context.DeadlineExceeded)
		}
		release, err := l.Lease(ctx, s.h.cfg.StoreKey, ttl)
		switch {
		case err == nil:
			return s.refreshLeasedLocked(ctx, release, ttl, stale)
		case !errors.Is(err, ErrLeaseHeld):
			return &storeError{fmt.Errorf("refreshing the token of %s: taking the refresh lease: %w", s.h.cfg.Server, err)}
		case !waited:
			waited = true
			s.h.log.Debug("another process is refreshing the token; waiting for it", "server", s.h.cfg.Server)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("refreshing the token of %s: waiting for another process's refresh: %w", s.h.cfg.Server, ctx.Err())
		}
		wait = min(2*wait, leaseWaitMax)
	}
}

// refreshLeasedLocked refreshes under a lease taken for ttl, and releases
// it. The refresh request ends with the lease; a token it obtained is saved
// even if the lease has just expired (the authorization server has already
// rotated the refresh token).
func (s *tokenSource) refreshLeasedLocked(ctx context.Context, release func(), ttl time.Duration, stale string) error {
	defer release()
	if adopted, err := s.reloadLocked(stale); adopted || err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, ttl)
	defer cancel()
	return s.refreshLocked(rctx)
}

// reloadLocked reads the stored record and makes it the current one (the
// base of a refresh); it reports whether its token replaces stale (the
// access token found expiring or refused) as it is. A record that is gone
// (a logout, maybe by another process) needs a new login: refreshing from
// the record in memory might spend a refresh token another process spent.
// (A machine grant's, which needs no login, is granted again: the record in
// memory stays the base, and the new token is saved.)
func (s *tokenSource) reloadLocked(stale string) (adopted bool, err error) {
	r, err := s.h.cfg.Store.Load(s.h.cfg.StoreKey)
	if errors.Is(err, ErrNotFound) || (err == nil && r.Token == nil) {
		if s.regrant != nil {
			return false, nil
		}
		return false, fmt.Errorf("%w: the stored credentials of %s were deleted (a logout?)", ErrLoginRequired, s.h.cfg.Server)
	}
	if err != nil {
		return false, &storeError{fmt.Errorf("refreshing the token of %s: reading the stored credentials: %w", s.h.cfg.Server, err)}
	}
	// Logged in again elsewhere, maybe with a new key: the stored tokens
	// are bound to it.
	if err := s.h.useStoredDPoPKey(r); err != nil {
		return false, fmt.Errorf("refreshing the token of %s: stored DPoP key: %w", s.h.cfg.Server, err)
	}
	s.rec = r
	if r.Token.AccessToken == stale || !usable(r.Token) {
		return false, nil
	}
	s.h.log.Debug("using the token another process refreshed", "server", s.h.cfg.Server, "expiry", r.Token.Expiry)
	return true, nil
}

// refreshableLocked reports whether the current record can be refreshed
// (or re-granted) without a login.
func (s *tokenSource) refreshableLocked() bool {
	return (s.rec.Token != nil && s.rec.Token.RefreshToken != "" && s.rec.TokenURL != "") || s.regrant != nil
}

// refreshLocked refreshes (or re-grants) the current record's token and
// saves the result before it is used.
func (s *tokenSource) refreshLocked(ctx context.Context) error {
	var (
		tok *oauth2.Token
		err error
	)
	switch {
	case s.rec.Token != nil && s.rec.Token.RefreshToken != "" && s.rec.TokenURL != "":
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {s.rec.Token.RefreshToken}}
		if s.rec.Resource != "" {
			form.Set("resource", s.rec.Resource)
		}
		tok, err = oauthkit.PostToken(ctx, s.h.client, s.rec.TokenURL, form, oauthkit.ClientAuth{ClientID: s.rec.ClientID, ClientSecret: s.rec.ClientSecret, Style: s.rec.AuthStyle})
		if err == nil && tok.RefreshToken == "" {
			tok.RefreshToken = s.rec.Token.RefreshToken // not rotated
		}
		if err != nil && s.regrant != nil {
			// A machine grant's refresh token (spent by a process whose
			// token could not be saved, say) is not needed: grant again.
			s.h.log.Debug("refreshing a machine grant's token failed; granting a new one", "server", s.h.cfg.Server, "error", err)
			tok, err = s.regrant(ctx)
		}
	case s.regrant != nil:
		tok, err = s.regrant(ctx)
	default:
		return fmt.Errorf("%w: the token of %s expired and cannot be refreshed", ErrLoginRequired, s.h.cfg.Server)
	}
	if f := s.h.cfg.OnRefresh; f != nil {
		f(map[bool]string{true: "ok", false: "error"}[err == nil])
	}
	if err != nil {
		s.h.log.Debug("token refresh failed", "server", s.h.cfg.Server, "error", err)
		return fmt.Errorf("refreshing the token of %s: %w", s.h.cfg.Server, err)
	}
	next := *s.rec
	next.Token = tok
	if sc := oauthkit.ScopesOf(tok); sc != nil {
		next.Scopes = sc
	}
	next.UpdatedAt = time.Now()
	if s.persist && s.h.cfg.Store != nil {
		// Saved before use: a rotated refresh token must not be lost.
		if err := s.h.cfg.Store.Save(s.h.cfg.StoreKey, &next); err != nil {
			if s.regrant == nil {
				return fmt.Errorf("saving refreshed credentials of %s: %w", s.h.cfg.Server, err)
			}
			// A machine grant's token serves this process unsaved (the
			// others get their own) until a renewal can save one.
			s.h.log.Warn("saving the renewed token in the shared token store failed: it is kept in this process only", "server", s.h.cfg.Server, "error", err)
		}
	}
	s.rec = &next
	s.h.log.Debug("token refreshed", "server", s.h.cfg.Server, "expiry", tok.Expiry)
	return nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// pinnedTransport gives the go-sdk's AuthorizationCodeHandler the
// metadata mcphost has already fetched and validated, so that its own
// discovery cannot see anything else: the challenge points at a synthetic
// protected-resource document (the validated one, naming only the
// validated issuer), the issuer's well-known URLs answer with the validated
// authorization server document, and every other well-known GET answers
// 404 without leaving the process. Registration and token requests go to
// the network through base (the guarded client's transport).
type pinnedTransport struct {
	base   http.RoundTripper
	issuer string
	prm    []byte
	asm    []byte
}

// pinnedHost names the synthetic protected-resource document; .invalid
// never resolves (RFC 6761), and the transport answers it itself.
const pinnedHost = "prm.mcphost.invalid"

func newPinnedTransport(base http.RoundTripper, prm *oauthex.ProtectedResourceMetadata, asm *oauthex.AuthServerMeta) (*pinnedTransport, error) {
	p, err := json.Marshal(oauthex.ProtectedResourceMetadata{Resource: prm.Resource, AuthorizationServers: []string{asm.Issuer}, ScopesSupported: prm.ScopesSupported})
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(asm)
	if err != nil {
		return nil, err
	}
	return &pinnedTransport{base: base, issuer: asm.Issuer, prm: p, asm: a}, nil
}

// challenge is the WWW-Authenticate value shown to the go-sdk: the
// synthetic resource_metadata, and the server's scope and error if they
// are plain enough to quote.
func (o *pinnedTransport) challenge(cs []oauthex.Challenge) string {
	c := fmt.Sprintf(`Bearer resource_metadata="https://%s/"`, pinnedHost)
	if s := oauthkit.ChallengeParam(cs, "scope"); s != "" && quotable(s) {
		c += fmt.Sprintf(`, scope="%s"`, s)
	}
	if e := oauthkit.ChallengeParam(cs, "error"); e != "" && quotable(e) {
		c += fmt.Sprintf(`, error="%s"`, e)
	}
	return c
}

// quotable reports whether s can be put between quotes in a header
// without escaping: printable ASCII (RFC 9110 qdtext) but '"' and '\\'.
func quotable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (o *pinnedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	status := http.StatusOK
	switch {
	case req.URL.Host == pinnedHost:
		body = o.prm
	case req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/.well-known/"):
		if sameOrigin(req.URL, o.issuer) {
			body = o.asm
		} else {
			status, body = http.StatusNotFound, []byte("{}")
		}
	default:
		return o.base.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(bytes.NewReader(body)),
		Request: req, ContentLength: int64(len(body)),
	}, nil
}

func sameOrigin(u *url.URL, other string) bool {
	o, err := url.Parse(other)
	return err == nil && strings.EqualFold(u.Scheme, o.Scheme) && strings.EqualFold(u.Host, o.Host)
}

// issuerFromMetadataURL derives the issuer an RFC 8414 / OpenID metadata URL
// belongs to (path insertion or appending).
func issuerFromMetadataURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	p := u.Path
	for _, wk := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		if rest, ok := strings.CutPrefix(p, wk); ok {
			p = rest
			break
		}
		if rest, ok := strings.CutSuffix(p, wk); ok {
			p = rest
			break
		}
	}
	u.Path, u.RawQuery, u.Fragment = p, "", ""
	return u.String()
}

package host_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

func oauthHost(t *testing.T, hcl string, store hauth.Store, logs io.Writer) *host.Host {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "mcphost.hcl")
	if err := os.WriteFile(p, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "MCPHOST_CONFIG_DIR" || k == "HOME" {
			return dir, true
		}
		return "", false
	}
	cfg, diags := config.Load(&config.LoadOptions{LookupEnv: lookup, WorkDir: dir, Files: []string{p}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	h, err := host.New(cfg, &host.Options{
		Logger:     hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: logs}),
		LookupEnv:  lookup,
		TokenStore: store,
		OutputDir:  filepath.Join(dir, "out"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// protConfig is a server "prot" at url over transport with an oauth block
// (authorization code), all of its tools allowed.
func protConfig(transport, url string) string {
	return fmt.Sprintf(`
server "prot" {
  transport = %q
  url = %q
  oauth {
    allow_loopback = true
  }
}
permissions {
  allow = ["mcp__prot__*"]
}
`, transport, url)
}

// browser follows the authorization URL like a user's browser: to the AS,
// which redirects to mcphost's loopback callback.
func browser(t *testing.T, opened *[]string) hauth.Presenter {
	return func(ctx context.Context, u string) error {
		*opened = append(*opened, u)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		return nil
	}
}

func TestOAuthLoginRefreshRotationLogout(t *testing.T) {
	defer setUmask(0)() // the store must not depend on the umask
	as := fakeas.New()
	defer as.Close()
	as.TokenTTL = 30 // inside RefreshAhead: every use refreshes
	storeDir := filepath.Join(t.TempDir(), "tokens")
	store := &hauth.FileStore{Dir: storeDir}
	logs := &syncbuf.Buffer{}
	h := oauthHost(t, protConfig("http", as.URL()), store, logs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Before login: needs-auth, and the authenticate pseudo-tool instead of tools.
	tools, _ := h.Tools(ctx)
	if len(tools) != 1 || tools[0].Name != "mcp__prot__authenticate" || !h.IsAuthTool(ctx, "prot", "authenticate") {
		t.Fatalf("tools before login = %v, want only the authenticate pseudo-tool", tools)
	}
	if got := h.Connections().Get("prot").State(); got != conn.StateNeedsAuth {
		t.Fatalf("state = %v, want needs-auth", got)
	}

	var opened []string
	if err := h.Login(ctx, "prot", browser(t, &opened)); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if len(opened) != 1 {
		t.Fatalf("browser opened %d times", len(opened))
	}
	res, err := h.CallTool(ctx, "mcp__prot__whoami", map[string]any{}, nil)
	if err != nil || host.TextOf(res.Content) != "you" {
		t.Fatalf("call after login: %v %v", res, err)
	}

	// resource (RFC 8707) on the authorize, token and refresh requests.
	want := as.URL()
	auths := as.Requests("/authorize")
	if len(auths) != 1 || auths[0].Form.Get("resource") != want || auths[0].Form.Get("code_challenge_method") != "S256" {
		t.Errorf("authorize requests = %+v", auths)
	}
	toks := as.Requests("/token")
	var grants []string
	for _, r := range toks {
		grants = append(grants, r.Form.Get("grant_type"))
		if r.Form.Get("resource") != want {
			t.Errorf("%s token request without resource %q: %v", r.Form.Get("grant_type"), want, r.Form)
		}
	}
	if len(toks) < 2 || grants[0] != "authorization_code" || grants[1] != "refresh_token" {
		t.Errorf("token grants = %v, want authorization_code then refresh_token (30 s tokens refresh ahead)", grants)
	}

	// The rotated refresh token is what the store holds.
	key := hauth.Key("prot", h.Config().Server("prot").ConfigHash())
	rec, err := store.Load(key)
	if err != nil {
		t.Fatal(err)
	}
	last := toks[len(toks)-1]
	if last.Form.Get("grant_type") == "refresh_token" && rec.Token.RefreshToken == last.Form.Get("refresh_token") {
		t.Errorf("stored refresh token is the one already used; rotation was not saved")
	}
	for path, mode := range map[string]os.FileMode{storeDir: 0o700} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", path, st.Mode().Perm(), mode, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(storeDir, "*"))
	for _, f := range files {
		if st, _ := os.Stat(f); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}

	st := h.AuthStatuses()
	if len(st) != 1 || !st[0].LoggedIn || !st[0].HasRefreshToken || st[0].Issuer != as.AS.URL {
		t.Errorf("AuthStatuses = %+v", st)
	}

	// Logout revokes both tokens at the AS and deletes the record.
	rec, _ = store.Load(key)
	if err := h.Logout(ctx, "prot"); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	revoked := strings.Join(as.Revoked(), " ")
	if !strings.Contains(revoked, rec.Token.RefreshToken) || !strings.Contains(revoked, rec.Token.AccessToken) {
		t.Errorf("revoked %q, want the refresh and the access token", revoked)
	}
	if _, err := store.Load(key); !errors.Is(err, hauth.ErrNotFound) {
		t.Errorf("after logout the store still has a record (%v)", err)
	}

	// No token ever reaches the logs, even at trace level.
	for _, r := range as.Requests("/token") {
		for _, secret := range []string{r.Form.Get("refresh_token"), r.Form.Get("code")} {
			if secret != "" && strings.Contains(logs.String(), secret) {
				t.Errorf("a credential appears in the logs")
			}
		}
	}
	for _, a := range as.MCPAuthorizations() {
		if tok := strings.TrimPrefix(a, "Bearer "); tok != "" && strings.Contains(logs.String(), tok) {
			t.Errorf("an access token appears in the logs")
		}
	}
	if !strings.Contains(logs.String(), "token refreshed") {
		t.Errorf("logs do not show the refresh; were debug logs captured?")
	}
}

func TestOAuthLogoutDeletesEvenIfRevocationFails(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	as.NoRevocation = true
	store := &hauth.FileStore{Dir: t.TempDir()}
	h := oauthHost(t, fmt.Sprintf("server \"prot\" {\n transport = \"http\"\n url = %q\n oauth {\n  allow_loopback = true\n }\n}\n", as.URL()), store, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opened []string
	if err := h.Login(ctx, "prot", browser(t, &opened)); err != nil {
		t.Fatal(err)
	}
	key := hauth.Key("prot", h.Config().Server("prot").ConfigHash())
	if err := h.Logout(ctx, "prot"); err == nil {
		t.Error("Logout reported no problem though the AS has no revocation endpoint")
	}
	if _, err := store.Load(key); !errors.Is(err, hauth.ErrNotFound) {
		t.Errorf("tokens kept after a failed revocation (%v)", err)
	}
}

func TestOAuthRefusesASWithoutPKCE(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	as.OmitPKCE = true
	h := oauthHost(t, fmt.Sprintf("server \"prot\" {\n transport = \"http\"\n url = %q\n oauth {\n  allow_loopback = true\n }\n}\n", as.URL()), nil, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opened []string
	err := h.Login(ctx, "prot", browser(t, &opened))
	if err == nil || len(opened) != 0 || len(as.Requests("/authorize")) != 0 {
		t.Fatalf("Login = %v, opened %v: want a refusal before any browser", err, opened)
	}
}

// clientCredentialsConfig is a server "svc" at url with a
// client_credentials oauth block, all of its tools allowed.
func clientCredentialsConfig(url string) string {
	return fmt.Sprintf(`
server "svc" {
  transport = "http"
  url = %q
  oauth {
    grant = "client_credentials"
    client_id = "svc-client"
    client_secret = "s3cret"
    allow_loopback = true
  }
}
permissions {
  allow = ["mcp__svc__*"]
}
`, url)
}

func TestOAuthClientCredentialsNeedsNoLogin(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	h := oauthHost(t, clientCredentialsConfig(as.URL()), nil, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.CallTool(ctx, "mcp__svc__whoami", map[string]any{}, nil)
	if err != nil || host.TextOf(res.Content) != "you" {
		t.Fatalf("call: %v %v", res, err)
	}
	toks := as.Requests("/token")
	if len(toks) != 1 || toks[0].Form.Get("grant_type") != "client_credentials" || toks[0].Form.Get("resource") != as.URL() {
		t.Fatalf("token requests = %+v", toks)
	}
	if toks[0].Form.Get("client_secret") != "" {
		t.Errorf("secret sent in the form though the AS supports client_secret_basic")
	}
}

// TestOAuthDPoP: with an authorization server that advertises DPoP and
// requires nonces at both servers, the login, the refresh and every MCP
// request carry valid proofs from one key; the access token travels with
// the DPoP scheme, never as Bearer. The key is stored with the tokens, so a
// restarted host keeps using the bound tokens.
func TestOAuthDPoP(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) { testOAuthDPoP(t, transport) })
	}
}

func testOAuthDPoP(t *testing.T, transport string) {
	as := fakeas.New()
	defer as.Close()
	as.DPoP, as.DPoPNonce = true, "n-"+fmt.Sprint(time.Now().UnixNano())
	as.TokenTTL = 30 // inside RefreshAhead: every use refreshes
	store := &hauth.FileStore{Dir: filepath.Join(t.TempDir(), "tokens")}
	hcl := protConfig(transport, map[string]string{"http": as.URL(), "sse": as.SSEURL()}[transport])
	h := oauthHost(t, hcl, store, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opened []string
	if err := h.Login(ctx, "prot", browser(t, &opened)); err != nil {
		t.Fatalf("Login: %v", err)
	}
	for i := 0; i < 2; i++ {
		if res, err := h.CallTool(ctx, "mcp__prot__whoami", map[string]any{}, nil); err != nil || host.TextOf(res.Content) != "you" {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
	}
	if errs := as.DPoPErrors(); len(errs) > 0 {
		t.Errorf("invalid DPoP proofs: %v", errs)
	}
	var grants []string
	for _, r := range as.Requests("/token") {
		grants = append(grants, r.Form.Get("grant_type"))
	}
	if !strings.Contains(strings.Join(grants, " "), "authorization_code") || !strings.Contains(strings.Join(grants, " "), "refresh_token") {
		t.Errorf("token grants = %v, want a code grant and a refresh", grants)
	}
	dpop := 0
	for _, a := range as.MCPAuthorizations() {
		if strings.HasPrefix(a, "Bearer ") {
			t.Errorf("a DPoP-bound token was sent as Bearer")
		}
		if strings.HasPrefix(a, "DPoP ") {
			dpop++
		}
	}
	if dpop < 3 {
		t.Errorf("%d DPoP-authorized MCP requests, want several", dpop)
	}
	rec, err := store.Load(hauth.Key("prot", h.Config().Server("prot").ConfigHash()))
	if err != nil || rec.DPoPKey == "" || !strings.EqualFold(rec.Token.TokenType, "DPoP") {
		t.Fatalf("stored record: DPoP key %v, token type %q (%v)", rec != nil && rec.DPoPKey != "", rec.Token.TokenType, err)
	}
	h.Close()

	// A new host on the same store: the stored key signs for the stored tokens.
	h2 := oauthHost(t, hcl, store, io.Discard)
	if res, err := h2.CallTool(ctx, "mcp__prot__whoami", map[string]any{}, nil); err != nil || host.TextOf(res.Content) != "you" {
		t.Fatalf("call after restart: %v %v", res, err)
	}
	if errs := as.DPoPErrors(); len(errs) > 0 {
		t.Errorf("invalid DPoP proofs after restart: %v", errs)
	}
	if len(as.Requests("/authorize")) != 1 {
		t.Errorf("the restarted host logged in again")
	}
}

// TestOAuthTokensStayWithTheirServer (SECURITY.md A7): two servers behind
// two authorization servers; each server only ever sees tokens its own AS
// issued.
func TestOAuthTokensStayWithTheirServer(t *testing.T) {
	a, b := fakeas.New(), fakeas.New()
	defer a.Close()
	defer b.Close()
	h := oauthHost(t, fmt.Sprintf(`
server "a" {
  transport = "http"
  url = %q
  oauth {
    allow_loopback = true
  }
}
server "b" {
  transport = "http"
  url = %q
  oauth {
    allow_loopback = true
  }
}
permissions {
  allow = ["mcp__a__*", "mcp__b__*"]
}
`, a.URL(), b.URL()), &hauth.FileStore{Dir: filepath.Join(t.TempDir(), "tokens")}, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opened []string
	for _, s := range []string{"a", "b"} {
		if err := h.Login(ctx, s, browser(t, &opened)); err != nil {
			t.Fatalf("login %s: %v", s, err)
		}
	}
	for i := 0; i < 2; i++ {
		for _, s := range []string{"a", "b"} {
			if _, err := h.CallTool(ctx, "mcp__"+s+"__whoami", map[string]any{}, nil); err != nil {
				t.Fatalf("call %s: %v", s, err)
			}
		}
	}
	for name, pair := range map[string][2]*fakeas.Server{"a": {a, b}, "b": {b, a}} {
		own, other := pair[0], pair[1]
		seen := 0
		for _, authz := range own.MCPAuthorizations() {
			tok, ok := strings.CutPrefix(authz, "Bearer ")
			if !ok {
				continue
			}
			seen++
			if other.Issued(tok) || !own.Issued(tok) {
				t.Errorf("server %s received a token its AS did not issue", name)
			}
		}
		if seen == 0 {
			t.Errorf("server %s never received a token", name)
		}
	}
}

// TestOAuthNoTokenOnRedirect (A8): an MCP server that redirects elsewhere
// does not get its token forwarded: redirects of MCP requests are not
// followed, so the other origin sees nothing.
func TestOAuthNoTokenOnRedirect(t *testing.T) {
	as := fakeas.New()
	defer as.Close()
	var canary []string
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		canary = append(canary, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	h := oauthHost(t, protConfig("http", as.URL()), nil, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opened []string
	if err := h.Login(ctx, "prot", browser(t, &opened)); err != nil {
		t.Fatal(err)
	}
	as.Set(func(s *fakeas.Server) { s.RedirectMCP = other.URL + "/steal" })
	if _, err := h.CallTool(ctx, "mcp__prot__whoami", map[string]any{}, nil); err == nil {
		t.Error("a redirected call succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range canary {
		if a != "" {
			t.Errorf("the other origin received an Authorization header")
		}
	}
}

// TestOAuthRefusedTokensAreBounded (A10): a server that refuses every token
// (401), or keeps asking for more scope (403 insufficient_scope), gets a
// bounded number of token requests, however often the tool is called.
func TestOAuthRefusedTokensAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		set       func(*fakeas.Server)
		maxTokens int
	}{
		// The first token, then one forced renewal; then needs-auth.
		{"always 401", func(s *fakeas.Server) { s.RejectAll = true }, 2},
		// The first token, then MaxStepUps step-ups.
		{"always 403 insufficient_scope", func(s *fakeas.Server) { s.RejectAll, s.InsufficientScope = true, true }, 3}, // at most 1 + MaxStepUps (2); see TestStepUpIsCapped
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := fakeas.New()
			defer as.Close()
			as.Set(tc.set)
			h := oauthHost(t, clientCredentialsConfig(as.URL()), nil, io.Discard)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; i < 5; i++ {
				if _, err := h.CallTool(ctx, "mcp__svc__whoami", map[string]any{}, nil); err == nil {
					t.Fatal("a refused call succeeded")
				}
			}
			if n := len(as.Requests("/token")); n == 0 || n > tc.maxTokens {
				t.Errorf("%d token requests for 5 calls, want 1..%d", n, tc.maxTokens)
			}
			if n := len(as.MCPAuthorizations()); n > 20 {
				t.Errorf("%d MCP requests for 5 calls", n)
			}
		})
	}
}

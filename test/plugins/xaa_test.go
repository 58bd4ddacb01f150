//go:build unix

package plugins

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// xaaEnv is an IdP and two MCP servers, each behind its own authorization
// server that accepts ID-JAGs from the IdP (JWT-bearer grant).
type xaaEnv struct {
	idp  *fakeas.IdP
	a, b *fakeas.Server
}

func newXAAEnv(t *testing.T) *xaaEnv {
	t.Helper()
	e := &xaaEnv{idp: fakeas.NewIdP(), a: fakeas.New(), b: fakeas.New()}
	e.a.VerifyAssertion, e.b.VerifyAssertion = e.idp.VerifyJAG, e.idp.VerifyJAG
	t.Cleanup(func() { e.idp.Close(); e.a.Close(); e.b.Close() })
	return e
}

// config writes a locked configuration with both servers on the IdP; idp
// is the body of the idp block after issuer and client_id.
func (e *xaaEnv) config(t *testing.T, dir, idp string) string {
	t.Helper()
	server := func(name string, s *fakeas.Server) string {
		// The fake IdP issues ID-JAGs for the client "mcphost-at-<AS>".
		return fmt.Sprintf(`server %q {
  transport = "http"
  url       = %q
  auth "xaa" {
    idp            = "corp"
    client_id      = %q
    client_secret  = "as-secret"
    allow_loopback = true
  }
}
`, name, s.URL(), "mcphost-at-"+s.AS.URL)
	}
	return lockedConfig(t, dir, server("a", e.a)+server("b", e.b)+fmt.Sprintf(`idp "corp" {
  issuer         = %q
  client_id      = "mcphost"
  allow_loopback = true
%s
}
`, e.idp.URL(), idp))
}

func loadConfig(t *testing.T, dir, path string) *config.Config {
	t.Helper()
	cfg, diags := config.Load(&config.LoadOptions{Files: []string{path}, LookupEnv: func(k string) (string, bool) {
		if k == "HOME" {
			return dir, true
		}
		return "", false
	}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg
}

// browser is the user's browser: it follows the login URL through the
// IdP's redirect to mcphost's loopback callback, and counts its uses.
type browser struct{ opened atomic.Int32 }

func (b *browser) open(ctx context.Context, u string) error {
	b.opened.Add(1)
	go func() { // a browser does not block the program that opened it
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

func hasTool(t *testing.T, h *host.Host, name string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, _ := h.Tools(ctx)
	for _, tl := range tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// TestXAAOneLoginManyServers: with a browser login at the IdP, both servers
// first show their authenticate pseudo-tool; logging in to one opens the
// browser once, and the second server reuses the cached id_token without a
// browser. Each server's authorization server gets a JWT-bearer grant with
// an ID-JAG whose audience is that authorization server and whose resource
// is that server, authenticated with client_secret_basic. No token appears
// in the debug log.
func TestXAAOneLoginManyServers(t *testing.T) {
	e := newXAAEnv(t)
	dir := t.TempDir()
	port := testbin.FreePort(t)
	cfg := loadConfig(t, dir, e.config(t, dir, fmt.Sprintf("  callback_port = %d", port)))
	logs := &syncbuf.Buffer{}
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: logs})
	br := &browser{}
	h, err := host.New(cfg, &host.Options{Logger: logger, PresentAuthURL: br.open})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, s := range []string{"a", "b"} {
		if !hasTool(t, h, "mcp__"+s+"__authenticate") {
			t.Fatalf("%s does not show its authenticate tool", s)
		}
	}
	if br.opened.Load() != 0 {
		t.Fatal("a browser opened without the user asking to log in")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Login(ctx, "a", br.open); err != nil {
		t.Fatalf("login a: %v", err)
	}
	if err := h.Login(ctx, "b", br.open); err != nil {
		t.Fatalf("login b: %v", err)
	}
	if n := br.opened.Load(); n != 1 {
		t.Errorf("the browser opened %d times for two servers on one IdP, want 1", n)
	}
	if n := len(e.idp.Requests("/authorize")); n != 1 {
		t.Errorf("%d logins at the IdP, want 1", n)
	}
	ex := e.idp.Requests("/token")
	var audiences []string
	for _, r := range ex {
		if r.Form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
			audiences = append(audiences, r.Form.Get("audience")+" "+r.Form.Get("resource"))
		}
	}
	want := []string{e.a.AS.URL + " " + e.a.URL(), e.b.AS.URL + " " + e.b.URL()}
	if strings.Join(audiences, ",") != strings.Join(want, ",") {
		t.Errorf("token exchanges (audience resource) = %q, want %q", audiences, want)
	}
	for _, s := range []*fakeas.Server{e.a, e.b} {
		var grants int
		for _, r := range s.Requests("/token") {
			if r.Form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
				grants++
				if r.BasicUser != "mcphost-at-"+s.AS.URL || r.Form.Get("client_secret") != "" {
					t.Errorf("JWT-bearer grant not authenticated with client_secret_basic: user %q", r.BasicUser)
				}
			}
		}
		if grants != 1 {
			t.Errorf("%d JWT-bearer grants at %s, want 1", grants, s.AS.URL)
		}
	}
	for _, name := range []string{"mcp__a__whoami", "mcp__b__whoami"} {
		res, err := h.CallTool(ctx, name, map[string]any{}, nil)
		if err != nil || len(res.Content) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	var secrets []string
	for _, s := range []*fakeas.Server{e.a, e.b} {
		for _, a := range s.MCPAuthorizations() {
			if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
				secrets = append(secrets, tok)
			}
		}
	}
	for _, r := range ex {
		secrets = append(secrets, r.Form.Get("subject_token"))
	}
	if len(secrets) < 3 {
		t.Fatalf("expected tokens to check the log against, got %d", len(secrets))
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(logs.String(), s) {
			t.Errorf("a token appears in the log")
		}
	}
}

// TestXAAAccessDenied: the IdP refuses an ID-JAG for server b's
// authorization server. b fails with a clear error naming the denial, and
// no browser opens (no fallback to a browser login); a stays usable.
func TestXAAAccessDenied(t *testing.T) {
	e := newXAAEnv(t)
	e.idp.Deny[e.b.AS.URL] = true
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "id_token")
	if err := os.WriteFile(tokFile, []byte(e.idp.IssueIDToken()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, dir, e.config(t, dir, fmt.Sprintf("  id_token_file = %q", tokFile)))
	br := &browser{}
	h, err := host.New(cfg, &host.Options{Logger: hclog.NewNullLogger(), PresentAuthURL: br.open})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.CallTool(ctx, "mcp__a__whoami", map[string]any{}, nil); err != nil {
		t.Fatalf("a, with an id_token from id_token_file, without any login: %v", err)
	}
	_, err = h.CallTool(ctx, "mcp__b__whoami", map[string]any{}, nil)
	var ae *conn.AuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "access_denied") || !strings.Contains(err.Error(), "denied access to b") {
		t.Errorf("b: want an access_denied error naming the server, got %v", err)
	}
	err = h.Login(ctx, "b", br.open)
	if err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("login b: want access_denied, got %v", err)
	}
	if br.opened.Load() != 0 || len(e.idp.Requests("/authorize")) != 0 {
		t.Error("access_denied fell back to a browser login")
	}
}

// TestXAALoginDenied: the user (or the IdP's policy) declines the OIDC
// login: the login ends with a clear error and no token request follows.
func TestXAALoginDenied(t *testing.T) {
	e := newXAAEnv(t)
	e.idp.DenyLogin = true
	dir := t.TempDir()
	cfg := loadConfig(t, dir, e.config(t, dir, fmt.Sprintf("  callback_port = %d", testbin.FreePort(t))))
	br := &browser{}
	h, err := host.New(cfg, &host.Options{Logger: hclog.NewNullLogger(), PresentAuthURL: br.open})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = h.Login(ctx, "a", br.open)
	if err == nil || !strings.Contains(err.Error(), "denied the login") {
		t.Errorf("want a denied login, got %v", err)
	}
	if n := len(e.idp.Requests("/token")); n != 0 {
		t.Errorf("%d token requests after a denied login", n)
	}
}

// TestXAAConfigErrors: an auth "xaa" block naming an undeclared idp, and an
// idp block without a way to get an id_token, are reported at their lines.
func TestXAAConfigErrors(t *testing.T) {
	dir := t.TempDir()
	path := lockedConfig(t, dir, "")
	prefix, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := string(prefix) + `server "a" {
  transport = "http"
  url       = "https://mcp.example.com/mcp"
  auth "xaa" {
    idp       = "corp"
    client_id = "c"
  }
}
idp "other" {
  issuer    = "https://idp.example.com"
  client_id = "mcphost"
}
`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := mcphost(t, dir, "--config", path, "config", "validate")
	for _, want := range []string{"cfg.hcl:12:17:\nError: Unknown idp", `No idp block is named "corp". Declared: other.`, "cfg.hcl:16:1:\nError: No way to get an id_token"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("validate lacks %q:\n%s", want, out)
		}
	}
}

// TestXAAResumesAfterRestart: the plugin's state (the IdP's id_token and
// each server's access token) is kept by the host in its token store, so a
// new process (a new host, a new plugin process) calls the server it logged
// in to without a login, and reaches the other server on the same IdP
// without a browser. Logout deletes the state.
func TestXAAResumesAfterRestart(t *testing.T) {
	e := newXAAEnv(t)
	dir := t.TempDir()
	cfg := loadConfig(t, dir, e.config(t, dir, fmt.Sprintf("  callback_port = %d", testbin.FreePort(t))))
	store := &hauth.FileStore{Dir: filepath.Join(dir, "tokens")}
	br := &browser{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := host.New(cfg, &host.Options{Logger: hclog.NewNullLogger(), PresentAuthURL: br.open, TokenStore: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Login(ctx, "a", br.open); err != nil {
		t.Fatalf("login a: %v", err)
	}
	h.Close()

	h2, err := host.New(cfg, &host.Options{Logger: hclog.NewNullLogger(), PresentAuthURL: br.open, TokenStore: store})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	for _, st := range h2.AuthStatuses() {
		if st.Server == "a" && (!st.LoggedIn || st.Scheme != "plugin xaa (idp corp)") {
			t.Errorf("status of a after restart: %+v", st)
		}
	}
	for _, name := range []string{"mcp__a__whoami", "mcp__b__whoami"} {
		if _, err := h2.CallTool(ctx, name, map[string]any{}, nil); err != nil {
			t.Errorf("%s after restart: %v", name, err)
		}
	}
	if n := br.opened.Load(); n != 1 {
		t.Errorf("the browser opened %d times, want 1", n)
	}
	grants := 0
	for _, r := range e.a.Requests("/token") {
		if r.Form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			grants++
		}
	}
	if grants != 1 {
		t.Errorf("%d JWT-bearer grants at a's AS, want 1 (the saved token reused)", grants)
	}
	if err := h2.Logout(ctx, "a"); err != nil {
		t.Fatalf("logout: %v", err)
	}
	for _, st := range h2.AuthStatuses() {
		if st.Server == "a" && st.LoggedIn {
			t.Errorf("a still logged in after logout")
		}
	}
	// The plugin dropped the server's token and the IdP session: the next
	// call needs a login, and no browser opens by itself.
	if _, err := h2.CallTool(ctx, "mcp__a__whoami", map[string]any{}, nil); !errors.Is(err, conn.ErrNeedsAuth) && (err == nil || !strings.Contains(err.Error(), "no such tool")) {
		t.Errorf("call after logout: %v, want a server that needs a login", err)
	}
	if !hasTool(t, h2, "mcp__a__authenticate") {
		t.Error("after logout a does not offer its authenticate tool")
	}
	if n := br.opened.Load(); n != 1 {
		t.Errorf("the browser opened %d times, want 1", n)
	}
}

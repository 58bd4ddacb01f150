package scaleout_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcphost/mcphost/internal/testing/testbin"
	"github.com/mcphost/mcphost/internal/testing/testidp"
)

// idUpstream is an upstream MCP server protected by the test IdP (as
// test/inbound's): it takes only the IdP's JWTs for its audience, answers
// whoami with the token's subject, and records every Authorization header.
// It is stateless (both protocol eras).
type idUpstream struct {
	URL string

	mu   sync.Mutex
	auth []string
}

// newIDUpstream starts it on port (0: any), its URL its audience unless
// audience is set.
func newIDUpstream(t *testing.T, idp *testidp.IdP, name, audience string, port int) *idUpstream {
	u := &idUpstream{}
	srv := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "who the server sees"},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " sees sub=" + req.Extra.TokenInfo.UserID}}}, nil, nil
		})
	hs := httptest.NewUnstartedServer(nil)
	if port != 0 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		hs.Listener.Close()
		hs.Listener = ln
	}
	hs.Start()
	t.Cleanup(hs.Close)
	u.URL = hs.URL + "/mcp"
	if audience == "" {
		audience = u.URL
	}
	key := idp.PublicJWK()
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		var c jwt.Claims
		if err := parsed.Claims(key.Key, &c); err != nil {
			return nil, auth.ErrInvalidToken
		}
		if err := c.ValidateWithLeeway(jwt.Expected{Issuer: idp.Issuer, AnyAudience: jwt.Audience{audience}, Time: time.Now()}, time.Minute); err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: c.Subject, Expiration: c.Expiry.Time()}, nil
	}
	prmURL := hs.URL + "/.well-known/oauth-protected-resource/mcp"
	mcpH := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: u.URL, AuthorizationServers: []string{idp.Issuer}, ScopesSupported: []string{"openid", "mcp"},
	}))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.mu.Unlock()
		mcpH.ServeHTTP(w, r)
	}))
	hs.Config.Handler = mux
	return u
}

// credentials returns the distinct bearer tokens the upstream was sent.
func (u *idUpstream) credentials() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, a := range u.auth {
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// TestPerUserTokensAcrossReplicas: with the gateway an OAuth resource
// server (gateway { oauth }, users of the test IdP), each user's upstream
// credentials stay that user's whichever replica serves the request: a
// token_exchange server sees the user who called on every replica; a
// per_user server, logged in to by alice once (a URL elicitation whose
// callback reaches whichever replica the balancer picks), serves alice on
// every replica with that one login, and never bob; no inbound token
// reaches an upstream.
func TestPerUserTokensAcrossReplicas(t *testing.T) {
	t.Parallel()
	exPort := testbin.FreePort(t)
	exURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", exPort)
	var (
		idp          *testidp.IdP
		files, notes *idUpstream
	)
	c := startCluster(t, 3, func(c *cluster) string {
		gwURL := c.lb.URL() + "/mcp"
		idp = testidp.Start(t, testidp.Options{
			Users: []testidp.User{
				{Username: "alice", Password: "alice-pw", Groups: []string{"eng"}},
				{Username: "bob", Password: "bob-pw", Groups: []string{"sales"}},
			},
			Audience:          []string{gwURL},
			Scopes:            []string{"mcp"},
			ExchangeAudiences: []string{exURL},
		})
		files = newIDUpstream(t, idp, "files", "", exPort)
		// The per-user login's tokens are the public client's.
		notes = newIDUpstream(t, idp, "notes", testidp.ClientID, 0)
		exID, exSecret := idp.ExchangeClient()
		return fmt.Sprintf(`
gateway {
  url = %q
  oauth {
    issuer         = %q
    scopes         = ["mcp"]
    allow_loopback = true
    # zitadel (internal/testing/testidp) marks its access tokens typ JWT, not at+jwt
    accept_jwt_types = ["at+jwt", "JWT"]
  }
}
permissions { allow = ["mcp__files__*", "mcp__notes__*"] }
server "files" {
  transport = "http"
  url       = %q
  oauth {
    grant          = "token_exchange"
    client_id      = %q
    client_secret  = %q
    allow_loopback = true
  }
}
server "notes" {
  transport = "http"
  url       = %q
  oauth {
    per_user       = true
    client_id      = %q
    scopes         = ["openid", "mcp"]
    allow_loopback = true
  }
}
`, gwURL, idp.Issuer, files.URL, exID, exSecret, notes.URL, testidp.ClientID)
	}, nil)
	aliceTok, bobTok := idp.Login(t, "alice"), idp.Login(t, "bob")

	// Alice's client takes URL elicitations: it completes the login it is
	// shown in her "browser" (the IdP redirects to the gateway's callback,
	// through the balancer) and accepts.
	var (
		loginsMu sync.Mutex
		logins   []string
	)
	nLogins := func() int {
		loginsMu.Lock()
		defer loginsMu.Unlock()
		return len(logins)
	}
	alice := c.mustConnect(t, oldProtocol, &transport{bearer: aliceTok}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, idp.Issuer) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			if err := idp.Authorize(ctx, req.Params.URL, "alice", "alice-pw"); err != nil {
				t.Errorf("alice's login: %v", err)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			loginsMu.Lock()
			logins = append(logins, req.Params.URL)
			loginsMu.Unlock()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	bob := c.mustConnect(t, newProtocol, &transport{bearer: bobTok}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	call := func(cl *client, tool string) (string, bool) {
		res, err := cl.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			return err.Error(), true
		}
		return textOf(res), res.IsError
	}

	// Token exchange: each user is itself at the upstream, on every replica.
	const rounds = 6
	for i := range rounds {
		for who, cl := range map[string]*client{"alice": alice, "bob": bob} {
			if text, isErr := call(cl, "mcp__files__whoami"); isErr || text != "files sees sub="+who {
				t.Errorf("%s's files whoami %d = %q (error %v)", who, i, text, isErr)
			}
		}
	}

	// A per-user login, once, by alice; then her calls on every replica use
	// it, and bob has none.
	// (The go-sdk client retries the call once the login is done: the
	// retry may reach another replica than the one whose login it waits
	// for.)
	if text, isErr := call(alice, "mcp__notes__authenticate"); isErr || !strings.Contains(text, "mcp__notes__whoami") {
		t.Errorf("alice's authenticate, its retry through the balancer = %q (error %v), want her tools", text, isErr)
	}
	before := alice.tally.replicas()
	for i := range rounds {
		if text, isErr := call(alice, "mcp__notes__whoami"); isErr || text != "notes sees sub=alice" {
			t.Errorf("alice's notes whoami %d, after her one login = %q (error %v)", i, text, isErr)
		}
		if text, isErr := call(bob, "mcp__notes__whoami"); !isErr || strings.Contains(text, "sub=alice") {
			t.Errorf("bob's notes whoami %d = %q (error %v), want a refusal", i, text, isErr)
		}
	}
	served := alice.tally.replicas()
	var after []string
	for _, r := range c.reps {
		if served[r.name] > before[r.name] {
			after = append(after, r.name)
		}
	}
	if len(after) < len(c.reps) {
		t.Errorf("alice's calls after her login reached only %v", after)
	}
	if n := nLogins(); n != 1 {
		t.Errorf("alice was asked to log in %d times, want once", n)
	}

	// No inbound token ever reached an upstream; the per-user server was
	// sent alice's credentials only.
	for name, u := range map[string]*idUpstream{"files": files, "notes": notes} {
		for _, cred := range u.credentials() {
			if strings.Contains(cred, aliceTok) || strings.Contains(cred, bobTok) {
				t.Errorf("an inbound token reached %s", name)
			}
		}
	}
	total := newTally()
	total.add(alice.tally)
	total.add(bob.tally)
	t.Logf("per user: alice logged in %d time(s); credentials seen by files (token exchange) %d, by notes (per-user login) %d; alice's calls after her login served by %v; %s",
		nLogins(), len(files.credentials()), len(notes.credentials()), after, total)
	checkSpread(t, total, c)
}

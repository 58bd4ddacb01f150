package inbound

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
	"github.com/mcphost/mcphost/internal/testing/testidp"
)

// idUpstream is an upstream MCP server protected by the test IdP: it takes
// only the IdP's JWTs for its audience (go-sdk's auth.RequireBearerToken,
// signatures checked with go-jose against the IdP's key), serves its
// protected resource metadata naming the IdP, and answers whoami with the
// token's subject. It records every Authorization header. It is stateless
// (both protocol eras).
type idUpstream struct {
	URL string

	mu   sync.Mutex
	auth []string // Authorization headers seen
}

func newIDUpstream(t *testing.T, idp *testidp.IdP, name, audience string) *idUpstream {
	return newIDUpstreamOn(t, idp, name, audience, 0)
}

// newIDUpstreamOn is newIDUpstream on port (0: any free one); its URL is
// its audience when audience is "".
func newIDUpstreamOn(t *testing.T, idp *testidp.IdP, name, audience string, port int) *idUpstream {
	u := &idUpstream{}
	srv := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "who the server sees"},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			ti := req.Extra.TokenInfo
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " sees sub=" + ti.UserID}}}, nil, nil
		})
	// A resource list of the user's own: never to be served to another.
	srv.AddResource(&mcp.Resource{URI: "note://static", Name: "static"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ListResourcesResult); ok && err == nil && req.GetExtra().TokenInfo != nil {
				sub := req.GetExtra().TokenInfo.UserID
				r.Resources = append(r.Resources, &mcp.Resource{URI: "note://" + sub, Name: "private-note-of-" + sub})
			}
			return res, err
		}
	})
	key := idp.PublicJWK()
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

// saw reports whether token reached the upstream in an Authorization header.
func (u *idUpstream) saw(token string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.ContainsFunc(u.auth, func(a string) bool { return strings.Contains(a, token) })
}

// credentials counts the distinct bearer tokens the upstream was sent.
func (u *idUpstream) credentials() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	seen := map[string]bool{}
	for _, a := range u.auth {
		if a != "" {
			seen[a] = true
		}
	}
	return len(seen)
}

// TestPerUserCredentials: each gateway user reaches a token_exchange server
// with a token exchanged from its own (the upstream sees that user), and a
// per_user server through a login of its own made with the authenticate
// pseudo-tool; no user sees or uses another's; the inbound tokens never
// reach an upstream.
func TestPerUserCredentials(t *testing.T) {
	port := testbin.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	gwURL := base + "/mcp"
	// The IdP must know the exchange upstream's URL (the only audience an
	// exchange may ask for), and the upstream the IdP: the upstream runs on
	// a port chosen first.
	exPort := testbin.FreePort(t)
	exURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", exPort)
	idp := testidp.Start(t, testidp.Options{
		Users: []testidp.User{
			{Username: "alice", Password: "alice-pw", Groups: []string{"eng"}},
			{Username: "bob", Password: "bob-pw", Groups: []string{"sales"}},
		},
		Audience:          []string{gwURL},
		Scopes:            []string{"mcp"},
		ExchangeAudiences: []string{exURL},
	})
	files := newIDUpstreamAt(t, idp, "files", exPort)
	// The per-user login's tokens are the public client's: their aud is the
	// IdP's configured audience plus the client id.
	notes := newIDUpstream(t, idp, "notes", testidp.ClientID)
	exID, exSecret := idp.ExchangeClient()

	dir := t.TempDir()
	cfg := fmt.Sprintf(`
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
	path := filepath.Join(dir, "mcphost.hcl")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := newCmd(filepath.Join(binDir, "mcphost"), dir, []string{"--config", path, "--log-level", "debug", "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port)})
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	g := &gateway{URL: gwURL, base: base, idp: idp, out: out}

	aliceTok, bobTok := idp.Login(t, "alice"), idp.Login(t, "bob")
	// Alice's client takes URL elicitations: it completes the login it is
	// shown in her "browser" and accepts.
	ac := mcp.NewClient(&mcp.Implementation{Name: "alice"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" || !strings.HasPrefix(req.Params.URL, idp.Issuer) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			if err := idp.Authorize(ctx, req.Params.URL, "alice", "alice-pw"); err != nil {
				t.Errorf("alice's login: %v", err)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	alice, err := ac.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: bearer(aliceTok)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob := g.connect(t, bobTok, "")

	// Token exchange: each user is itself at the upstream.
	for _, tc := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{alice, "files sees sub=alice"}, {bob, "files sees sub=bob"}} {
		if names := toolNames(t, tc.cs); !slices.Contains(names, "mcp__files__whoami") || !slices.Contains(names, "mcp__notes__authenticate") || slices.Contains(names, "mcp__notes__whoami") {
			t.Fatalf("tools before any login: %v\n%s", names, out)
		}
		if text, isErr := callText(t, tc.cs, "mcp__files__whoami"); isErr || text != tc.want {
			t.Fatalf("files whoami = %q (error %v), want %q\n%s", text, isErr, tc.want, out)
		}
	}
	if n := files.credentials(); n != 2 {
		t.Errorf("the exchange upstream was sent %d credentials, want one per user", n)
	}

	// A per-user login: alice logs in through the authenticate pseudo-tool
	// (a URL elicitation to her client; the retried call waits for the
	// login and names her tools).
	if text, isErr := callText(t, alice, "mcp__notes__authenticate"); isErr || !strings.Contains(text, "mcp__notes__whoami") {
		t.Fatalf("authenticate = %q (error %v)\n%s", text, isErr, out)
	}
	if names := toolNames(t, alice); !slices.Contains(names, "mcp__notes__whoami") || slices.Contains(names, "mcp__notes__authenticate") {
		t.Fatalf("alice's tools after her login: %v\n%s", names, out)
	}
	// Bob, whose client cannot take URL elicitations, is given the URL as
	// text; he does not follow it.
	if text, isErr := callText(t, bob, "mcp__notes__authenticate"); isErr || !strings.Contains(text, idp.Issuer) {
		t.Errorf("bob's authenticate = %q (error %v): no login URL", text, isErr)
	}
	if text, isErr := callText(t, alice, "mcp__notes__whoami"); isErr || text != "notes sees sub=alice" {
		t.Fatalf("alice's notes whoami = %q (error %v)\n%s", text, isErr, out)
	}
	// Bob has not logged in: alice's login is not his.
	if names := toolNames(t, bob); slices.Contains(names, "mcp__notes__whoami") || !slices.Contains(names, "mcp__notes__authenticate") {
		t.Errorf("bob's tools after alice's login: %v", names)
	}
	if text, isErr := callText(t, bob, "mcp__notes__whoami"); !isErr || strings.Contains(text, "sub=alice") {
		t.Errorf("bob's call of notes whoami = %q (error %v), want a refusal", text, isErr)
	}

	// A per-user server's resources are its user's (files, token_exchange,
	// is one too): listed for that user alone (under their qualified URIs,
	// "private"), never in the lists shared by all (alice's login made the
	// gateway sync its lists), and read through the user's own connection;
	// bob, not logged in to notes, is listed none of its resources and
	// cannot read them.
	const notesStatic = "mcphost://notes/note://static"
	for who, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		res, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var private []string
		for _, r := range res.Resources {
			if strings.Contains(r.Name, "private-note-of") {
				private = append(private, r.URI)
			}
		}
		want := []string{"mcphost://files/note://alice", "mcphost://notes/note://alice"}
		if who == "bob" {
			want = []string{"mcphost://files/note://bob"}
		}
		if !slices.Equal(private, want) || who == "alice" && res.CacheScope != "private" {
			t.Errorf("%s is listed the private notes %v (cacheScope %q), want %v", who, private, res.CacheScope, want)
		}
	}
	if res, err := alice.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: notesStatic}); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "x" {
		t.Errorf("alice's read of %s: %+v %v", notesStatic, res, err)
	}
	if res, err := bob.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: notesStatic}); err == nil {
		t.Errorf("bob's read of %s: %+v, want refused (he has no login to notes)", notesStatic, res)
	}

	// No inbound token ever reached an upstream.
	for name, u := range map[string]*idUpstream{"files": files, "notes": notes} {
		for who, tok := range map[string]string{"alice": aliceTok, "bob": bobTok} {
			if u.saw(tok) {
				t.Errorf("%s's inbound token reached %s", who, name)
			}
		}
	}
	if strings.Contains(out.String(), aliceTok) || strings.Contains(out.String(), bobTok) {
		t.Error("an inbound token is in the gateway's output")
	}
}

// newIDUpstreamAt is newIDUpstream on a given 127.0.0.1 port, whose URL is
// its audience.
func newIDUpstreamAt(t *testing.T, idp *testidp.IdP, name string, port int) *idUpstream {
	return newIDUpstreamOn(t, idp, name, "", port)
}

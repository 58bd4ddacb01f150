// Package inbound tests `mcphost serve --http` as an OAuth 2.1 resource
// server shared by several users, end to end: the mcphost binary, an
// OpenID provider nobody here wrote (zitadel's op, internal/testing/testidp) that
// users log in to, and upstream MCP servers (go-sdk) that record every
// request they receive — the canaries.
package inbound

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
	"github.com/mcphost/mcphost/internal/testing/testidp"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

// canary is an upstream MCP server on 127.0.0.1 that records what reaches
// it: every request's Authorization header and body.
type canary struct {
	URL string

	mu       sync.Mutex
	requests int
	calls    []string // tools/call tool names
	auth     []string // Authorization headers seen
	bodies   bytes.Buffer
}

func newCanary(t *testing.T, name string, tools ...string) *canary {
	c := &canary{}
	srv := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{Instructions: "INSTRUCTIONS OF " + name})
	for _, tool := range tools {
		mcp.AddTool(srv, &mcp.Tool{Name: tool, Description: tool + " of " + name},
			func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + "/" + tool + " done"}}}, nil, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		c.mu.Lock()
		c.requests++
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		c.bodies.Write(body)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			c.calls = append(c.calls, msg.Params.Name)
		}
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c.URL = hs.URL + "/mcp"
	return c
}

func (c *canary) snapshot() (requests int, calls []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests, slices.Clone(c.calls)
}

// contains reports whether s reached the canary in a header or a body.
func (c *canary) contains(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Contains(c.bodies.String(), s) || slices.ContainsFunc(c.auth, func(a string) bool { return strings.Contains(a, s) })
}

// gateway is a running `mcphost serve --http` with a gateway block.
type gateway struct {
	URL   string // its MCP endpoint
	base  string
	audit string // the audit log's path
	idp   *testidp.IdP
	eng   *canary
	sales *canary
	all   *canary
	out   *syncbuf.Buffer
	// introSecret is the gateway's secret at the introspection endpoint.
	introSecret string
}

const (
	argCanary    = "ARGUMENT-CANARY-7d41"
	secretCanary = "CLIENT-SECRET-CANARY-93be"
)

// startGateway runs the gateway: users alice (group eng), bob (sales) and
// carol (sales), servers eng, sales and common; eng's tools for eng,
// sales's for sales, common's for everyone but its secret_* tools left out
// by the server's tools filter; 5/s with a burst of 20 per principal.
func startGateway(t *testing.T) *gateway {
	port := testbin.FreePort(t)
	g := &gateway{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	g.URL = g.base + "/mcp"
	g.idp = testidp.Start(t, testidp.Options{
		Users: []testidp.User{
			{Username: "alice", Password: "alice-pw", Groups: []string{"eng"}},
			{Username: "bob", Password: "bob-pw", Groups: []string{"sales"}},
			{Username: "carol", Password: "carol-pw", Groups: []string{"sales"}},
			{Username: "dave", Password: "dave-pw", Groups: []string{"sales"}},
		},
		Audience: []string{g.URL},
		Scopes:   []string{"mcp"},
	})
	introID, introSecret := g.idp.IntrospectionClient()
	g.introSecret = introSecret
	g.eng = newCanary(t, "eng", "deploy", "rollback")
	g.sales = newCanary(t, "sales", "quote")
	g.all = newCanary(t, "common", "whoami", "secret_dump")
	dir := t.TempDir()
	g.audit = filepath.Join(dir, "audit.jsonl")
	cfg := fmt.Sprintf(`
gateway {
  url = %q
  oauth {
    issuer            = %q
    scopes            = ["mcp"]
    introspection_url = %q
    client_id         = %q
    client_secret     = %q
    allow_loopback    = true
    # zitadel (internal/testing/testidp) marks its access tokens typ JWT, not at+jwt
    accept_jwt_types = ["at+jwt", "JWT"]
  }
  rate_limit {
    per_principal  = "5/s"
    burst          = 20
    max_concurrent = 8
  }
}
audit { path = %q }
permissions { default_mode = "deny" }
permissions {
  for_principals { groups = ["eng"] }
  allow = ["mcp__eng__*", "mcp__common__*"]
}
permissions {
  for_principals { groups = ["sales"] }
  allow = ["mcp__sales__*", "mcp__common__*"]
}
permissions {
  for_principals { subjects = ["alice"] }
  deny = ["mcp__eng__rollback"]
}
server "eng" {
  transport = "http"
  url       = %q
}
server "sales" {
  transport = "http"
  url       = %q
}
server "common" {
  transport = "http"
  url       = %q
  headers   = { X-Unrelated = %q }
  tools { exclude = ["secret_*"] }
}
`, g.URL, g.idp.Issuer, g.idp.IntrospectionURL(), introID, introSecret, g.audit, g.eng.URL, g.sales.URL, g.all.URL, secretCanary)
	path := filepath.Join(dir, "mcphost.hcl")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := testbinCmd(dir, path, "--http", fmt.Sprintf("127.0.0.1:%d", port))
	g.out = &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = g.out, g.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	return g
}

// bearer is an HTTP client that sends token.
func bearer(token string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (g *gateway) connect(t *testing.T, token, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "inbound-test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: bearer(token)},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\ngateway output:\n%s", err, g.out)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, name string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"note": argCanary}})
	if err != nil {
		return err.Error(), true
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestGateway runs every check on one gateway: the login and per-principal
// views of two users in different groups, the attacks, the rate limit and
// the audit log.
func TestGateway(t *testing.T) {
	g := startGateway(t)
	alice := g.idp.Login(t, "alice")
	bob := g.idp.Login(t, "bob")

	t.Run("metadata", func(t *testing.T) {
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
			resp, err := http.Get(g.base + path)
			if err != nil {
				t.Fatal(err)
			}
			var prm struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				Scopes               []string `json:"scopes_supported"`
			}
			err = json.NewDecoder(resp.Body).Decode(&prm)
			resp.Body.Close()
			if err != nil || prm.Resource != g.URL || !slices.Equal(prm.AuthorizationServers, []string{g.idp.Issuer}) || !slices.Equal(prm.Scopes, []string{"mcp"}) {
				t.Errorf("%s: %+v (%v)", path, prm, err)
			}
		}
	})

	t.Run("views", func(t *testing.T) {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(version, func(t *testing.T) {
				a := g.connect(t, alice, version)
				b := g.connect(t, bob, version)
				if got, want := toolNames(t, a), []string{"mcp__common__whoami", "mcp__eng__deploy"}; !slices.Equal(got, want) {
					t.Errorf("alice's tools = %v, want %v (rollback denied to her, secret_dump filtered for everyone)", got, want)
				}
				if got, want := toolNames(t, b), []string{"mcp__common__whoami", "mcp__sales__quote"}; !slices.Equal(got, want) {
					t.Errorf("bob's tools = %v, want %v", got, want)
				}
				_, engBefore := g.eng.snapshot()
				_, salesBefore := g.sales.snapshot()
				if text, isErr := callText(t, a, "mcp__eng__deploy"); isErr || text != "eng/deploy done" {
					t.Errorf("alice deploy: %q %v", text, isErr)
				}
				if text, isErr := callText(t, b, "mcp__sales__quote"); isErr || text != "sales/quote done" {
					t.Errorf("bob quote: %q %v", text, isErr)
				}
				for _, c := range []struct {
					cs   *mcp.ClientSession
					who  string
					tool string
				}{{a, "alice", "mcp__sales__quote"}, {a, "alice", "mcp__eng__rollback"}, {b, "bob", "mcp__eng__deploy"}, {a, "alice", "mcp__common__secret_dump"}} {
					if text, isErr := callText(t, c.cs, c.tool); !isErr {
						t.Errorf("%s called %s: %q", c.who, c.tool, text)
					}
				}
				_, engAfter := g.eng.snapshot()
				_, salesAfter := g.sales.snapshot()
				if got := engAfter[len(engBefore):]; !slices.Equal(got, []string{"deploy"}) {
					t.Errorf("eng received calls %v, want only alice's deploy", got)
				}
				if got := salesAfter[len(salesBefore):]; !slices.Equal(got, []string{"quote"}) {
					t.Errorf("sales received calls %v, want only bob's quote", got)
				}
			})
		}
	})

	t.Run("opaque token", func(t *testing.T) {
		// Not a JWT: the gateway asks the IdP's introspection endpoint.
		opaque := g.idp.LoginOpaque(t, "alice")
		cs := g.connect(t, opaque, "2025-11-25")
		if got, want := toolNames(t, cs), []string{"mcp__common__whoami", "mcp__eng__deploy"}; !slices.Equal(got, want) {
			t.Errorf("alice's tools (opaque token) = %v, want %v", got, want)
		}
		if text, isErr := callText(t, cs, "mcp__eng__deploy"); isErr {
			t.Errorf("alice deploy (opaque token): %q", text)
		}
		for _, c := range []*canary{g.eng, g.sales, g.all} {
			if c.contains(opaque) {
				t.Error("an upstream received the opaque token")
			}
		}
	})

	t.Run("attacks", func(t *testing.T) { attacks(t, g, alice, bob) })

	t.Run("another principal's session, every method", func(t *testing.T) {
		a := g.connect(t, alice, "2025-11-25")
		for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPost} {
			req, _ := http.NewRequest(method, g.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
			req.Header.Set("Authorization", "Bearer "+bob)
			req.Header.Set("Mcp-Session-Id", a.ID())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s by bob on alice's session: %d, want 404", method, resp.StatusCode)
			}
		}
		// Her session was neither ended nor disturbed.
		if got := toolNames(t, a); len(got) != 2 {
			t.Errorf("alice's session after bob's attempts: %v", got)
		}
	})
	t.Run("rate limit", func(t *testing.T) { rateLimit(t, g) })
	t.Run("rate limit, batch", func(t *testing.T) { batchLimit(t, g) })

	t.Run("hidden servers and tools are not named", func(t *testing.T) {
		b := g.connect(t, bob, "2025-11-25")
		ins := b.InitializeResult().Instructions
		if strings.Contains(ins, "INSTRUCTIONS OF eng") || !strings.Contains(ins, "INSTRUCTIONS OF sales") {
			t.Errorf("bob's instructions: %q", ins)
		}
		// A tool hidden from him is as unknown as one that does not exist;
		// no rule or file is named.
		hidden, _ := callText(t, b, "mcp__eng__deploy")
		if !strings.Contains(hidden, `unknown tool "mcp__eng__deploy"`) || strings.Contains(hidden, ".hcl") {
			t.Errorf("bob calling a hidden tool: %q", hidden)
		}
	})

	t.Run("upstream never sees an inbound token", func(t *testing.T) {
		for _, c := range []*canary{g.eng, g.sales, g.all} {
			for _, tok := range []string{alice, bob} {
				if c.contains(tok) {
					t.Errorf("an upstream received an inbound token")
				}
				// Nor a part of one (its signature).
				if sig := tok[strings.LastIndexByte(tok, '.')+1:]; c.contains(sig) {
					t.Errorf("an upstream received an inbound token's signature")
				}
			}
		}
	})

	t.Run("audit", func(t *testing.T) { checkAudit(t, g, alice, bob) })

	t.Run("no secret in the gateway's output", func(t *testing.T) {
		out := g.out.String()
		for _, s := range []string{alice, bob, g.introSecret, secretCanary, argCanary} {
			if strings.Contains(out, s) {
				t.Errorf("the gateway's output holds a token, secret or argument value (%.12s…)", s)
			}
		}
	})
}

// attack is one request that must be refused before anything reaches an
// upstream.
type attack struct {
	name    string
	token   string // "" for none
	session func(t *testing.T) string
	status  int
	header  string // in WWW-Authenticate
}

func attacks(t *testing.T, g *gateway, alice, bob string) {
	other := testidp.Start(t, testidp.Options{Users: []testidp.User{{Username: "alice", Password: "x"}}, Audience: []string{g.URL}, Scopes: []string{"mcp"}})
	claims := func(mod func(map[string]any)) string {
		c := g.idp.ClaimsFor(t, "alice")
		mod(c)
		return g.idp.Sign(t, c)
	}
	tampered := func() string {
		parts := strings.Split(alice, ".")
		var payload map[string]any
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		json.Unmarshal(raw, &payload)
		payload["groups"] = []string{"eng", "sales", "admin"}
		b, _ := json.Marshal(payload)
		parts[1] = base64.RawURLEncoding.EncodeToString(b)
		return strings.Join(parts, ".")
	}()
	unsigned := func(alg string, key []byte) string {
		h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": g.idp.PublicJWK().KeyID})
		p, _ := json.Marshal(g.idp.ClaimsFor(t, "alice"))
		in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
		if key == nil {
			return in + "."
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	pub, err := json.Marshal(g.idp.PublicJWK())
	if err != nil {
		t.Fatal(err)
	}
	aliceSession := func(t *testing.T) string {
		cs := g.connect(t, alice, "2025-11-25")
		return cs.ID()
	}
	for _, a := range []attack{
		{name: "no token", status: 401, header: `resource_metadata="` + g.base + `/.well-known/oauth-protected-resource/mcp"`},
		{name: "garbage", token: "not-a-token", status: 401, header: `error="invalid_token"`},
		{name: "tampered signature", token: tampered, status: 401, header: `error="invalid_token"`},
		{name: "expired", token: claims(func(c map[string]any) {
			c["exp"] = time.Now().Add(-10 * time.Minute).Unix()
			c["iat"], c["nbf"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
		}), status: 401, header: `error="invalid_token"`},
		{name: "foreign aud", token: claims(func(c map[string]any) { c["aud"] = []string{"https://other.example/mcp"} }), status: 401},
		{name: "another issuer", token: other.Login(t, "alice"), status: 401},
		{name: "iss rewritten", token: claims(func(c map[string]any) { c["iss"] = other.Issuer }), status: 401},
		{name: "alg none", token: unsigned("none", nil), status: 401},
		{name: "HS256 with the JWKS public key", token: unsigned("HS256", pub), status: 401},
		{name: "an ID token accepted as typ JWT", token: claims(func(c map[string]any) { c["nonce"], c["at_hash"] = "n", "h" }), status: 401, header: `error="invalid_token"`},
		{name: "sender-constrained token as bearer", token: claims(func(c map[string]any) { c["cnf"] = map[string]string{"jkt": "x"} }), status: 401},
		{name: "missing scope", token: g.idp.Login(t, "alice", "openid"), status: 403, header: `error="insufficient_scope"`},
		{name: "bob replays alice's session", token: bob, session: aliceSession, status: 404},
	} {
		t.Run(a.name, func(t *testing.T) {
			session := ""
			if a.session != nil {
				session = a.session(t)
			}
			before := upstreamRequests(g)
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__eng__deploy","arguments":{}}}`,
			} {
				req, _ := http.NewRequest(http.MethodPost, g.URL, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				if a.token != "" {
					req.Header.Set("Authorization", "Bearer "+a.token)
				}
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != a.status {
					t.Errorf("status %d, want %d: %s", resp.StatusCode, a.status, out)
				}
				if c := resp.Header.Get("WWW-Authenticate"); !strings.Contains(c, a.header) {
					t.Errorf("WWW-Authenticate %q, want it to contain %q", c, a.header)
				}
				if a.token != "" && bytes.Contains(out, []byte(a.token)) {
					t.Error("the answer quotes the token")
				}
			}
			if after := upstreamRequests(g); after != before {
				t.Errorf("the upstreams received %d requests", after-before)
			}
		})
	}
}

func upstreamRequests(g *gateway) int {
	n := 0
	for _, c := range []*canary{g.eng, g.sales, g.all} {
		r, _ := c.snapshot()
		n += r
	}
	return n
}

// rateLimit sends carol's calls faster than her limit allows (5/s, burst 20,
// 10): those over it are answered 429 with a JSON-RPC error and a retry
// hint, and only the admitted ones reach the upstream. Bob, another
// principal, is not limited by her burst.
func rateLimit(t *testing.T, g *gateway) {
	carol := g.idp.Login(t, "carol")
	_, before := g.sales.snapshot()
	const n = 30
	var (
		mu       sync.Mutex
		ok, over int
		wg       sync.WaitGroup
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__sales__quote","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, i+1)
			req, _ := http.NewRequest(http.MethodPost, g.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "mcp__sales__quote")
			req.Header.Set("Authorization", "Bearer "+carol)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusOK:
				if !bytes.Contains(out, []byte("sales/quote done")) {
					t.Errorf("admitted call: %s", out)
				}
				ok++
			case http.StatusTooManyRequests:
				var e struct {
					Error struct {
						Code int `json:"code"`
						Data struct {
							Retry int `json:"retryAfterSeconds"`
						} `json:"data"`
					} `json:"error"`
				}
				if json.Unmarshal(out, &e) != nil || e.Error.Code != -32029 || e.Error.Data.Retry < 1 || resp.Header.Get("Retry-After") == "" {
					t.Errorf("refused call: %s (Retry-After %q)", out, resp.Header.Get("Retry-After"))
				}
				over++
			default:
				t.Errorf("status %d: %s", resp.StatusCode, out)
			}
		}()
	}
	wg.Wait()
	_, after := g.sales.snapshot()
	if got := len(after) - len(before); got != ok {
		t.Errorf("the upstream received %d calls; %d were admitted", got, ok)
	}
	if over == 0 || ok < 8 || ok+over != n {
		t.Errorf("%d admitted, %d refused of %d (burst 20, at most 8 concurrent)", ok, over, n)
	}
	t.Logf("%d admitted, %d refused", ok, over)
	bob := g.idp.Login(t, "bob")
	if text, isErr := callText(t, g.connect(t, bob, "2026-07-28"), "mcp__sales__quote"); isErr {
		t.Errorf("bob, after carol's burst: %q", text)
	}
}

// checkAudit reads the audit log: a line per call, with the principal, the
// decision and its rule; the refusals; and no token, argument value or
// secret anywhere.
func checkAudit(t *testing.T, g *gateway, alice, bob string) {
	var raw []byte
	var lines []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		raw, _ = os.ReadFile(g.audit)
		lines = lines[:0]
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("audit line %q: %v", sc.Text(), err)
			}
			lines = append(lines, m)
		}
		if slices.ContainsFunc(lines, func(m map[string]any) bool { return m["outcome"] == "rate_limited" }) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, canary := range []string{alice, bob, argCanary, secretCanary, g.introSecret} {
		if bytes.Contains(raw, []byte(canary)) {
			t.Errorf("the audit log holds a secret or an argument value (%.12s…)", canary)
		}
	}
	find := func(want map[string]any) bool {
		return slices.ContainsFunc(lines, func(m map[string]any) bool {
			for k, v := range want {
				if m[k] != v {
					return false
				}
			}
			return true
		})
	}
	for _, want := range []map[string]any{
		{"event": "tools/call", "sub": "alice", "tool": "mcp__eng__deploy", "decision": "allow", "outcome": "ok", "server": "eng"},
		{"event": "tools/call", "sub": "bob", "tool": "mcp__sales__quote", "decision": "allow", "outcome": "ok"},
		{"event": "tools/call", "sub": "alice", "tool": "mcp__sales__quote", "decision": "deny", "outcome": "denied"},
		{"event": "tools/call", "sub": "alice", "tool": "mcp__eng__rollback", "decision": "deny", "outcome": "denied"},
		{"event": "tools/call", "sub": "alice", "tool": "mcp__common__secret_dump", "decision": "unknown", "outcome": "not_found"},
		{"event": "refused", "outcome": "unauthorized", "status": float64(401)},
		{"event": "refused", "outcome": "forbidden", "status": float64(403)},
		{"event": "refused", "outcome": "not_found", "status": float64(404), "sub": "bob"},
		{"event": "refused", "outcome": "rate_limited", "status": float64(429), "sub": "carol"},
	} {
		if !find(want) {
			t.Errorf("no audit line with %v", want)
		}
	}
	for _, m := range lines {
		// (A call of a name that names no tool, or none the caller is
		// served, has no rule: decision unknown.)
		if m["event"] == "tools/call" && m["decision"] != "unknown" && (m["rule"] == nil || m["duration_ms"] == nil) {
			t.Errorf("a call's line without its rule or duration: %v", m)
		}
	}
	// One line per call that reached the gateway's pipeline: the calls the
	// upstreams received all have theirs.
	okLines := 0
	for _, m := range lines {
		if m["event"] == "tools/call" && m["outcome"] == "ok" {
			okLines++
		}
	}
	received := 0
	for _, c := range []*canary{g.eng, g.sales, g.all} {
		_, calls := c.snapshot()
		received += len(calls)
	}
	if okLines != received {
		t.Errorf("%d ok call lines, %d calls received upstream", okLines, received)
	}
}

// testbinCmd is the gateway's command, with a home and config directory of
// the test's own.
func testbinCmd(dir, cfg string, args ...string) *execCmd {
	return newCmd(filepath.Join(binDir, "mcphost"), dir, append([]string{"--config", cfg, "--log-level", "info", "serve"}, args...))
}

type execCmd = exec.Cmd

func newCmd(bin, dir string, args []string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "MCPHOST_CONFIG_DIR="+filepath.Join(dir, "cfg"), "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "managed.hcl"))
	return cmd
}

// batchLimit: each request of a batch counts (a 2025-03-26 session may
// send batches): a batch over the principal's budget is refused whole, and
// nothing of it reaches the upstream.
func batchLimit(t *testing.T, g *gateway) {
	dave := g.idp.Login(t, "dave")
	cs := g.connect(t, dave, "2025-03-26")
	_, before := g.sales.snapshot()
	var batch []string
	for i := range 30 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__sales__quote","arguments":{}}}`, i+100))
	}
	req, _ := http.NewRequest(http.MethodPost, g.URL, strings.NewReader("["+strings.Join(batch, ",")+"]"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Authorization", "Bearer "+dave)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a batch of 30 calls over a burst of 20: %d %s", resp.StatusCode, out)
	}
	if _, after := g.sales.snapshot(); len(after) != len(before) {
		t.Errorf("the upstream received %d calls of the refused batch", len(after)-len(before))
	}
}

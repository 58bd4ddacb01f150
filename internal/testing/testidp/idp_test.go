package testidp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcphost/mcphost/sdk/oauthkit"
)

const (
	gatewayAud  = "http://127.0.0.1:1/mcp"
	upstreamAud = "http://127.0.0.1:2/upstream"
)

func startIdP(t *testing.T, mod ...func(*Options)) *IdP {
	t.Helper()
	o := Options{
		Users: []User{
			{Subject: "u-alice", Username: "alice", Password: "alice-pw", Groups: []string{"eng", "admins"}},
			{Username: "bob", Password: "bob-pw"},
		},
		Audience: []string{gatewayAud},
		Scopes:   []string{"mcp", "files:read"},
	}
	for _, m := range mod {
		m(&o)
	}
	return Start(t, o)
}

// getJSON GETs u and decodes it into out.
func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// verify checks tok's RS256 signature against the JWKS found through
// discovery and returns its header and claims.
func verify(t *testing.T, p *IdP, tok string) (jose.Header, map[string]any) {
	t.Helper()
	var disc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	getJSON(t, p.Issuer+"/.well-known/openid-configuration", &disc)
	var keys jose.JSONWebKeySet
	getJSON(t, disc.JWKSURI, &keys)
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatalf("not an RS256 JWT: %v", err)
	}
	h := parsed.Headers[0]
	ks := keys.Key(h.KeyID)
	if len(ks) != 1 {
		t.Fatalf("kid %q: %d keys in the JWKS", h.KeyID, len(ks))
	}
	var c map[string]any
	if err := parsed.Claims(ks[0].Key, &c); err != nil {
		t.Fatalf("signature: %v", err)
	}
	return h, c
}

func strs(v any) []string {
	var out []string
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		for _, e := range v {
			s, _ := e.(string)
			out = append(out, s)
		}
	}
	return out
}

func TestLoginJWT(t *testing.T) {
	p := startIdP(t)
	tok := p.Login(t, "alice")
	h, c := verify(t, p, tok)
	if h.KeyID != p.PublicJWK().KeyID || h.ExtraHeaders["typ"] != "JWT" {
		t.Errorf("header: kid %q typ %v, want kid %q typ JWT", h.KeyID, h.ExtraHeaders["typ"], p.PublicJWK().KeyID)
	}
	if c["iss"] != p.Issuer || c["sub"] != "u-alice" || c["client_id"] != ClientID {
		t.Errorf("iss %v sub %v client_id %v", c["iss"], c["sub"], c["client_id"])
	}
	if aud := strs(c["aud"]); !slices.Equal(aud, []string{gatewayAud, ClientID}) {
		t.Errorf("aud %q", aud)
	}
	if c["scope"] != "openid mcp files:read" {
		t.Errorf("scope %v", c["scope"])
	}
	if g := strs(c["groups"]); !slices.Equal(g, []string{"eng", "admins"}) {
		t.Errorf("groups %q", g)
	}
	exp, _ := c["exp"].(float64)
	if d := time.Until(time.Unix(int64(exp), 0)); d < DefaultTokenLifetime-time.Minute || d > DefaultTokenLifetime+time.Minute {
		t.Errorf("exp in %v", d)
	}

	// Explicit scopes, no openid; an unknown scope is dropped; a user
	// without groups has an empty groups claim.
	_, c = verify(t, p, p.Login(t, "bob", "mcp", "unknown"))
	if c["sub"] != "bob" || c["scope"] != "mcp" {
		t.Errorf("bob: sub %v scope %v", c["sub"], c["scope"])
	}
	if g, ok := c["groups"].([]any); !ok || len(g) != 0 {
		t.Errorf("bob: groups %#v", c["groups"])
	}
}

func TestWrongPassword(t *testing.T) {
	p := startIdP(t)
	_, err := p.TryLogin(t.Context(), "alice", "wrong")
	if !errors.Is(err, ErrLoginRefused) || !strings.Contains(err.Error(), "wrong username or password") {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := p.TryLogin(t.Context(), "nobody", "alice-pw"); !errors.Is(err, ErrLoginRefused) {
		t.Fatalf("unknown user: %v", err)
	}
	if _, err := p.TryLogin(t.Context(), "alice", "alice-pw"); err != nil {
		t.Fatalf("right password: %v", err)
	}
}

func TestDiscovery(t *testing.T) {
	for _, oidcOnly := range []bool{false, true} {
		p := startIdP(t, func(o *Options) { o.OIDCDiscoveryOnly = oidcOnly })
		client := oauthkit.NewGuardedClient(oauthkit.GuardOptions{AllowLoopback: true})
		asm, err := oauthkit.FetchAuthServerMeta(t.Context(), client, p.Issuer, oauthkit.MetadataOptions{AllowLoopback: true, RequirePKCE: true})
		if err != nil {
			t.Fatalf("oidcOnly=%v: %v", oidcOnly, err)
		}
		if asm.Issuer != p.Issuer || asm.JWKSURI != p.JWKSURL() || asm.TokenEndpoint != p.TokenURL() ||
			asm.IntrospectionEndpoint != p.IntrospectionURL() || asm.AuthorizationEndpoint != p.AuthorizationURL() {
			t.Errorf("metadata %+v", asm)
		}
		if !slices.Contains(asm.GrantTypesSupported, "urn:ietf:params:oauth:grant-type:token-exchange") {
			t.Errorf("grant types %q", asm.GrantTypesSupported)
		}
		if !slices.Contains(asm.ScopesSupported, "mcp") {
			t.Errorf("scopes %q", asm.ScopesSupported)
		}
		resp, err := http.Get(p.Issuer + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{false: 200, true: 404}[oidcOnly]; resp.StatusCode != want {
			t.Errorf("oidcOnly=%v: RFC 8414 path: HTTP %d, want %d", oidcOnly, resp.StatusCode, want)
		}
	}
}

func TestOpaqueIntrospection(t *testing.T) {
	p := startIdP(t)
	tok := p.LoginOpaque(t, "alice")
	if _, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256}); err == nil {
		t.Fatalf("opaque token is a JWT: %s", tok)
	}
	r, err := p.Introspect(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if r["active"] != true || r["sub"] != "u-alice" || r["username"] != "alice" || r["client_id"] != OpaqueClientID ||
		r["scope"] != "openid mcp files:read" || r["iss"] != p.Issuer || r["token_type"] != "Bearer" {
		t.Errorf("introspection %v", r)
	}
	if aud := strs(r["aud"]); !slices.Equal(aud, []string{gatewayAud, OpaqueClientID}) {
		t.Errorf("aud %q", aud)
	}
	if g := strs(r["groups"]); !slices.Equal(g, []string{"eng", "admins"}) {
		t.Errorf("groups %q", g)
	}

	// A JWT access token introspects too; garbage and a minted token
	// whose jti was never issued are inactive.
	if r, err := p.Introspect(t.Context(), p.Login(t, "bob")); err != nil || r["active"] != true || r["sub"] != "bob" {
		t.Errorf("JWT introspection: %v %v", r, err)
	}
	for _, bad := range []string{"garbage", p.Sign(t, p.ClaimsFor(t, "alice"))} {
		if r, err := p.Introspect(t.Context(), bad); err != nil || r["active"] != false || len(r) != 1 {
			t.Errorf("introspecting %.20s…: %v %v", bad, r, err)
		}
	}

	// The introspection client is the one authorized; wrong secrets are
	// refused, other clients get inactive.
	id, _ := p.IntrospectionClient()
	var out map[string]any
	if err := p.postForm(t.Context(), p.IntrospectionURL(), url.Values{"token": {tok}}, id, "wrong", &out); err == nil {
		t.Errorf("wrong secret accepted: %v", out)
	}
	eid, esecret := p.ExchangeClient()
	out = nil
	if err := p.postForm(t.Context(), p.IntrospectionURL(), url.Values{"token": {tok}}, eid, esecret, &out); err != nil || out["active"] != false {
		t.Errorf("introspection by the exchange client: %v %v", out, err)
	}
}

func TestExchange(t *testing.T) {
	p := startIdP(t, func(o *Options) { o.ExchangeAudiences = []string{upstreamAud} })
	user := p.Login(t, "alice")

	for name, subject := range map[string]string{"jwt": user, "opaque": p.LoginOpaque(t, "alice")} {
		tok, err := p.Exchange(t.Context(), subject, upstreamAud)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, c := verify(t, p, tok)
		if c["sub"] != "u-alice" || c["iss"] != p.Issuer || c["client_id"] != ExchangeClientID || c["scope"] != "openid mcp files:read" {
			t.Errorf("%s: claims %v", name, c)
		}
		if aud := strs(c["aud"]); !slices.Equal(aud, []string{upstreamAud}) {
			t.Errorf("%s: aud %q", name, aud)
		}
		if g := strs(c["groups"]); !slices.Equal(g, []string{"eng", "admins"}) {
			t.Errorf("%s: groups %q", name, g)
		}
	}

	// Down-scoping; the audience parameter (instead of resource).
	id, secret := p.ExchangeClient()
	var resp struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
	}
	form := url.Values{
		"grant_type":         {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":      {user},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"audience":           {upstreamAud},
		"scope":              {"files:read"},
	}
	if err := p.postForm(t.Context(), p.TokenURL(), form, id, secret, &resp); err != nil {
		t.Fatal(err)
	}
	if _, c := verify(t, p, resp.AccessToken); c["scope"] != "files:read" || !slices.Equal(strs(c["aud"]), []string{upstreamAud}) {
		t.Errorf("audience parameter, scope files:read: %v", c)
	}

	// Refusals.
	for name, tc := range map[string]struct {
		subject, aud, id, secret, want string
	}{
		"foreign audience":   {user, "http://127.0.0.1:3/other", id, secret, "invalid_target"},
		"no audience":        {user, "", id, secret, "invalid_target"},
		"client not allowed": {user, upstreamAud, IntrospectionClientID, func() string { _, s := p.IntrospectionClient(); return s }(), "unauthorized_client"},
		"wrong secret":       {user, upstreamAud, id, "wrong", "invalid_client"},
		"minted subject":     {p.Sign(t, p.ClaimsFor(t, "alice")), upstreamAud, id, secret, "invalid_grant"},
		"garbage subject":    {"garbage", upstreamAud, id, secret, "invalid_request"},
	} {
		f := url.Values{
			"grant_type":         {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token":      {tc.subject},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		}
		if tc.aud != "" {
			f.Set("resource", tc.aud)
		}
		var out map[string]any
		err := p.postForm(t.Context(), p.TokenURL(), f, tc.id, tc.secret, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v %v, want %s", name, out, err, tc.want)
		}
	}
}

func TestSign(t *testing.T) {
	p := startIdP(t)
	c := p.ClaimsFor(t, "alice")
	c["exp"] = time.Now().Add(-time.Hour).Unix()
	tok := p.Sign(t, c)
	h, got := verify(t, p, tok)
	if h.KeyID != p.PublicJWK().KeyID || got["sub"] != "u-alice" || got["exp"] != float64(c["exp"].(int64)) {
		t.Errorf("header %+v claims %v", h, got)
	}
	// The public JWK verifies it too.
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var cl jwt.Claims
	if err := parsed.Claims(p.PublicJWK().Key, &cl); err != nil {
		t.Fatal(err)
	}
	if err := cl.ValidateWithLeeway(jwt.Expected{Issuer: p.Issuer, AnyAudience: jwt.Audience{gatewayAud}}, 0); !errors.Is(err, jwt.ErrExpired) {
		t.Errorf("validation: %v, want expired", err)
	}
}

package fakeas

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
)

// IdP is an enterprise identity provider for tests of Enterprise-Managed
// Authorization (SEP-990), on 127.0.0.1: OpenID discovery, an authorization
// code login with PKCE that issues an id_token, and RFC 8693 token exchange
// of an id_token for an ID-JAG (an opaque string here; ASes check it with
// VerifyJAG). It records every request.
type IdP struct {
	HTTP *httptest.Server
	// DenyLogin makes /authorize answer error=access_denied.
	DenyLogin bool
	// Deny lists audiences (authorization servers) the user may not get
	// an ID-JAG for: the exchange answers access_denied.
	Deny map[string]bool

	mu       sync.Mutex
	requests []Request
	codes    map[string]url.Values
	idTokens map[string]bool
	jags     map[string]jag
}

type jag struct{ audience, resource, clientID string }

// NewIdP starts an IdP.
func NewIdP() *IdP {
	p := &IdP{Deny: map[string]bool{}, codes: map[string]url.Values{}, idTokens: map[string]bool{}, jags: map[string]jag{}}
	p.HTTP = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// Close stops the IdP.
func (p *IdP) Close() { p.HTTP.Close() }

// URL is the issuer.
func (p *IdP) URL() string { return p.HTTP.URL }

// IssueIDToken returns a valid id_token, as if from an earlier login.
func (p *IdP) IssueIDToken() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := "idt-" + rand.Text()
	p.idTokens[t] = true
	return t
}

// Requests returns the recorded requests to path.
func (p *IdP) Requests(path string) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Request
	for _, r := range p.requests {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// VerifyJAG is an authorization server's check of an ID-JAG (see
// Server.VerifyAssertion).
func (p *IdP) VerifyJAG(assertion string) (audience, resource, clientID string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j, ok := p.jags[assertion]
	return j.audience, j.resource, j.clientID, ok
}

func (p *IdP) serve(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	form := r.Form
	if r.Method == http.MethodGet {
		form = r.URL.Query()
	}
	p.mu.Lock()
	p.requests = append(p.requests, Request{Path: r.URL.Path, Form: form})
	p.mu.Unlock()
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "denied by the test IdP"})
	}
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		writeJSON(w, map[string]any{
			"issuer": p.HTTP.URL, "authorization_endpoint": p.HTTP.URL + "/authorize", "token_endpoint": p.HTTP.URL + "/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported": []string{"authorization_code", "urn:ietf:params:oauth:grant-type:token-exchange"},
		})
	case "/authorize":
		to, err := url.Parse(form.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		v := to.Query()
		v.Set("state", form.Get("state"))
		if p.DenyLogin {
			v.Set("error", "access_denied")
		} else {
			code := rand.Text()
			p.mu.Lock()
			p.codes[code] = form
			p.mu.Unlock()
			v.Set("code", code)
		}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	case "/token":
		p.mu.Lock()
		defer p.mu.Unlock()
		switch form.Get("grant_type") {
		case "authorization_code":
			q, ok := p.codes[form.Get("code")]
			delete(p.codes, form.Get("code"))
			sum := sha256.Sum256([]byte(form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") || q.Get("redirect_uri") != form.Get("redirect_uri") {
				fail("invalid_grant")
				return
			}
			t := "idt-" + rand.Text()
			p.idTokens[t] = true
			writeJSON(w, map[string]any{"access_token": "idp-at-" + rand.Text(), "token_type": "Bearer", "expires_in": 3600, "id_token": t})
		case "urn:ietf:params:oauth:grant-type:token-exchange":
			if !p.idTokens[form.Get("subject_token")] || form.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" ||
				form.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" {
				fail("invalid_grant")
				return
			}
			if p.Deny[form.Get("audience")] {
				fail("access_denied")
				return
			}
			j := "jag-" + rand.Text()
			p.jags[j] = jag{audience: form.Get("audience"), resource: form.Get("resource"), clientID: "mcphost-at-" + form.Get("audience")}
			writeJSON(w, map[string]any{"access_token": j, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A", "expires_in": 300})
		default:
			fail("unsupported_grant_type")
		}
	default:
		http.NotFound(w, r)
	}
}

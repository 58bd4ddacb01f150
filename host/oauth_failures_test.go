package host_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
	"github.com/mcphost/mcphost/sdk/oauthkit"
)

// browserLog is what a recording browser did: the URLs it opened and the
// status the callback answered each with.
type browserLog struct {
	mu       sync.Mutex
	opened   []string
	statuses []int
	done     chan struct{}
}

func (b *browserLog) snapshot() (opened []string, statuses []int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.opened...), append([]int(nil), b.statuses...)
}

// recordingBrowser follows the authorization URL like a user's browser (to
// the AS, redirected to mcphost's callback) and records the callback's
// status.
func recordingBrowser() (hauth.Presenter, *browserLog) {
	b := &browserLog{done: make(chan struct{}, 8)}
	return func(_ context.Context, u string) error {
		b.mu.Lock()
		b.opened = append(b.opened, u)
		b.mu.Unlock()
		go func() {
			defer func() { b.done <- struct{}{} }()
			// Not the presenter's context: the flow may end (and cancel
			// it) before the callback's answer has been read.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			b.mu.Lock()
			b.statuses = append(b.statuses, resp.StatusCode)
			b.mu.Unlock()
		}()
		return nil
	}, b
}

// TestOAuthLoginFailures: each attack on, or defect of, the authorization
// server stops the login before anything unsafe happens (no browser for
// bad metadata, no token request for a bad answer), runs the flow at most
// once, and reports what failed, classified by type, without telling the
// user who runs the login to run `mcphost auth login`.
func TestOAuthLoginFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(s *fakeas.Server)
		want error
		// browser: the flow got as far as opening the browser.
		browser bool
		// callbackStatus, if set, is what the callback must answer.
		callbackStatus int
	}{
		{name: "metadata issuer with a trailing slash (RFC 8414 §3.3)", want: oauthkit.ErrIssuerMismatch,
			set: func(s *fakeas.Server) { s.Metadata = func(m map[string]any) { m["issuer"] = s.AS.URL + "/" } }},
		{name: "PRM names the issuer with a trailing slash", want: oauthkit.ErrIssuerMismatch,
			set: func(s *fakeas.Server) {
				s.PRM = func(m map[string]any) { m["authorization_servers"] = []string{s.AS.URL + "/"} }
			}},
		{name: "metadata of another issuer", want: oauthkit.ErrIssuerMismatch,
			set: func(s *fakeas.Server) { s.Metadata = func(m map[string]any) { m["issuer"] = "https://honest.example" } }},
		{name: "no authorization server metadata", want: oauthkit.ErrNoAuthServerMetadata,
			set: func(s *fakeas.Server) { s.NoMetadata = true }},
		{name: "PKCE not advertised", want: oauthkit.ErrPKCENotSupported,
			set: func(s *fakeas.Server) { s.OmitPKCE = true }},
		{name: "only plain PKCE", want: oauthkit.ErrPKCENotSupported,
			set: func(s *fakeas.Server) {
				s.Metadata = func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} }
			}},
		{name: "authorization server on a private address", want: oauthkit.ErrBlockedAddress,
			set: func(s *fakeas.Server) {
				s.PRM = func(m map[string]any) { m["authorization_servers"] = []string{"https://10.255.255.1"} }
			}},
		{name: "token endpoint on a private address", want: oauthkit.ErrBlockedAddress,
			set: func(s *fakeas.Server) {
				s.Metadata = func(m map[string]any) { m["token_endpoint"] = "https://169.254.169.254/token" }
			}},
		{name: "unsafe authorization URL", want: hauth.ErrUnsafeURL,
			set: func(s *fakeas.Server) {
				s.Metadata = func(m map[string]any) { m["authorization_endpoint"] = s.AS.URL + "/authorize|touch" }
			}},
		{name: "wrong iss in the answer (RFC 9207)", want: hauth.ErrIssuerResponse, browser: true, callbackStatus: http.StatusBadRequest,
			set: func(s *fakeas.Server) { s.Callback = func(q url.Values) { q.Set("iss", "https://evil.example") } }},
		{name: "iss with a trailing slash", want: hauth.ErrIssuerResponse, browser: true, callbackStatus: http.StatusBadRequest,
			set: func(s *fakeas.Server) { s.Callback = func(q url.Values) { q.Set("iss", s.AS.URL+"/") } }},
		{name: "iss missing though advertised", want: hauth.ErrIssuerResponse, browser: true, callbackStatus: http.StatusBadRequest,
			set: func(s *fakeas.Server) { s.Callback = func(q url.Values) { q.Del("iss") } }},
		{name: "user denies", want: hauth.ErrAuthorizationDenied, browser: true, callbackStatus: http.StatusForbidden,
			set: func(s *fakeas.Server) {
				s.Callback = func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := fakeas.New()
			defer as.Close()
			as.Set(tc.set)
			h := oauthHost(t, protConfig("http", as.URL()), nil, io.Discard)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			present, b := recordingBrowser()
			err := h.Login(ctx, "prot", present)
			t.Logf("Login error: %v", err)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Login error = %v, want %v", err, tc.want)
			}
			if fe := (*hauth.FlowError)(nil); !errors.As(err, &fe) || fe.Server != "prot" {
				t.Errorf("Login error %v is not a FlowError for prot", err)
			}
			if strings.Contains(err.Error(), "auth login") {
				t.Errorf("the login's error tells the user to log in: %v", err)
			}
			if tc.browser {
				<-b.done
			}
			opened, statuses := b.snapshot()
			wantOpened := 0
			if tc.browser {
				wantOpened = 1
			}
			if len(opened) != wantOpened || len(as.Requests("/authorize")) != wantOpened {
				t.Errorf("browser opened %d times, %d authorization requests; want %d (one flow at most)", len(opened), len(as.Requests("/authorize")), wantOpened)
			}
			if tc.callbackStatus != 0 && (len(statuses) != 1 || statuses[0] != tc.callbackStatus) {
				t.Errorf("callback answered %v, want %d", statuses, tc.callbackStatus)
			}
			for _, r := range as.Requests("/token") {
				t.Errorf("a %s token request was sent", r.Form.Get("grant_type"))
			}
			if st := h.Connections().Get("prot").State(); st != conn.StateNeedsAuth {
				t.Errorf("state after the failed login = %v, want needs-auth", st)
			}
		})
	}
}

// TestOAuthLoginRunsOnce: one login runs one authorization flow, whatever
// the requests of the connect that follows (the go-sdk tries
// server/discover, then initialize: both are answered 401).
func TestOAuthLoginRunsOnce(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing=%v", fail), func(t *testing.T) {
			t.Parallel()
			as := fakeas.New()
			defer as.Close()
			if fail {
				as.Callback = func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }
			}
			h := oauthHost(t, protConfig("http", as.URL()), nil, io.Discard)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			present, b := recordingBrowser()
			err := h.Login(ctx, "prot", present)
			if (err != nil) != fail {
				t.Fatalf("Login: %v", err)
			}
			<-b.done
			opened, _ := b.snapshot()
			if n := len(as.Requests("/authorize")); n != 1 || len(opened) != 1 {
				t.Errorf("%d authorization requests, browser opened %d times; want 1", n, len(opened))
			}
			codeGrants := 0
			for _, r := range as.Requests("/token") {
				if r.Form.Get("grant_type") == "authorization_code" {
					codeGrants++
				}
			}
			if want := map[bool]int{false: 1, true: 0}[fail]; codeGrants != want {
				t.Errorf("%d authorization_code token requests, want %d", codeGrants, want)
			}
		})
	}
}

package auth_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// flakyStore is a shared token store (a Store and a Leaser) that can fail:
// its saves only, or everything (the state backend unreachable).
type flakyStore struct {
	auth.Store
	auth.Leaser

	mu       sync.Mutex
	failSave bool
	down     bool
	saves    int // failed saves
}

var errBackendDown = errors.New("dial tcp 10.0.0.7:6379: connection refused")

func (s *flakyStore) set(failSave, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failSave, s.down = failSave, down
}

func (s *flakyStore) Load(key string) (*auth.Record, error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return nil, errBackendDown
	}
	return s.Store.Load(key)
}

func (s *flakyStore) Save(key string, r *auth.Record) error {
	s.mu.Lock()
	fail := s.down || s.failSave
	if fail {
		s.saves++
	}
	s.mu.Unlock()
	if fail {
		return errBackendDown
	}
	return s.Store.Save(key, r)
}

func (s *flakyStore) Lease(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return nil, errBackendDown
	}
	return s.Leaser.Lease(ctx, key, ttl)
}

// syncBuffer is a log output the test reads while handlers write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// byHost sends each request to the in-process handler of its host.
type byHost map[string]http.RoundTripper

func (m byHost) RoundTrip(r *http.Request) (*http.Response, error) {
	rt, ok := m[r.URL.Host]
	if !ok {
		return nil, errors.New("no server at " + r.URL.Host)
	}
	return rt.RoundTrip(r)
}

// unauthorized has h answer a 401 of the MCP server at serverURL, as the
// go-sdk's transport does: nil once it has a token to retry with.
func unauthorized(h *auth.Handler, serverURL string) error {
	req, _ := http.NewRequest(http.MethodPost, serverURL, nil)
	return h.Authorize(context.Background(), req, &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody})
}

const machineSecret = "s3cret-client-credential"

func machineHandler(t *testing.T, as *fakeas.Server, store auth.Store, log hclog.Logger) *auth.Handler {
	t.Helper()
	h, err := auth.NewHandler(auth.HandlerConfig{
		Server: "svc", ServerURL: as.URL(), Store: store, StoreKey: storeKey, Logger: log,
		OAuth: &config.OAuth{Grant: config.GrantClientCredentials, ClientID: "c", ClientSecret: machineSecret, AllowLoopback: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMachineTokenWithoutSharedStore: a client_credentials server whose
// shared token store fails (its saves, or all of it) keeps working: the
// granted token serves this process unsaved, with a warning that names no
// secret, and is renewed at its expiry without the store; once the store is
// back, the next renewal saves its token there for the other replicas. (A
// token saved before the store was lost is renewed the same way.)
func TestMachineTokenWithoutSharedStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		failSave, down bool
		// later: the store works for the grant, and is unreachable from
		// then on.
		later bool
	}{
		{name: "saves fail", failSave: true},
		{name: "store unreachable", down: true},
		{name: "store lost after the grant", down: true, later: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := fakeas.New() // its listeners stay outside the bubble
			defer as.Close()
			as.Set(func(s *fakeas.Server) { s.TokenTTL = 120 })
			rt := byHost{as.AS.Listener.Addr().String(): inProcess{h: as.AS.Config.Handler}, as.MCP.Listener.Addr().String(): inProcess{h: as.MCP.Config.Handler}}
			synctest.Test(t, func(t *testing.T) {
				local, err := state.NewLocal(nil, "")
				if err != nil {
					t.Fatal(err)
				}
				store := &flakyStore{Store: local.Tokens(), Leaser: local}
				if !tc.later {
					store.set(tc.failSave, tc.down)
				}
				var logs syncBuffer
				h := machineHandler(t, as, store, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug}))
				auth.SetTransport(h, rt)

				if err := unauthorized(h, as.URL()); err != nil {
					t.Fatalf("authorizing with the store failing: %v", err)
				}
				first, err := token(h)
				if err != nil {
					t.Fatalf("token after the grant: %v", err)
				}
				for i := range 3 {
					if tok, err := token(h); err != nil || tok.AccessToken != first.AccessToken {
						t.Fatalf("request %d: %v, token changed: %v", i, err, tok.AccessToken != first.AccessToken)
					}
				}
				if n := len(as.Grants()); n != 1 {
					t.Fatalf("%d grants for requests within the token's life, want 1", n)
				}
				if tc.later {
					store.set(tc.failSave, tc.down)
				}

				// Renewed at its expiry, the store still failing.
				time.Sleep(61 * time.Second)
				second, err := token(h)
				if err != nil || second.AccessToken == first.AccessToken {
					t.Fatalf("renewal with the store failing: %v (a new token: %v)", err, err == nil && second.AccessToken != first.AccessToken)
				}
				if rec, err := local.Tokens().Load(storeKey); err == nil && rec.Token.AccessToken == second.AccessToken {
					t.Fatal("a record was saved while the store failed")
				}

				// The store is back: the next renewal saves its token.
				store.set(false, false)
				time.Sleep(2 * time.Minute)
				third, err := token(h)
				if err != nil || third.AccessToken == second.AccessToken {
					t.Fatalf("renewal with the store back: %v", err)
				}
				if rec, err := local.Tokens().Load(storeKey); err != nil || rec.Token.AccessToken != third.AccessToken {
					t.Errorf("the renewed token is not in the store once it is back: %v", err)
				}

				out := logs.String()
				if !strings.Contains(out, "kept in this process only") {
					t.Errorf("no warning of the token kept unsaved:\n%s", out)
				}
				secrets := []string{machineSecret}
				for _, g := range as.Grants() {
					secrets = append(secrets, g.AccessToken, g.RefreshToken)
				}
				for _, s := range secrets {
					if strings.Contains(out, s) {
						t.Errorf("the log shows a secret (%.6s…):\n%s", s, out)
					}
				}
			})
		})
	}
}

// TestMachineTokenSharedDPoPKey: against an authorization server that binds
// tokens with DPoP, a replica adopting the client_credentials token another
// replica stored signs its proofs with the key stored with the token (the
// one it is bound to), not with a key of its own: the MCP server accepts it.
func TestMachineTokenSharedDPoPKey(t *testing.T) {
	t.Parallel()
	for _, nonce := range []string{"", "n-1"} {
		t.Run("nonce="+nonce, func(t *testing.T) {
			t.Parallel()
			as := fakeas.New()
			defer as.Close()
			as.Set(func(s *fakeas.Server) { s.DPoP, s.DPoPNonce = true, nonce })
			local, err := state.NewLocal(nil, "")
			if err != nil {
				t.Fatal(err)
			}
			store := auth.LeasedStore{Store: local.Tokens(), Leaser: local}
			a := machineHandler(t, as, store, nil)
			b := machineHandler(t, as, store, nil)
			if err := unauthorized(a, as.URL()); err != nil {
				t.Fatal(err)
			}
			if err := unauthorized(b, as.URL()); err != nil {
				t.Fatal(err)
			}
			ra, rb := a.Record(), b.Record()
			if ra == nil || rb == nil || rb.Token.AccessToken != ra.Token.AccessToken || !strings.EqualFold(rb.Token.TokenType, "DPoP") {
				t.Fatalf("b did not adopt a's DPoP-bound token: %+v %+v", ra, rb)
			}
			if n := len(as.Grants()); n != 1 {
				t.Fatalf("%d grants, want 1", n)
			}
			for name, h := range map[string]*auth.Handler{"a": a, "b": b} {
				tok, err := token(h)
				if err != nil {
					t.Fatal(err)
				}
				body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
				req, _ := http.NewRequest(http.MethodPost, as.URL(), strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
				resp, err := h.ResourceTransport(http.DefaultTransport).RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s's request with the shared token: %s", name, resp.Status)
				}
			}
			if errs := as.DPoPErrors(); len(errs) > 0 {
				t.Errorf("DPoP proofs refused: %q", errs)
			}
		})
	}
}

package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// storeKey is the store key of the server's own credentials; a per-user
// connection's key adds "@" and the user (conn.Conn.storeKey).
const storeKey = "svc:cfghash"

// inProcess is the fake authorization server's handler as a RoundTripper:
// a synctest bubble cannot wait on a loopback listener. Each answer takes
// delay (of the bubble's fake time), so that a refresh holds its lease
// while the other replicas ask for it.
type inProcess struct {
	h     http.Handler
	delay time.Duration
}

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.delay > 0 {
		t := time.NewTimer(p.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	w := httptest.NewRecorder()
	p.h.ServeHTTP(w, r)
	return w.Result(), nil
}

// recLeaser records the leases taken through it, and fails them all with
// err when it is set.
type recLeaser struct {
	l   auth.Leaser
	err error

	mu    sync.Mutex
	taken map[string]int // key -> leases taken
	held  int            // ErrLeaseHeld answers
}

func (r *recLeaser) Lease(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	if r.err != nil {
		return nil, r.err
	}
	release, err := r.l.Lease(ctx, key, ttl)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.taken[key]++
	case errors.Is(err, auth.ErrLeaseHeld):
		r.held++
	}
	return release, err
}

func (r *recLeaser) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.taken {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// seed has the authorization server issue a token (a client-credentials
// grant, the fake's way to mint a valid refresh token) and returns it as an
// authorization-code record expiring at expiry.
func seed(t *testing.T, as *fakeas.Server, rt http.RoundTripper, expiry time.Time) *auth.Record {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest(http.MethodPost, as.AS.URL+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.RefreshToken == "" {
		t.Fatalf("seeding a token: %v %+v", err, tok)
	}
	return &auth.Record{
		Server: "svc", Grant: config.GrantAuthorizationCode, Issuer: as.AS.URL, ClientID: "c",
		TokenURL: as.AS.URL + "/token", Resource: as.URL(),
		Token:     &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: "Bearer", Expiry: expiry},
		UpdatedAt: time.Now(),
	}
}

// refreshGrants returns the refresh tokens presented to the authorization
// server, in order.
func refreshGrants(as *fakeas.Server) []string {
	var out []string
	for _, r := range as.Requests("/token") {
		if r.Form.Get("grant_type") == "refresh_token" {
			out = append(out, r.Form.Get("refresh_token"))
		}
	}
	return out
}

// replica is one gateway replica's handler for a store key, built as the
// gateway builds it (NewHandler loads the stored record).
func replica(t *testing.T, store auth.Store, key string, rt http.RoundTripper, allowLoopback bool) *auth.Handler {
	t.Helper()
	h, err := auth.NewHandler(auth.HandlerConfig{
		Server: "svc", ServerURL: "https://mcp.example/mcp", OAuth: &config.OAuth{AllowLoopback: allowLoopback},
		Store: store, StoreKey: key,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rt != nil {
		auth.SetTransport(h, rt)
	}
	return h
}

func token(h *auth.Handler) (*oauth2.Token, error) {
	src, err := h.TokenSource(context.Background())
	if err != nil || src == nil {
		return nil, fmt.Errorf("no token source: %v", err)
	}
	return src.Token()
}

// refused answers the handler's current token with a 401, as a server that
// revoked it does: the handler refreshes once (forceRefresh) and returns
// nil, or needs a login.
func refused(h *auth.Handler) error {
	req, _ := http.NewRequest(http.MethodPost, "https://mcp.example/mcp", nil)
	return h.Authorize(context.Background(), req, &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody})
}

// TestRefreshLease: token sources of several replicas share one store that
// leases its keys; whichever way a refresh is triggered (the token
// expiring, or a 401 for it), the authorization server sees one refresh
// per credential, every replica ends with the new token, and the store
// keeps the rotated refresh token (the next refresh uses it).
func TestRefreshLease(t *testing.T) {
	t.Parallel()
	errUnreachable := errors.New("state backend unreachable")
	tests := []struct {
		name  string
		users []string // per-user credentials; none: the server's own
		// replicas: each makes one call, all at once. (Concurrent calls on
		// one replica wait on its token source's mutex, which a synctest
		// bubble does not count as durably blocked: that case is in
		// TestRefreshLeaseRealServer.)
		replicas int
		trigger  string // "expiry" (Token) or "401" (Authorize)
		// crashed: a replica took the first key's lease for this long and
		// died without releasing it.
		crashed time.Duration
		// noLeaser: the store has no leases (one process's file store);
		// the replicas then run one after the other.
		noLeaser bool
		leaseErr error
		deleted  bool // the stored record was deleted (a logout elsewhere)

		wantGrants int // refresh grants per key
		wantErr    error
	}{
		{name: "expiry", replicas: 4, trigger: "expiry", wantGrants: 1},
		{name: "401", replicas: 4, trigger: "401", wantGrants: 1},
		{name: "expiry, holder died", replicas: 2, trigger: "expiry", crashed: 10 * time.Second, wantGrants: 1},
		{name: "401, holder died", replicas: 2, trigger: "401", crashed: 10 * time.Second, wantGrants: 1},
		{name: "per user", users: []string{"alice", "bob"}, replicas: 3, trigger: "expiry", wantGrants: 1},
		{name: "per user, one user's holder died", users: []string{"alice", "bob"}, replicas: 2, trigger: "expiry", crashed: 10 * time.Second, wantGrants: 1},
		{name: "no leaser, one replica after the other", replicas: 2, trigger: "expiry", noLeaser: true, wantGrants: 1},
		{name: "lease error", replicas: 2, trigger: "expiry", leaseErr: errUnreachable, wantErr: errUnreachable},
		{name: "record deleted", replicas: 2, trigger: "expiry", deleted: true, wantErr: auth.ErrLoginRequired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := fakeas.New() // its listeners stay outside the bubble
			defer as.Close()
			synctest.Test(t, func(t *testing.T) {
				local, err := state.NewLocal(nil, "")
				if err != nil {
					t.Fatal(err)
				}
				leaser := &recLeaser{l: local, err: tc.leaseErr, taken: map[string]int{}}
				var store auth.Store = auth.LeasedStore{Store: local.Tokens(), Leaser: leaser}
				if tc.noLeaser {
					store = local.Tokens()
				}
				rt := inProcess{h: as.AS.Config.Handler, delay: 300 * time.Millisecond}
				keys := []string{storeKey}
				if tc.users != nil {
					keys = nil
					for _, u := range tc.users {
						keys = append(keys, storeKey+"@"+u)
					}
				}
				expiry := time.Now().Add(-time.Second) // expired
				if tc.trigger == "401" {
					expiry = time.Now().Add(time.Hour) // valid, but refused
				}
				seeded := map[string]*auth.Record{}
				for _, k := range keys {
					seeded[k] = seed(t, as, rt, expiry)
					if err := store.Save(k, seeded[k]); err != nil {
						t.Fatal(err)
					}
				}
				reps := map[string][]*auth.Handler{}
				for _, k := range keys {
					for range tc.replicas {
						reps[k] = append(reps[k], replica(t, store, k, rt, false))
					}
				}
				if tc.deleted {
					store.Delete(keys[0])
				}
				if tc.crashed > 0 {
					if _, err := local.Lease(context.Background(), keys[0], tc.crashed); err != nil {
						t.Fatal(err)
					}
				}

				// Every replica at once (or, without leases, one after
				// the other).
				start := time.Now()
				type result struct {
					key   string
					token string
					err   error
					took  time.Duration
				}
				var (
					mu      sync.Mutex
					results []result
					wg      sync.WaitGroup
				)
				call := func(k string, h *auth.Handler) {
					var r result
					if tc.trigger == "401" {
						r.err = refused(h)
						if rec := h.Record(); rec != nil {
							r.token = rec.Token.AccessToken
						}
					} else if tok, err := token(h); err != nil {
						r.err = err
					} else {
						r.token = tok.AccessToken
					}
					r.key, r.took = k, time.Since(start)
					mu.Lock()
					results = append(results, r)
					mu.Unlock()
				}
				for _, k := range keys {
					for _, h := range reps[k] {
						if tc.noLeaser {
							call(k, h)
							continue
						}
						wg.Go(func() { call(k, h) })
					}
				}
				wg.Wait()

				grants := refreshGrants(as)
				for _, k := range keys {
					seededRT := seeded[k].Token.RefreshToken
					var mine []string
					for _, g := range grants {
						if g == seededRT {
							mine = append(mine, g)
						}
					}
					if len(mine) != tc.wantGrants {
						t.Errorf("%s: %d refresh grants with its refresh token, want %d (grants: %d in all)", k, len(mine), tc.wantGrants, len(grants))
					}
					stored, err := local.Tokens().Load(k)
					if tc.wantErr != nil {
						for _, r := range results {
							if r.key == k && !errors.Is(r.err, tc.wantErr) {
								t.Errorf("%s: err = %v, want %v", k, r.err, tc.wantErr)
							}
						}
						if err == nil && stored.Token.AccessToken != seeded[k].Token.AccessToken {
							t.Errorf("%s: the stored token changed without a refresh", k)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", k, err)
					}
					// The rotated refresh token is stored, and is not the
					// one just spent.
					if stored.Token.RefreshToken == seededRT || stored.Token.AccessToken == seeded[k].Token.AccessToken {
						t.Errorf("%s: stored %q/%q, want a rotated pair", k, stored.Token.AccessToken, stored.Token.RefreshToken)
					}
					var slowest time.Duration
					for _, r := range results {
						if r.key != k {
							continue
						}
						if r.err != nil || r.token != stored.Token.AccessToken {
							t.Errorf("%s: a call got %q, %v; want the stored token %q", k, r.token, r.err, stored.Token.AccessToken)
						}
						slowest = max(slowest, r.took)
					}
					for i, h := range reps[k] {
						if rec := h.Record(); rec.Token.RefreshToken != stored.Token.RefreshToken {
							t.Errorf("%s: replica %d holds refresh token %q, want the rotated %q", k, i, rec.Token.RefreshToken, stored.Token.RefreshToken)
						}
					}
					// A dead holder's lease is waited for, then taken over;
					// it holds back no other key.
					if tc.crashed > 0 && k == keys[0] {
						if slowest < tc.crashed || slowest > tc.crashed+2*time.Second {
							t.Errorf("%s: the calls took %v, want the dead holder's lease (%v) and a refresh", k, slowest, tc.crashed)
						}
					} else if slowest > 2*time.Second {
						t.Errorf("%s: the calls took %v", k, slowest)
					}
				}
				if tc.wantErr != nil {
					return
				}
				if !tc.noLeaser {
					// Leases are per store key: per user for per-user
					// credentials, never one lock for all.
					if diff := cmp.Diff(keys, leaser.keys()); diff != "" {
						t.Errorf("leased keys (-want +got):\n%s", diff)
					}
					if tc.replicas > 1 && leaser.held == 0 {
						t.Errorf("no replica ever waited for a lease; the test does not exercise waiting")
					}
				}

				// The next expiry: one more refresh per key, with the
				// rotated refresh token (the fake refuses a spent one).
				time.Sleep(time.Hour)
				before := len(refreshGrants(as))
				for _, k := range keys {
					for _, h := range reps[k] {
						refresh := func() {
							if _, err := token(h); err != nil {
								t.Errorf("%s: second refresh: %v", k, err)
							}
						}
						if tc.noLeaser {
							refresh()
							continue
						}
						wg.Go(refresh)
					}
				}
				wg.Wait()
				if n := len(refreshGrants(as)) - before; n != len(keys) {
					t.Errorf("second round: %d refresh grants, want %d", n, len(keys))
				}
			})
		})
	}
}

// TestRefreshLeaseErrorIsClear: an error taking the lease fails the
// refresh (no refresh without it) with a message naming the lease and the
// cause.
func TestRefreshLeaseErrorIsClear(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	synctest.Test(t, func(t *testing.T) {
		local, _ := state.NewLocal(nil, "")
		rt := inProcess{h: as.AS.Config.Handler}
		store := auth.LeasedStore{Store: local.Tokens(), Leaser: &recLeaser{l: local, err: errors.New("dial tcp 10.0.0.7:6379: connection refused")}}
		if err := store.Save(storeKey, seed(t, as, rt, time.Now().Add(-time.Second))); err != nil {
			t.Fatal(err)
		}
		_, err := token(replica(t, store, storeKey, rt, false))
		want := "refreshing the token of svc: taking the refresh lease: dial tcp 10.0.0.7:6379: connection refused"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
		if n := len(refreshGrants(as)); n != 0 {
			t.Errorf("%d refresh grants without a lease", n)
		}
	})
}

// TestRefreshLeaseWaitEndsWithContext: a caller waiting behind a live
// holder gives up when its context ends, without refreshing.
func TestRefreshLeaseWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	synctest.Test(t, func(t *testing.T) {
		local, _ := state.NewLocal(nil, "")
		rt := inProcess{h: as.AS.Config.Handler}
		store := auth.LeasedStore{Store: local.Tokens(), Leaser: local}
		rec := seed(t, as, rt, time.Now().Add(time.Hour))
		if err := store.Save(storeKey, rec); err != nil {
			t.Fatal(err)
		}
		h := replica(t, store, storeKey, rt, false)
		if _, err := local.Lease(context.Background(), storeKey, time.Hour); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://mcp.example/mcp", nil)
		start := time.Now()
		err := h.Authorize(ctx, req, &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody})
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("gave up after %v, want the context's 3s", took)
		}
		if !errors.Is(err, auth.ErrLoginRequired) { // the refresh failed: a login is needed
			t.Errorf("err = %v", err)
		}
		if n := len(refreshGrants(as)); n != 0 {
			t.Errorf("%d refresh grants while another held the lease", n)
		}
	})
}

// TestRefreshLeaseReloadsUnderLease: a replica that read the store just
// before another finished its refresh and released the lease takes the
// lease, reads the store again and uses that refresh's token, rather than
// spend the refresh token again.
func TestRefreshLeaseReloadsUnderLease(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	synctest.Test(t, func(t *testing.T) {
		local, _ := state.NewLocal(nil, "")
		rt := inProcess{h: as.AS.Config.Handler}
		hook := &hookLeaser{l: local}
		store := auth.LeasedStore{Store: local.Tokens(), Leaser: hook}
		if err := store.Save(storeKey, seed(t, as, rt, time.Now().Add(-time.Second))); err != nil {
			t.Fatal(err)
		}
		a, b := replica(t, store, storeKey, rt, false), replica(t, store, storeKey, rt, false)
		// B has read the store and asks for the lease; A refreshes first.
		var aTok *oauth2.Token
		hook.before = func() {
			var err error
			if aTok, err = token(a); err != nil {
				t.Errorf("replica A: %v", err)
			}
		}
		bTok, err := token(b)
		if err != nil {
			t.Fatalf("replica B: %v", err)
		}
		if n := len(refreshGrants(as)); n != 1 {
			t.Errorf("%d refresh grants, want 1", n)
		}
		if aTok == nil || bTok.AccessToken != aTok.AccessToken {
			t.Errorf("B got %q, want A's refreshed %v", bTok.AccessToken, aTok)
		}
	})
}

// hookLeaser runs before when the first lease is asked for (the leases
// before asks for go straight through).
type hookLeaser struct {
	l      auth.Leaser
	fired  atomic.Bool
	before func()
}

func (h *hookLeaser) Lease(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	if h.before != nil && !h.fired.Swap(true) {
		h.before()
	}
	return h.l.Lease(ctx, key, ttl)
}

// TestRefreshLeaseRealServer: two replicas (handlers built from the shared
// store, as the gateway builds them) against the fake authorization server
// on 127.0.0.1, each called by several goroutines at once while the
// authorization server takes 100 ms to answer: one refresh grant, every
// call gets the new token, and the store keeps the rotated refresh token
// of a token that was loaded from it. Real time: the waits are a few
// polls (50, 100 ms).
func TestRefreshLeaseRealServer(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	local, err := state.NewLocal(&auth.FileStore{Dir: t.TempDir()}, "")
	if err != nil {
		t.Fatal(err)
	}
	leaser := &recLeaser{l: local, taken: map[string]int{}}
	store := auth.LeasedStore{Store: local.Tokens(), Leaser: leaser}
	rec := seed(t, as, http.DefaultTransport, time.Now().Add(-time.Second))
	if err := store.Save(storeKey, rec); err != nil {
		t.Fatal(err)
	}
	slow := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		time.Sleep(100 * time.Millisecond)
		return http.DefaultTransport.RoundTrip(r)
	})
	a, b := replica(t, store, storeKey, slow, true), replica(t, store, storeKey, slow, true)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		tokens []string
	)
	for range 4 {
		for _, h := range []*auth.Handler{a, b} {
			wg.Go(func() {
				tok, err := token(h)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				tokens = append(tokens, tok.AccessToken)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if g := refreshGrants(as); len(g) != 1 || g[0] != rec.Token.RefreshToken {
		t.Errorf("refresh grants with %q, want one with the stored %q", g, rec.Token.RefreshToken)
	}
	stored, err := store.Load(storeKey)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Token.RefreshToken == rec.Token.RefreshToken {
		t.Errorf("the store kept the spent refresh token")
	}
	slices.Sort(tokens)
	if tokens = slices.Compact(tokens); len(tokens) != 1 || tokens[0] != stored.Token.AccessToken || !as.Issued(tokens[0]) {
		t.Errorf("replicas got %q, want the one stored token %q", tokens, stored.Token.AccessToken)
	}
	if leaser.held == 0 {
		t.Errorf("no replica waited for the lease; the test does not exercise waiting")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

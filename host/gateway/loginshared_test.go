package gateway

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/state"
)

// mortalState is a replica's view of the shared state: once the replica
// is dead, nothing it writes reaches the state any more.
type mortalState struct {
	state.Backend
	mu   sync.Mutex
	dead bool
}

func (s *mortalState) die() {
	s.mu.Lock()
	s.dead = true
	s.mu.Unlock()
}

func (s *mortalState) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	s.mu.Lock()
	dead := s.dead
	s.mu.Unlock()
	if dead {
		return errors.New("this replica is gone")
	}
	return s.Backend.Put(ctx, key, value, ttl)
}

// loginReplica is a gateway replica whose logins (the host's, with a
// browser) are played by the test: each presents a URL, then ends with
// what the test sends on end.
type loginReplica struct {
	*Gateway
	st  *mortalState
	end chan error
}

// loginPair is two login replicas, A and B, sharing a local state.
func loginPair(t *testing.T) (a, b *loginReplica) {
	t.Helper()
	shared, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return newLoginReplica("A", shared), newLoginReplica("B", shared)
}

func newLoginReplica(name string, shared state.Backend) *loginReplica {
	r := &loginReplica{st: &mortalState{Backend: shared}, end: make(chan error)}
	r.Gateway = &Gateway{log: hclog.NewNullLogger(), state: r.st, replica: name}
	r.logins.run = func(ctx context.Context, server string, present hauth.Presenter) error {
		if err := present(ctx, "https://as.example/authorize?login"); err != nil {
			return err
		}
		select {
		case err := <-r.end:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r
}

// retry is a client's retry for the login with nonce, waiting on r.
type retry struct {
	done chan struct{}
	here bool
	err  error
}

func (r *loginReplica) retry(ctx context.Context, nonce string) *retry {
	rt := &retry{done: make(chan struct{})}
	go func() {
		defer close(rt.done)
		rt.here, rt.err = r.awaitLogin(ctx, "srv", "mcp__srv__authenticate", nonce)
	}()
	return rt
}

func (rt *retry) ended() bool {
	select {
	case <-rt.done:
		return true
	default:
		return false
	}
}

func (r *loginReplica) forgotten() bool {
	r.logins.mu.Lock()
	defer r.logins.mu.Unlock()
	return len(r.logins.current) == 0 && len(r.logins.byNonce) == 0
}

// TestLoginRetryWaitsForItsOwnLogin: a user's login L1 ended on replica A;
// the same user's L2 runs on B. L2's retry reaching A waits for L2 (it
// does not answer with L1's outcome) and reports L2's; L1's retry still
// gets L1's outcome on either replica; and each replica forgets its ended
// logins loginLinger after their end.
func TestLoginRetryWaitsForItsOwnLogin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := loginPair(t)
		ctx := context.Background()

		l1, err := a.startLogin(ctx, ctx, "srv")
		if err != nil {
			t.Fatal(err)
		}
		a.end <- nil // L1 succeeds
		<-l1.done
		l2, err := b.startLogin(ctx, ctx, "srv")
		if err != nil {
			t.Fatal(err)
		}
		if l2.nonce == l1.nonce || l2.nonce == "" {
			t.Fatalf("nonces %q, %q: want two distinct ones", l1.nonce, l2.nonce)
		}

		r2 := a.retry(ctx, l2.nonce)
		time.Sleep(time.Minute)
		synctest.Wait()
		if r2.ended() {
			t.Fatalf("L2's retry on A ended while L2 runs on B: %v", r2.err)
		}
		b.end <- errors.New("access_denied")
		<-r2.done
		if r2.here || r2.err == nil || !strings.Contains(r2.err.Error(), "access_denied") {
			t.Fatalf("L2's retry on A: here %v, %v; want L2's failure", r2.here, r2.err)
		}
		for _, r := range []*loginReplica{a, b} {
			rt := r.retry(ctx, l1.nonce)
			<-rt.done
			if rt.err != nil || rt.here != (r == a) {
				t.Errorf("L1's retry on %s: here %v, %v; want L1's success", r.replica, rt.here, rt.err)
			}
		}

		// A newer login on A does not take L1's place for L1's retry.
		l3, err := a.startLogin(ctx, ctx, "srv")
		if err != nil || l3 == l1 {
			t.Fatalf("L3: %v (L1 again: %v)", err, l3 == l1)
		}
		if rt := a.retry(ctx, l1.nonce); func() bool { <-rt.done; return rt.err != nil }() {
			t.Errorf("L1's retry on A during L3: %v", rt.err)
		}
		a.end <- errors.New("L3 failed")
		<-l3.done

		time.Sleep(loginLinger + time.Second)
		for _, r := range []*loginReplica{a, b} {
			if !r.forgotten() {
				t.Errorf("%s still holds logins ended %v ago", r.replica, loginLinger)
			}
		}
		rt := a.retry(ctx, l1.nonce)
		<-rt.done
		if rt.err == nil || !strings.Contains(rt.err.Error(), "no login to srv is in progress") {
			t.Errorf("L1's retry after the linger: %v", rt.err)
		}
	})
}

// TestLoginLostWithItsReplica: a retry waits for a login another replica
// runs as long as it runs (its pending record renewed, far beyond the
// record's own life); once that replica is gone, the retry reports within
// about loginPendingTTL that the login was lost and that the authenticate
// tool is to be called again, rather than wait for the login's timeout.
func TestLoginLostWithItsReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := loginPair(t)
		ctx := context.Background()
		l, err := a.startLogin(ctx, ctx, "srv")
		if err != nil {
			t.Fatal(err)
		}
		rt := b.retry(ctx, l.nonce)
		time.Sleep(10 * loginPendingTTL)
		synctest.Wait()
		if rt.ended() {
			t.Fatalf("the retry ended while the login runs: %v", rt.err)
		}

		a.st.die()
		died := time.Now()
		<-rt.done
		if took := time.Since(died); took > loginPendingTTL+loginPollMax {
			t.Errorf("the retry noticed the loss after %v, want at most %v", took, loginPendingTTL+loginPollMax)
		}
		if rt.err == nil || !strings.Contains(rt.err.Error(), "was lost") || !strings.Contains(rt.err.Error(), "call mcp__srv__authenticate again") {
			t.Errorf("retry after the replica died: %v", rt.err)
		}

		a.end <- errors.New("gone") // (the dead replica's goroutines end)
		<-l.done
		// Its renewal stopped with the login.
		synctest.Wait()
	})
}

// TestLoginRenewalStopsWithTheLogin: the pending record's renewal belongs
// to the login: once the login ends, its ended record is not overwritten,
// and nothing renews it any more.
func TestLoginRenewalStopsWithTheLogin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared, err := state.NewLocal(nil, "")
		if err != nil {
			t.Fatal(err)
		}
		a := newLoginReplica("A", shared)
		ctx := context.Background()
		l, err := a.startLogin(ctx, ctx, "srv")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(loginRenewEvery*2 + time.Second)
		a.end <- nil
		<-l.done
		time.Sleep(3 * loginRenewEvery)
		b, err := shared.Get(ctx, cluster.LoginKey(l.id, l.nonce))
		if err != nil || !strings.Contains(string(b), `"state":"ended"`) {
			t.Fatalf("the login's record after its end: %s, %v", b, err)
		}
		time.Sleep(loginLinger)
		if _, err := shared.Get(ctx, cluster.LoginKey(l.id, l.nonce)); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("the ended record outlived loginLinger: %v", err)
		}
	})
}

// Package statetest is the behaviour every state.Backend shares, as tests:
// Run checks a backend against what the state package's interfaces
// promise, so that Local and the Redis backend are held to the same rules.
//
// The tests rely on short TTLs and poll for what happens in time; none
// sleeps longer than about half a second.
package statetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
)

// Run runs the behaviour tests, in parallel, each on a backend of its own:
// newBackend must return an empty backend that nothing else uses (for a
// shared one, a fresh key prefix), closed when t ends.
func Run(t *testing.T, newBackend func(t *testing.T) state.Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, b state.Backend)
	}{
		{"Basics", testBasics},
		{"KV", testKV},
		{"KVExpiry", testKVExpiry},
		{"PutNew", testPutNew},
		{"Lease", testLease},
		{"LeaseExpiry", testLeaseExpiry},
		{"LeaseRace", testLeaseRace},
		{"PubSubOrder", testPubSubOrder},
		{"PubSubChannels", testPubSubChannels},
		{"PubSubCancel", testPubSubCancel},
		{"PubSubCancelWaits", testPubSubCancelWaits},
		{"PushPop", testPushPop},
		{"PopWaits", testPopWaits},
		{"PopContext", testPopContext},
		{"ListExpiry", testListExpiry},
		{"RateLimit", testRateLimit},
		{"RateLimitDefaultBurst", testRateLimitDefaultBurst},
		{"Concurrency", testConcurrency},
		{"ConcurrencyBeforeRate", testConcurrencyBeforeRate},
		{"Unlimited", testUnlimited},
		{"LimiterNames", testLimiterNames},
		{"Pins", testPins},
		{"Tokens", testTokens},
		{"TokenLease", testTokenLease},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newBackend(t))
		})
	}
}

// eventually polls cond until it holds, failing the test after 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(cond) {
		t.Fatalf("%s: not after 5s", what)
	}
}

// poll polls cond until it holds, for up to 5 s, and reports whether it
// did.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func testBasics(t *testing.T, b state.Backend) {
	if b.Kind() == "" {
		t.Error("Kind() is empty")
	}
	if err := b.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func testKV(t *testing.T, b state.Backend) {
	ctx := t.Context()
	if _, err := b.Get(ctx, "k"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
	}
	mustPut(t, b, "k", "1", time.Minute)
	mustGet(t, b, "k", "1")
	mustPut(t, b, "k", "2", time.Minute)
	mustGet(t, b, "k", "2")

	// The backend keeps its own copy and gives one out.
	v := []byte("xyz")
	if err := b.Put(ctx, "copy", v, time.Minute); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	got, err := b.Get(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	got[0] = 'Q'
	mustGet(t, b, "copy", "xyz")

	bin := "\x00\xff\r\n\x00"
	mustPut(t, b, "bin", bin, time.Minute)
	mustGet(t, b, "bin", bin)
	mustPut(t, b, "empty", "", time.Minute)
	mustGet(t, b, "empty", "")

	if err := b.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx, "never"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
}

func testKVExpiry(t *testing.T, b state.Backend) {
	ctx := t.Context()
	mustPut(t, b, "short", "v", 100*time.Millisecond)
	mustPut(t, b, "long", "v", time.Minute)
	eventually(t, "the value with a 100ms ttl expires", func() bool {
		_, err := b.Get(ctx, "short")
		return errors.Is(err, state.ErrNotFound)
	})
	mustGet(t, b, "long", "v")
}

func testPutNew(t *testing.T, b state.Backend) {
	ctx := t.Context()
	putNew := func(key, value string, ttl time.Duration) bool {
		t.Helper()
		ok, err := b.PutNew(ctx, key, []byte(value), ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !putNew("k", "first", time.Minute) {
		t.Fatal("PutNew of a missing key did not store")
	}
	if putNew("k", "second", time.Minute) {
		t.Error("PutNew over a value stored")
	}
	mustGet(t, b, "k", "first")
	if err := b.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if !putNew("k", "third", time.Minute) {
		t.Error("PutNew after Delete did not store")
	}
	mustGet(t, b, "k", "third")

	if !putNew("short", "a", 100*time.Millisecond) {
		t.Fatal("PutNew did not store")
	}
	eventually(t, "PutNew stores once the value expired", func() bool { return putNew("short", "b", time.Minute) })
	mustGet(t, b, "short", "b")
}

func testLease(t *testing.T, b state.Backend) {
	ctx := t.Context()
	r1, err := b.Lease(ctx, "L", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lease(ctx, "L", time.Minute); !errors.Is(err, state.ErrHeld) || !errors.Is(err, auth.ErrLeaseHeld) {
		t.Fatalf("second Lease: %v, want ErrHeld", err)
	}
	rOther, err := b.Lease(ctx, "other", time.Minute)
	if err != nil {
		t.Fatalf("Lease of another key: %v", err)
	}
	defer rOther()
	r1()
	r2, err := b.Lease(ctx, "L", time.Minute)
	if err != nil {
		t.Fatalf("Lease after release: %v", err)
	}
	r1() // again: must not release r2's lease
	if _, err := b.Lease(ctx, "L", time.Minute); !errors.Is(err, state.ErrHeld) {
		t.Errorf("Lease after a second release of the first holder: %v, want ErrHeld", err)
	}
	r2()
}

func testLeaseExpiry(t *testing.T, b state.Backend) {
	ctx := t.Context()
	stale, err := b.Lease(ctx, "L", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var fresh func()
	eventually(t, "the lease with a 100ms ttl expires", func() bool {
		r, err := b.Lease(ctx, "L", time.Minute)
		if err != nil && !errors.Is(err, state.ErrHeld) {
			t.Fatal(err)
		}
		fresh = r
		return err == nil
	})
	stale() // an expired lease taken by another is left alone
	if _, err := b.Lease(ctx, "L", time.Minute); !errors.Is(err, state.ErrHeld) {
		t.Errorf("Lease after the expired holder's release: %v, want ErrHeld", err)
	}
	fresh()
}

func testLeaseRace(t *testing.T, b state.Backend) {
	ctx := t.Context()
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := b.Lease(ctx, "L", time.Minute)
			switch {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, state.ErrHeld):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Errorf("%d of 20 concurrent Leases won, want 1", n)
	}
}

// collector gathers the messages of one subscription (nil ones apart: a
// backend may send them whenever it may have lost messages).
type collector struct {
	mu   sync.Mutex
	msgs []string
}

func (c *collector) fn(msg []byte) {
	if msg == nil {
		return
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, string(msg))
	c.mu.Unlock()
}

func (c *collector) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

func (c *collector) await(t *testing.T, n int) []string {
	t.Helper()
	eventually(t, fmt.Sprintf("%d messages", n), func() bool { return len(c.get()) >= n })
	return c.get()
}

func publish(t *testing.T, b state.Backend, channel string, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if err := b.Publish(t.Context(), channel, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
}

func testPubSubOrder(t *testing.T, b state.Backend) {
	var c collector
	cancel := b.Subscribe("ch", c.fn)
	defer cancel()
	var want []string
	for i := range 200 {
		want = append(want, strconv.Itoa(i))
	}
	publish(t, b, "ch", want...)
	if diff := cmp.Diff(want, c.await(t, len(want))); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func testPubSubChannels(t *testing.T, b state.Backend) {
	var one, two, twoBis collector
	defer b.Subscribe("one", one.fn)()
	defer b.Subscribe("two", two.fn)()
	defer b.Subscribe("two", twoBis.fn)()
	publish(t, b, "one", "a", "b")
	publish(t, b, "three", "nobody")
	publish(t, b, "two", "c")
	if diff := cmp.Diff([]string{"c"}, two.await(t, 1)); diff != "" {
		t.Errorf("channel two (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c"}, twoBis.await(t, 1)); diff != "" {
		t.Errorf("channel two, second subscriber (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, one.await(t, 2)); diff != "" {
		t.Errorf("channel one (-want +got):\n%s", diff)
	}
}

func testPubSubCancel(t *testing.T, b state.Backend) {
	var gone, stays, sentinel collector
	cancelGone := b.Subscribe("ch", gone.fn)
	defer b.Subscribe("ch", stays.fn)()
	defer b.Subscribe("sentinel", sentinel.fn)()
	publish(t, b, "ch", "before")
	gone.await(t, 1)
	cancelGone()
	cancelGone() // harmless
	publish(t, b, "ch", "after")
	// Messages reach a backend's subscribers in the order published: once
	// the sentinel's has arrived, "after" has been delivered or dropped.
	publish(t, b, "sentinel", "end")
	sentinel.await(t, 1)
	if diff := cmp.Diff([]string{"before", "after"}, stays.await(t, 2)); diff != "" {
		t.Errorf("the remaining subscriber (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"before"}, gone.get()); diff != "" {
		t.Errorf("the cancelled subscriber (-want +got):\n%s", diff)
	}
}

func testPubSubCancelWaits(t *testing.T, b state.Backend) {
	entered := make(chan struct{})
	var finished atomic.Bool
	cancel := b.Subscribe("ch", func(msg []byte) {
		if string(msg) != "slow" {
			return
		}
		close(entered)
		time.Sleep(100 * time.Millisecond)
		finished.Store(true)
	})
	// Local calls fn on the publisher's goroutine.
	go func() {
		if err := b.Publish(context.Background(), "ch", []byte("slow")); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the message did not arrive")
	}
	cancel()
	if !finished.Load() {
		t.Error("cancel returned while fn was running")
	}
}

func testPushPop(t *testing.T, b state.Backend) {
	ctx := t.Context()
	for _, v := range []string{"a", "b", "c"} {
		mustPush(t, b, "q", v, time.Minute)
	}
	for _, want := range []string{"a", "b", "c"} {
		got, err := b.Pop(ctx, "q", time.Second)
		if err != nil || string(got) != want {
			t.Fatalf("Pop = %q, %v; want %q", got, err, want)
		}
	}
	const timeout = 100 * time.Millisecond
	start := time.Now()
	if _, err := b.Pop(ctx, "q", timeout); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Pop of an empty list: %v, want ErrNotFound", err)
	}
	if d := time.Since(start); d < timeout/2 || d > timeout+3*time.Second {
		t.Errorf("Pop of an empty list with a %v timeout took %v", timeout, d)
	}
	if _, err := b.Pop(ctx, "q", 0); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Pop without waiting of an empty list: %v, want ErrNotFound", err)
	}
	mustPush(t, b, "q", "now", time.Minute)
	if got, err := b.Pop(ctx, "q", 0); err != nil || string(got) != "now" {
		t.Errorf("Pop without waiting = %q, %v; want now", got, err)
	}

	mustPush(t, b, "deleted", "x", time.Minute)
	if err := b.Delete(ctx, "deleted"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Pop(ctx, "deleted", 0); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Pop after Delete: %v, want ErrNotFound", err)
	}
}

func testPopWaits(t *testing.T, b state.Backend) {
	type result struct {
		v   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := b.Pop(context.Background(), "q", 10*time.Second)
		done <- result{v, err}
	}()
	time.Sleep(50 * time.Millisecond)
	mustPush(t, b, "q", "late", time.Minute)
	select {
	case r := <-done:
		if r.err != nil || string(r.v) != "late" {
			t.Errorf("Pop = %q, %v; want late", r.v, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting Pop did not return the value pushed")
	}
}

func testPopContext(t *testing.T, b state.Backend) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := b.Pop(ctx, "q", 10*time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Pop with a cancelled context: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Pop noticed the cancelled context after %v", d)
	}

	ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := b.Pop(ctx, "q", 10*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Pop past its context's deadline: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Pop noticed its context's deadline after %v", d)
	}
}

func testListExpiry(t *testing.T, b state.Backend) {
	ctx := t.Context()
	mustPush(t, b, "short", "x", 100*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	if v, err := b.Pop(ctx, "short", 0); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Pop of an expired list = %q, %v; want ErrNotFound", v, err)
	}

	// Each push sets the list to expire ttl later.
	const ttl = 400 * time.Millisecond
	mustPush(t, b, "renewed", "x", ttl)
	time.Sleep(250 * time.Millisecond)
	mustPush(t, b, "renewed", "y", ttl)
	time.Sleep(250 * time.Millisecond)
	for _, want := range []string{"x", "y"} {
		if got, err := b.Pop(ctx, "renewed", 0); err != nil || string(got) != want {
			t.Errorf("Pop of a list renewed by a push = %q, %v; want %q", got, err, want)
		}
	}
}

// acquire calls Acquire, failing the test on an error.
func acquire(t *testing.T, l state.RateLimiter, key string) (func(), time.Duration, ratelimit.Reason) {
	t.Helper()
	release, after, reason, err := l.Acquire(t.Context(), key)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if release == nil {
		t.Fatal("Acquire returned a nil release")
	}
	return release, after, reason
}

func mustAdmit(t *testing.T, l state.RateLimiter, key, what string) func() {
	t.Helper()
	release, after, reason := acquire(t, l, key)
	if reason != 0 {
		t.Fatalf("%s: refused (%v, retry after %v), want admitted", what, reason, after)
	}
	return release
}

func mustRefuse(t *testing.T, l state.RateLimiter, key, what string, want ratelimit.Reason) time.Duration {
	t.Helper()
	release, after, reason := acquire(t, l, key)
	if reason != want {
		t.Fatalf("%s: reason %v, want %v", what, reason, want)
	}
	if after <= 0 {
		t.Errorf("%s: retryAfter %v, want > 0", what, after)
	}
	release() // a refused request's release does nothing
	return after
}

func testRateLimit(t *testing.T, b state.Backend) {
	l := b.RateLimiter("rate", ratelimit.Options{Rate: 2, Burst: 2})
	mustAdmit(t, l, "alice", "first of a burst of 2")
	mustAdmit(t, l, "alice", "second of a burst of 2")
	after := mustRefuse(t, l, "alice", "third of a burst of 2", ratelimit.RateExceeded)
	if after > 500*time.Millisecond {
		t.Errorf("retryAfter %v at 2/s, want at most 500ms", after)
	}
	mustAdmit(t, l, "bob", "another key")
	time.Sleep(after)
	mustAdmit(t, l, "alice", "after retryAfter")
	mustRefuse(t, l, "alice", "right after", ratelimit.RateExceeded)
}

func testRateLimitDefaultBurst(t *testing.T, b state.Backend) {
	l := b.RateLimiter("burst", ratelimit.Options{Rate: 2.5}) // burst ceil(2.5) = 3
	for i := range 3 {
		mustAdmit(t, l, "k", fmt.Sprintf("request %d of the default burst 3", i+1))
	}
	mustRefuse(t, l, "k", "request 4 of the default burst 3", ratelimit.RateExceeded)
}

func testConcurrency(t *testing.T, b state.Backend) {
	l := b.RateLimiter("conc", ratelimit.Options{MaxConcurrent: 2})
	r1 := mustAdmit(t, l, "k", "first in flight")
	r2 := mustAdmit(t, l, "k", "second in flight")
	if after := mustRefuse(t, l, "k", "third in flight", ratelimit.TooManyConcurrent); after != ratelimit.ConcurrencyRetryAfter {
		t.Errorf("retryAfter %v, want ConcurrencyRetryAfter", after)
	}
	other := mustAdmit(t, l, "other", "another key")
	defer other()
	r1()
	r1() // frees one slot all the same
	r3 := mustAdmit(t, l, "k", "after a release")
	mustRefuse(t, l, "k", "after a release called twice", ratelimit.TooManyConcurrent)
	r2()
	r3()
	mustAdmit(t, l, "k", "after every release")()
}

func testConcurrencyBeforeRate(t *testing.T, b state.Backend) {
	// A slow rate: the bucket does not refill during the test.
	l := b.RateLimiter("both", ratelimit.Options{Rate: 0.01, Burst: 2, MaxConcurrent: 1})
	r1 := mustAdmit(t, l, "k", "first")
	mustRefuse(t, l, "k", "second, while the first is in flight", ratelimit.TooManyConcurrent)
	r1()
	r2 := mustAdmit(t, l, "k", "third: the refusal for concurrency cost no token")
	r2()
	after := mustRefuse(t, l, "k", "fourth: the burst is spent", ratelimit.RateExceeded)
	if after < 50*time.Second || after > 100*time.Second {
		t.Errorf("retryAfter %v at 0.01/s, want about 100s", after)
	}
}

func testUnlimited(t *testing.T, b state.Backend) {
	l := b.RateLimiter("none", ratelimit.Options{})
	for range 50 {
		r := mustAdmit(t, l, "k", "unlimited")
		r()
		r()
	}
}

func testLimiterNames(t *testing.T, b state.Backend) {
	o := ratelimit.Options{Rate: 0.01, Burst: 1}
	a, c := b.RateLimiter("a", o), b.RateLimiter("c", o)
	mustAdmit(t, a, "k", "limiter a")
	mustAdmit(t, c, "k", "limiter c, same key")
	mustRefuse(t, a, "k", "limiter a again", ratelimit.RateExceeded)
}

func testPins(t *testing.T, b state.Backend) {
	ctx := t.Context()
	p := b.Pins()
	pin := func(fps map[string]string) map[string]string {
		t.Helper()
		got, err := p.Pin(ctx, fps)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := pin(map[string]string{}); len(got) != 0 {
		t.Errorf("Pin of nothing = %v", got)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "2"}, pin(map[string]string{"a": "1", "b": "2"})); diff != "" {
		t.Errorf("first Pin (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "c": "3"}, pin(map[string]string{"a": "9", "c": "3"})); diff != "" {
		t.Errorf("second Pin: a keeps its first fingerprint (-want +got):\n%s", diff)
	}
	if fp, err := p.Get(ctx, "b"); err != nil || fp != "2" {
		t.Errorf("Get(b) = %q, %v; want 2", fp, err)
	}
	if _, err := p.Get(ctx, "zz"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Get of an unpinned name: %v, want ErrNotFound", err)
	}
	if err := p.Approve(ctx, "a", "9"); err != nil {
		t.Fatal(err)
	}
	if fp, err := p.Get(ctx, "a"); err != nil || fp != "9" {
		t.Errorf("Get(a) after Approve = %q, %v; want 9", fp, err)
	}
	if diff := cmp.Diff(map[string]string{"a": "9"}, pin(map[string]string{"a": "10"})); diff != "" {
		t.Errorf("Pin after Approve (-want +got):\n%s", diff)
	}
}

// SampleRecord returns a token record with every field set, its refresh
// token refresh.
func SampleRecord(refresh string) *auth.Record {
	return &auth.Record{
		Server:        "github",
		Grant:         "authorization_code",
		Issuer:        "https://as.example",
		Scopes:        []string{"repo", "read:org"},
		Resource:      "https://mcp.example/mcp",
		ClientID:      "client-1",
		ClientSecret:  "client-secret-1",
		AuthStyle:     oauth2.AuthStyleInHeader,
		TokenURL:      "https://as.example/token",
		RevocationURL: "https://as.example/revoke",
		Token: &oauth2.Token{
			AccessToken:  "access-1",
			TokenType:    "Bearer",
			RefreshToken: refresh,
			Expiry:       time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC),
		},
		PluginState: []byte{0, 1, 2},
		DPoPKey:     "-----BEGIN EC PRIVATE KEY-----\n…\n-----END EC PRIVATE KEY-----\n",
		UpdatedAt:   time.Date(2029, 1, 2, 3, 4, 5, 6, time.UTC),
	}
}

// RecordOpts compares token records.
var RecordOpts = cmpopts.IgnoreUnexported(oauth2.Token{})

func testTokens(t *testing.T, b state.Backend) {
	s := b.Tokens()
	if _, err := s.Load("srv:1"); !errors.Is(err, auth.ErrNotFound) {
		t.Fatalf("Load of a missing record: %v, want auth.ErrNotFound", err)
	}
	want := SampleRecord("refresh-1")
	if err := s.Save("srv:1", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("srv:1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, RecordOpts); diff != "" {
		t.Errorf("Load after Save (-want +got):\n%s", diff)
	}

	// A loaded record is the caller's: changing it changes nothing stored.
	got.Token.AccessToken = "changed"
	got.Scopes[0] = "changed"
	again, err := s.Load("srv:1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SampleRecord("refresh-1"), again, RecordOpts); diff != "" {
		t.Errorf("Load after changing a loaded record (-want +got):\n%s", diff)
	}
	// Nor does changing the record saved.
	want.Token.RefreshToken = "changed"
	want.PluginState[0] = 9
	again, err = s.Load("srv:1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SampleRecord("refresh-1"), again, RecordOpts); diff != "" {
		t.Errorf("Load after changing the saved record (-want +got):\n%s", diff)
	}

	rotated := SampleRecord("refresh-2")
	if err := s.Save("srv:1", rotated); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load("srv:1"); err != nil || got.Token.RefreshToken != "refresh-2" {
		t.Errorf("Load after a second Save: %v, %v; want the rotated refresh token", got, err)
	}
	if err := s.Delete("srv:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("srv:1"); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("Load after Delete: %v, want auth.ErrNotFound", err)
	}
	if err := s.Delete("srv:1"); err != nil {
		t.Errorf("Delete of a missing record: %v", err)
	}
}

func testTokenLease(t *testing.T, b state.Backend) {
	l, ok := b.Tokens().(auth.Leaser)
	if !ok {
		if b.Shared() {
			t.Fatal("the token store of a shared backend is not an auth.Leaser")
		}
		t.Skip("the token store is not an auth.Leaser")
	}
	ctx := t.Context()
	release, err := l.Lease(ctx, "srv:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lease(ctx, "srv:1", time.Minute); !errors.Is(err, auth.ErrLeaseHeld) {
		t.Errorf("second Lease: %v, want auth.ErrLeaseHeld", err)
	}
	release()
	release2, err := l.Lease(ctx, "srv:1", time.Minute)
	if err != nil {
		t.Fatalf("Lease after release: %v", err)
	}
	release2()
}

// testConcurrent runs every kind of call from many goroutines at once (for
// the race detector), each on keys of its own.
func testConcurrent(t *testing.T, b state.Backend) {
	ctx := t.Context()
	lim := b.RateLimiter("conc", ratelimit.Options{Rate: 1000, MaxConcurrent: 100})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			var c collector
			ch := "ch" + strconv.Itoa(g)
			cancel := b.Subscribe(ch, c.fn)
			defer cancel()
			for i := range 20 {
				k := fmt.Sprintf("g%d-%d", g, i)
				v := []byte(k)
				if err := b.Put(ctx, k, v, time.Minute); err != nil {
					t.Error(err)
					return
				}
				if got, err := b.Get(ctx, k); err != nil || string(got) != k {
					t.Errorf("Get(%s) = %q, %v", k, got, err)
				}
				if err := b.Push(ctx, "q"+k, v, time.Minute); err != nil {
					t.Error(err)
				}
				if got, err := b.Pop(ctx, "q"+k, time.Second); err != nil || string(got) != k {
					t.Errorf("Pop(q%s) = %q, %v", k, got, err)
				}
				if release, err := b.Lease(ctx, k, time.Minute); err != nil {
					t.Error(err)
				} else {
					release()
				}
				if release, _, _, err := lim.Acquire(ctx, "p"+strconv.Itoa(g)); err != nil {
					t.Error(err)
				} else {
					release()
				}
				if err := b.Publish(ctx, ch, v); err != nil {
					t.Error(err)
				}
			}
			if !poll(func() bool { return len(c.get()) == 20 }) {
				t.Errorf("channel %s: %d messages of 20 after 5s", ch, len(c.get()))
			}
		})
	}
	wg.Wait()
}

func mustPut(t *testing.T, b state.Backend, key, value string, ttl time.Duration) {
	t.Helper()
	if err := b.Put(t.Context(), key, []byte(value), ttl); err != nil {
		t.Fatal(err)
	}
}

func mustGet(t *testing.T, b state.Backend, key, want string) {
	t.Helper()
	got, err := b.Get(t.Context(), key)
	if err != nil || string(got) != want {
		t.Errorf("Get(%s) = %q, %v; want %q", key, got, err, want)
	}
}

func mustPush(t *testing.T, b state.Backend, key, value string, ttl time.Duration) {
	t.Helper()
	if err := b.Push(t.Context(), key, []byte(value), ttl); err != nil {
		t.Fatal(err)
	}
}

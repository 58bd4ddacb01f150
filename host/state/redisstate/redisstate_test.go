package redisstate

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/state/statetest"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testredis"
)

// prefixes tells apart the key prefixes of the backends of one server.
var prefixes atomic.Int64

func newPrefix(base string) string {
	return fmt.Sprintf("%st%d:", base, prefixes.Add(1))
}

var testKeys = sealbox.Random()

func tokenBox() *sealbox.Box { return testKeys.Box("state tokens") }

func pinBox() *sealbox.Box { return testKeys.Box("state pins") }

// options returns the options of a backend of srv with a fresh prefix
// under base.
func options(t testing.TB, srv *testredis.Server, base string) Options {
	var buf syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("backend log:\n%s", buf.String())
		}
	})
	o := Options{
		URL:       srv.URL(),
		KeyPrefix: newPrefix(base),
		TokenBox:  tokenBox(),
		PinBox:    pinBox(),
		Logger:    hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Debug}),
	}
	if strings.HasPrefix(o.URL, "rediss:") {
		o.CAFile = srv.CAFile()
		o.CertFile, o.KeyFile = srv.ClientCertFile(), srv.ClientKeyFile()
	}
	return o
}

// open returns a backend of o, closed when t ends.
func open(t testing.TB, o Options) *Backend {
	t.Helper()
	b, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// rawClient returns a plain go-redis client of srv, to look at what the
// backend stored.
func rawClient(t testing.TB, srv *testredis.Server) *redis.Client {
	o, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	o.TLSConfig = srv.ClientTLSConfig()
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBackend holds the Redis backend to the behaviour every backend
// shares, with each way of reaching Redis.
func TestBackend(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		server testredis.Options
		base   string // the prefix the keys must start with
	}{
		{"Plain", testredis.Options{}, ""},
		{"Password", testredis.Options{Password: "pw-s3cret"}, ""},
		{"ACLUserWithKeyPrefix", testredis.Options{ACLUser: "gateway", ACLPassword: "gw-s3cret", ACLKeyPrefix: "app1:", DefaultUserOff: true}, "app1:"},
		{"MutualTLS", testredis.Options{TLS: true, ClientCerts: true, Password: "pw-s3cret"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := testredis.Start(t, tt.server)
			statetest.Run(t, func(t *testing.T) state.Backend { return open(t, options(t, srv, tt.base)) })
		})
	}
}

// TestTLSServerAuthOnly connects with the CA file only, and fails without
// it.
func TestTLSServerAuthOnly(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{TLS: true})
	o := options(t, srv, "")
	o.CertFile, o.KeyFile = "", ""
	open(t, o)

	o.CAFile = ""
	if b, err := New(context.Background(), o); err == nil {
		b.Close()
		t.Error("New trusted a server whose CA is not given")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("New without the CA: %v, want a certificate error", err)
	}
}

// TestTokensSealed checks that Redis holds token records sealed, bound to
// their key, and that other keys do not open them.
func TestTokensSealed(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	b := open(t, o)
	const refresh = "refresh-canary-7c1e"
	if err := b.Tokens().Save("github:abc", statetest.SampleRecord(refresh)); err != nil {
		t.Fatal(err)
	}
	raw := rawClient(t, srv)
	sealed, err := raw.Get(t.Context(), o.KeyPrefix+"tok:github:abc").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{refresh, "access-1", "client-secret-1", "EC PRIVATE KEY"} {
		if strings.Contains(string(sealed), secret) {
			t.Errorf("Redis holds %q in the clear", secret)
		}
	}

	// Under another key (AAD), the record does not open.
	if err := raw.Set(t.Context(), o.KeyPrefix+"tok:gitlab:abc", sealed, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Tokens().Load("gitlab:abc"); err == nil || errors.Is(err, auth.ErrNotFound) || !strings.Contains(err.Error(), "cannot be decrypted") {
		t.Errorf("Load of a record moved to another key: %v, want a decryption error", err)
	}

	// A backend with other keys does not open it, and says so.
	other := o
	other.TokenBox = sealbox.Random().Box("state tokens")
	b2 := open(t, other)
	_, err = b2.Tokens().Load("github:abc")
	if err == nil || errors.Is(err, auth.ErrNotFound) || !strings.Contains(err.Error(), "cannot be decrypted with the configured keys") || !strings.Contains(err.Error(), "log in again") {
		t.Errorf("Load with other keys: %v, want a decryption error", err)
	}
	if strings.Contains(fmt.Sprint(err), refresh) {
		t.Errorf("the error quotes the token: %v", err)
	}
	// The same keys in another backend open it.
	if r, err := open(t, o).Tokens().Load("github:abc"); err != nil || r.Token.RefreshToken != refresh {
		t.Errorf("Load with the same keys: %v, %v", r, err)
	}
}

// TestKeyPrefix checks that every key the backend makes starts with its
// prefix.
func TestKeyPrefix(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	o.KeyPrefix = "custom-prefix:"
	b := open(t, o)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.Put(ctx, "kv", []byte("v"), time.Minute))
	must(b.Push(ctx, "list", []byte("v"), time.Minute))
	_, err := b.Lease(ctx, "lease", time.Minute)
	must(err)
	must(b.Tokens().Save("srv:1", statetest.SampleRecord("r")))
	_, err = b.Pins().Pin(ctx, map[string]string{"a": "1"})
	must(err)
	_, _, _, err = b.RateLimiter("rl", ratelimit.Options{Rate: 1, MaxConcurrent: 1}).Acquire(ctx, "alice")
	must(err)

	keys, err := rawClient(t, srv).Keys(ctx, "*").Result()
	must(err)
	want := []string{"custom-prefix:kv:kv", "custom-prefix:lease:lease", "custom-prefix:list:list",
		"custom-prefix:pinset", "custom-prefix:rl:rl:alice", "custom-prefix:tok:srv:1"}
	if diff := cmp.Diff(want, sorted(keys)); diff != "" {
		t.Errorf("keys in Redis (-want +got):\n%s", diff)
	}

	// The default prefix.
	o.KeyPrefix = ""
	must(open(t, o).Put(ctx, "kv", []byte("v"), time.Minute))
	if n, err := rawClient(t, srv).Exists(ctx, "mcphost:kv:kv").Result(); err != nil || n != 1 {
		t.Errorf("EXISTS mcphost:kv:kv = %d, %v; want 1", n, err)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestTwoReplicas checks that two backends on one server share
// everything.
func TestTwoReplicas(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	b1, b2 := open(t, o), open(t, o)
	ctx := t.Context()

	if err := b1.Put(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, err := b2.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Errorf("replica 2 Get = %q, %v; want v", v, err)
	}
	release, err := b1.Lease(ctx, "L", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Lease(ctx, "L", time.Minute); !errors.Is(err, state.ErrHeld) {
		t.Errorf("replica 2 Lease: %v, want ErrHeld", err)
	}
	release()
	if r, err := b2.Lease(ctx, "L", time.Minute); err != nil {
		t.Errorf("replica 2 Lease after release: %v", err)
	} else {
		r()
	}

	got := make(chan string, 1)
	defer b2.Subscribe("ch", func(m []byte) {
		if m != nil {
			got <- string(m)
		}
	})()
	if err := b1.Publish(ctx, "ch", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "hello" {
			t.Errorf("replica 2 received %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Error("replica 2 received nothing")
	}

	if err := b1.Push(ctx, "q", []byte("job"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, err := b2.Pop(ctx, "q", time.Second); err != nil || string(v) != "job" {
		t.Errorf("replica 2 Pop = %q, %v; want job", v, err)
	}

	opts := ratelimit.Options{Rate: 0.01, Burst: 1, MaxConcurrent: 1}
	l1, l2 := b1.RateLimiter("api", opts), b2.RateLimiter("api", opts)
	r1, _, reason, err := l1.Acquire(ctx, "alice")
	if err != nil || reason != 0 {
		t.Fatalf("replica 1 Acquire: %v, %v", reason, err)
	}
	if _, _, reason, err := l2.Acquire(ctx, "alice"); err != nil || reason != ratelimit.TooManyConcurrent {
		t.Errorf("replica 2 Acquire while replica 1's is in flight: %v, %v; want TooManyConcurrent", reason, err)
	}
	r1()
	if _, _, reason, err := l2.Acquire(ctx, "alice"); err != nil || reason != ratelimit.RateExceeded {
		t.Errorf("replica 2 Acquire after replica 1 spent the burst: %v, %v; want RateExceeded", reason, err)
	}

	if _, err := b1.Pins().Pin(ctx, map[string]string{"t": "fp1"}); err != nil {
		t.Fatal(err)
	}
	if got, err := b2.Pins().Pin(ctx, map[string]string{"t": "fp2"}); err != nil || got["t"] != "fp1" {
		t.Errorf("replica 2 Pin = %v, %v; want replica 1's fingerprint", got, err)
	}

	if err := b1.Tokens().Save("srv:1", statetest.SampleRecord("r1")); err != nil {
		t.Fatal(err)
	}
	if r, err := b2.Tokens().Load("srv:1"); err != nil || r.Token.RefreshToken != "r1" {
		t.Errorf("replica 2 Load = %v, %v", r, err)
	}
	tr, err := b1.Tokens().(auth.Leaser).Lease(ctx, "srv:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer tr()
	if _, err := b2.Tokens().(auth.Leaser).Lease(ctx, "srv:1", time.Minute); !errors.Is(err, auth.ErrLeaseHeld) {
		t.Errorf("replica 2 token Lease: %v, want ErrLeaseHeld", err)
	}
}

// TestResubscribeAfterRestart checks that a subscriber is told (nil) that
// messages may have been lost when Redis comes back, and then receives
// again.
func TestResubscribeAfterRestart(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{Password: "pw"})
	b := open(t, options(t, srv, ""))
	var mu sync.Mutex
	var got []string
	defer b.Subscribe("ch", func(m []byte) {
		mu.Lock()
		defer mu.Unlock()
		if m == nil {
			got = append(got, "<nil>")
		} else {
			got = append(got, string(m))
		}
	})()
	snapshot := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	ctx := t.Context()
	if err := b.Publish(ctx, "ch", []byte("before")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first message", func() bool { return len(snapshot()) == 1 })

	srv.Restart(t)
	waitFor(t, "the nil message after the restart", func() bool { return len(snapshot()) == 2 })
	// Redis may need a moment before our pool dials again.
	waitFor(t, "a message after the restart", func() bool {
		if len(snapshot()) < 3 {
			_ = b.Publish(ctx, "ch", []byte("after"))
			time.Sleep(50 * time.Millisecond)
		}
		return len(snapshot()) >= 3
	})
	if diff := cmp.Diff([]string{"before", "<nil>", "after"}, snapshot()[:3]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 15s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerStopped checks that every call fails, in time, when Redis is
// gone, that the errors do not quote the password, and that the backend
// works again when Redis is back.
func TestServerStopped(t *testing.T) {
	t.Parallel()
	const password = "pw-canary-5d2f"
	srv := testredis.Start(t, testredis.Options{Password: password})
	o := options(t, srv, "")
	o.DialTimeout, o.Timeout = 500*time.Millisecond, 500*time.Millisecond
	b := open(t, o)
	var subscribed atomic.Int32
	defer b.Subscribe("ch", func([]byte) { subscribed.Add(1) })()
	lim := b.RateLimiter("rl", ratelimit.Options{Rate: 10})
	unlimited := b.RateLimiter("none", ratelimit.Options{})
	srv.Stop()

	ctx := t.Context()
	calls := []struct {
		name string
		call func() error
	}{
		{"Ping", func() error { return b.Ping(ctx) }},
		{"Get", func() error { _, err := b.Get(ctx, "k"); return err }},
		{"Put", func() error { return b.Put(ctx, "k", []byte("v"), time.Minute) }},
		{"PutNew", func() error { _, err := b.PutNew(ctx, "k", []byte("v"), time.Minute); return err }},
		{"Delete", func() error { return b.Delete(ctx, "k") }},
		{"Lease", func() error { _, err := b.Lease(ctx, "k", time.Minute); return err }},
		{"Push", func() error { return b.Push(ctx, "q", []byte("v"), time.Minute) }},
		{"Pop", func() error { _, err := b.Pop(ctx, "q", 5*time.Second); return err }},
		{"Publish", func() error { return b.Publish(ctx, "ch", []byte("m")) }},
		{"Acquire", func() error { _, _, _, err := lim.Acquire(ctx, "k"); return err }},
		{"Pin", func() error { _, err := b.Pins().Pin(ctx, map[string]string{"a": "1"}); return err }},
		{"Load", func() error { _, err := b.Tokens().Load("srv:1"); return err }},
		{"Save", func() error { return b.Tokens().Save("srv:1", statetest.SampleRecord("r")) }},
	}
	for _, c := range calls {
		start := time.Now()
		err := c.call()
		d := time.Since(start)
		if err == nil || errors.Is(err, state.ErrNotFound) {
			t.Errorf("%s with Redis stopped: %v, want an error", c.name, err)
		}
		if d > 3*time.Second {
			t.Errorf("%s with Redis stopped took %v", c.name, d)
		}
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("%s: the error quotes the password: %v", c.name, err)
		}
	}
	if _, _, reason, err := unlimited.Acquire(ctx, "k"); err != nil || reason != 0 {
		t.Errorf("an unlimited limiter asked Redis: %v, %v", reason, err)
	}

	srv.Restart(t)
	waitFor(t, "Ping after the restart", func() bool { return b.Ping(ctx) == nil })
	if err := b.Put(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Errorf("Put after the restart: %v", err)
	}
}

// TestNewErrors checks what New refuses, and that its errors never quote
// the password.
func TestNewErrors(t *testing.T) {
	t.Parallel()
	const password = "pw-canary-91ab"
	srv := testredis.Start(t, testredis.Options{Password: password})
	stopped := testredis.Start(t, testredis.Options{})
	stopped.Stop()
	wrong := &url.URL{Scheme: "redis", User: url.UserPassword("", password+"-wrong"), Host: srv.Addr()}
	gone := &url.URL{Scheme: "redis", User: url.UserPassword("", password), Host: stopped.Addr()}
	box, pins := tokenBox(), pinBox()
	for _, tt := range []struct {
		name string
		o    Options
		want string // in the error
	}{
		{"NoURL", Options{TokenBox: box, PinBox: pins}, "no URL"},
		{"NoTokenBox", Options{URL: srv.URL()}, "no key to seal tokens"},
		{"NoPinBox", Options{URL: srv.URL(), TokenBox: box}, "no key to seal tool pins"},
		{"WrongPassword", Options{URL: wrong.String(), TokenBox: box, PinBox: pins}, "WRONGPASS"},
		{"Unreachable", Options{URL: gone.String(), TokenBox: box, PinBox: pins, DialTimeout: time.Second}, "connecting to"},
		{"BadPort", Options{URL: "redis://:" + password + "@127.0.0.1:port/", TokenBox: box, PinBox: pins}, "URL"},
		{"BadScheme", Options{URL: "http://:" + password + "@127.0.0.1:1/", TokenBox: box, PinBox: pins}, "scheme"},
		{"BadDB", Options{URL: "redis://:" + password + "@127.0.0.1:1/" + password, TokenBox: box, PinBox: pins}, "database"},
		{"UnknownOption", Options{URL: "redis://:" + password + "@127.0.0.1:1/?" + password + "=1", TokenBox: box, PinBox: pins}, "option"},
		{"CAWithoutTLS", Options{URL: srv.URL(), TokenBox: box, PinBox: pins, CAFile: "/nonexistent"}, "not rediss://"},
		{"SkipVerify", Options{URL: "rediss://127.0.0.1:1/?skip_verify=true", TokenBox: box, PinBox: pins}, "skip_verify"},
		{"CertWithoutKey", Options{URL: "rediss://127.0.0.1:1/", TokenBox: box, PinBox: pins, CertFile: "/c.pem"}, "key file"},
		{"MissingCA", Options{URL: "rediss://127.0.0.1:1/", TokenBox: box, PinBox: pins, CAFile: "/nonexistent/ca.pem"}, "CA file"},
		{"NegativeTimeout", Options{URL: srv.URL(), TokenBox: box, PinBox: pins, Timeout: -1}, "negative"},
		{"NegativePopPoolSize", Options{URL: srv.URL(), TokenBox: box, PinBox: pins, PopPoolSize: -1}, "negative pool size"},
		{"NoReadTimeout", Options{URL: srv.URL() + "?read_timeout=-1", TokenBox: box, PinBox: pins}, "disables a timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := New(context.Background(), tt.o)
			if err == nil {
				b.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
}

// TestInFlightExpiry checks that a request whose release never comes
// stops counting after InFlightExpiry.
func TestInFlightExpiry(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	o.InFlightExpiry = 200 * time.Millisecond
	l := open(t, o).RateLimiter("rl", ratelimit.Options{MaxConcurrent: 1})
	ctx := t.Context()
	if _, _, reason, err := l.Acquire(ctx, "k"); err != nil || reason != 0 {
		t.Fatalf("Acquire: %v, %v", reason, err)
	}
	if _, _, reason, err := l.Acquire(ctx, "k"); err != nil || reason != ratelimit.TooManyConcurrent {
		t.Fatalf("second Acquire: %v, %v; want TooManyConcurrent", reason, err)
	}
	waitFor(t, "the unreleased request expires", func() bool {
		_, _, reason, err := l.Acquire(ctx, "k")
		return err == nil && reason == 0
	})
}

// TestRateLimitKeyExpires checks that a limiter's key goes once idle.
func TestRateLimitKeyExpires(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	l := open(t, o).RateLimiter("rl", ratelimit.Options{Rate: 20, Burst: 1, MaxConcurrent: 5})
	ctx := t.Context()
	release, _, reason, err := l.Acquire(ctx, "k")
	if err != nil || reason != 0 {
		t.Fatalf("Acquire: %v, %v", reason, err)
	}
	raw := rawClient(t, srv)
	key := o.KeyPrefix + "rl:rl:k"
	if ttl, err := raw.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > DefaultInFlightExpiry+time.Second {
		t.Errorf("PTTL with a request in flight = %v, %v; want up to the in-flight expiry", ttl, err)
	}
	release()
	// With no request in flight, the key expires with its token: 50ms at
	// 20/s.
	waitFor(t, "the idle key expires", func() bool {
		n, err := raw.Exists(ctx, key).Result()
		return err == nil && n == 0
	})
}

// TestServerPaused checks that calls fail in time, rather than hang, when
// Redis does not answer, and that the Pub/Sub connection, found dead by its
// PINGs, is made again, with a nil message, when Redis answers again.
func TestServerPaused(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	o.DialTimeout, o.Timeout = 300*time.Millisecond, 300*time.Millisecond
	b := open(t, o)
	b.ps.pingEvery = 100 * time.Millisecond
	var mu sync.Mutex
	var got []string
	defer b.Subscribe("ch", func(m []byte) {
		mu.Lock()
		defer mu.Unlock()
		if m == nil {
			got = append(got, "<nil>")
		} else {
			got = append(got, string(m))
		}
	})()
	snapshot := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	lim := b.RateLimiter("rl", ratelimit.Options{Rate: 10})
	srv.Pause()
	defer srv.Resume()

	ctx := t.Context()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Ping", func() error { return b.Ping(ctx) }},
		{"Get", func() error { _, err := b.Get(ctx, "k"); return err }},
		{"Lease", func() error { _, err := b.Lease(ctx, "k", time.Minute); return err }},
		{"Pop", func() error { _, err := b.Pop(ctx, "q", 5*time.Second); return err }},
		{"Acquire", func() error { _, _, _, err := lim.Acquire(ctx, "k"); return err }},
		{"Load", func() error { _, err := b.Tokens().Load("srv:1"); return err }},
	} {
		start := time.Now()
		err := c.call()
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s with Redis paused took %v", c.name, d)
		}
		if err == nil || errors.Is(err, state.ErrNotFound) {
			t.Errorf("%s with Redis paused: %v, want an error", c.name, err)
		}
	}
	// A caller's deadline is honoured too.
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := b.Get(dctx, "k"); err == nil {
		t.Error("Get with Redis paused succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Get with a 100ms deadline took %v", d)
	}

	time.Sleep(300 * time.Millisecond) // PINGs go unanswered
	srv.Resume()
	waitFor(t, "the nil message once Redis answers", func() bool { return slicesContain(snapshot(), "<nil>") })
	waitFor(t, "a message after the pause", func() bool {
		if !slicesContain(snapshot(), "after") {
			_ = b.Publish(ctx, "ch", []byte("after"))
			time.Sleep(50 * time.Millisecond)
		}
		return slicesContain(snapshot(), "after")
	})
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestCloseStopsGoroutine checks that Close ends the Pub/Sub goroutine and
// that cancelling after Close is harmless.
func TestCloseStopsGoroutine(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	b := open(t, options(t, srv, ""))
	cancel := b.Subscribe("ch", func([]byte) {})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.ps.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the Pub/Sub goroutine still runs after Close")
	}
	cancel()
	b.Close() // again: harmless
	b.Subscribe("ch", func([]byte) {})()
}

// TestPopsDoNotStarveOtherCalls checks that Pops waiting, more of them
// than the connections of the pool of every other call (the URL's
// pool_size), take none of those: a Get, a Put and a Lease still complete
// promptly while they wait.
func TestPopsDoNotStarveOtherCalls(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	o := options(t, srv, "")
	o.URL += "?pool_size=2"
	b := open(t, o)
	b.popSlice = time.Second // (each BLPOP holds its connection this long)
	ctx := t.Context()
	const waiters = 12
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.Pop(ctx, fmt.Sprintf("empty-%d", i), 3*time.Second)
			if !errors.Is(err, state.ErrNotFound) {
				errs <- fmt.Errorf("Pop %d: %v, want ErrNotFound", i, err)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // every Pop is in its BLPOP
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Put", func() error { return b.Put(ctx, "k", []byte("v"), time.Minute) }},
		{"Get", func() error { _, err := b.Get(ctx, "k"); return err }},
		{"Lease", func() error {
			release, err := b.Lease(ctx, "l", time.Minute)
			if err == nil {
				release()
			}
			return err
		}},
		{"Get", func() error { _, err := b.Get(ctx, "k"); return err }},
	} {
		start := time.Now()
		err := c.call()
		if d := time.Since(start); err != nil || d > 300*time.Millisecond {
			t.Errorf("%s with %d Pops waiting: %v after %v, want success at once", c.name, waiters, err, d)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPinsTampered: what someone with access to Redis can do to the tool
// pins, and what each replica then vouches for. b1 is a replica that has
// pinned t=v1; each case tampers with Redis, then checks what b1 (which
// remembers) and a fresh replica (which does not) record for t, now v2,
// and for a new tool n.
func TestPinsTampered(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	raw := rawClient(t, srv)
	missing := "missing"
	for _, tt := range []struct {
		name   string
		tamper func(ctx context.Context, b1 *Backend, key string, before string)
		// What b1 and a fresh replica record for t (v2 asked) and n
		// ("missing": refused with ErrPinMissing).
		b1T, b1N, freshT, freshN string
	}{
		{"untouched", func(context.Context, *Backend, string, string) {}, "v1", "n1", "v1", "n1"},
		{"deleted", func(ctx context.Context, _ *Backend, key, _ string) { raw.Del(ctx, key) },
			"v1", missing, "v2", "n1"},
		{"overwritten", func(ctx context.Context, _ *Backend, key, _ string) { raw.Set(ctx, key, "forged", 0) },
			"v1", missing, missing, missing},
		{"copied from another prefix's", func(ctx context.Context, b1 *Backend, key, _ string) {
			other := open(t, options(t, srv, ""))
			other.Pins().Pin(ctx, map[string]string{"t": "v2"})
			raw.Set(ctx, key, raw.Get(ctx, other.Pins().(pins).key()).Val(), 0)
		}, "v1", missing, missing, missing},
		{"an older copy put back", func(ctx context.Context, b1 *Backend, key, before string) {
			if err := b1.Pins().Approve(ctx, "t", "v0"); err != nil {
				t.Fatal(err)
			}
			raw.Set(ctx, key, before, 0) // t=v1 again
		}, "v0", missing, "v1", "n1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			o := options(t, srv, "")
			b1 := open(t, o)
			key := b1.Pins().(pins).key()
			if _, err := b1.Pins().Pin(ctx, map[string]string{"t": "v1"}); err != nil {
				t.Fatal(err)
			}
			before := raw.Get(ctx, key).Val()
			tt.tamper(ctx, b1, key, before)
			fresh := open(t, o)
			for _, r := range []struct {
				who  string
				b    *Backend
				t, n string
			}{{"b1", b1, tt.b1T, tt.b1N}, {"fresh", fresh, tt.freshT, tt.freshN}} {
				for _, q := range []struct{ name, fp, want string }{{"t", "v2", r.t}, {"n", "n1", r.n}} {
					got, err := r.b.Pins().Pin(ctx, map[string]string{q.name: q.fp})
					switch {
					case q.want == missing:
						var me *state.MissingPinsError
						if !errors.As(err, &me) || !errors.Is(err, state.ErrPinMissing) || !slices.Equal(me.Names, []string{q.name}) {
							t.Errorf("%s: Pin(%s) = %v, %v; want ErrPinMissing", r.who, q.name, got, err)
						}
					case err != nil || got[q.name] != q.want:
						t.Errorf("%s: Pin(%s) = %v, %v; want %s", r.who, q.name, got, err, q.want)
					}
				}
			}
			// An approval (here by a process that remembers nothing, as the
			// CLI) makes a newer set that every replica trusts again.
			cli := open(t, o)
			if err := cli.Pins().Approve(ctx, "t", "v2"); err != nil {
				t.Fatal(err)
			}
			for _, b := range []*Backend{b1, fresh} {
				got, err := b.Pins().Pin(ctx, map[string]string{"t": "v2", "n2": "x"})
				if err != nil || got["t"] != "v2" || got["n2"] != "x" {
					t.Errorf("after the approval: Pin = %v, %v; want t=v2, n2 pinned", got, err)
				}
			}
		})
	}
}

// TestPinsSealed: the set in Redis is sealed (no fingerprint in the clear),
// sealed again with a rotated key's successor, and read from the former
// unsealed hash once.
func TestPinsSealed(t *testing.T) {
	t.Parallel()
	srv := testredis.Start(t, testredis.Options{})
	raw := rawClient(t, srv)
	ctx := t.Context()

	t.Run("sealed", func(t *testing.T) {
		b := open(t, options(t, srv, ""))
		if _, err := b.Pins().Pin(ctx, map[string]string{"mcp__s__t": "fp-canary-77"}); err != nil {
			t.Fatal(err)
		}
		if v := raw.Get(ctx, b.Pins().(pins).key()).Val(); v == "" || strings.Contains(v, "fp-canary-77") || strings.Contains(v, "mcp__s__t") {
			t.Errorf("the pins in Redis: %q; want them sealed", v)
		}
	})

	t.Run("key rotation", func(t *testing.T) {
		newKeys, err := sealbox.Parse(keyText(t, 2))
		if err != nil {
			t.Fatal(err)
		}
		both, err := sealbox.Parse(keyText(t, 2) + "," + keyText(t, 1))
		if err != nil {
			t.Fatal(err)
		}
		o := options(t, srv, "")
		o.PinBox = mustKeys(t, keyText(t, 1)).Box("pins")
		if _, err := open(t, o).Pins().Pin(ctx, map[string]string{"t": "v1"}); err != nil {
			t.Fatal(err)
		}
		// The new key first, the old one still there: a replica pins once.
		o.PinBox = both.Box("pins")
		if got, err := open(t, o).Pins().Pin(ctx, map[string]string{"t": "v2"}); err != nil || got["t"] != "v1" {
			t.Fatalf("with both keys: %v, %v", got, err)
		}
		// The old key dropped: the pins still open.
		o.PinBox = newKeys.Box("pins")
		if got, err := open(t, o).Pins().Pin(ctx, map[string]string{"t": "v2"}); err != nil || got["t"] != "v1" {
			t.Errorf("after the old key was dropped: %v, %v; want t=v1", got, err)
		}
	})

	t.Run("the former hash", func(t *testing.T) {
		o := options(t, srv, "")
		b := open(t, o)
		raw.HSet(ctx, b.Pins().(pins).legacyKey(), "t", "v0")
		if got, err := b.Pins().Pin(ctx, map[string]string{"t": "v9", "u": "u1"}); err != nil || got["t"] != "v0" || got["u"] != "u1" {
			t.Fatalf("Pin = %v, %v; want t from the former hash", got, err)
		}
		// Read once, and deleted with the first sealed set.
		if n := raw.Exists(ctx, b.Pins().(pins).legacyKey()).Val(); n != 0 {
			t.Errorf("the former hash is still there after the sealed set was written")
		}
		// A later change of the hash is ignored.
		raw.HSet(ctx, b.Pins().(pins).legacyKey(), "t", "forged")
		if got, err := open(t, o).Pins().Pin(ctx, map[string]string{"t": "forged"}); err != nil || got["t"] != "v0" {
			t.Errorf("Pin = %v, %v; want the sealed t=v0", got, err)
		}
		// The set deleted and a hash of the former format written: a
		// replica that has seen a sealed set adopts none of it.
		raw.Del(ctx, b.Pins().(pins).key())
		raw.HSet(ctx, b.Pins().(pins).legacyKey(), "t", "forged", "n", "forged")
		got, err := b.Pins().Pin(ctx, map[string]string{"t": "forged", "n": "forged"})
		if me, ok := errors.AsType[*state.MissingPinsError](err); !ok || !slices.Equal(me.Names, []string{"n"}) || got["t"] != "v0" {
			t.Errorf("Pin after the set was deleted and the former hash written = %v, %v; want t=v0 remembered, n refused", got, err)
		}
	})

	t.Run("the former hash, an approval first", func(t *testing.T) {
		o := options(t, srv, "")
		b := open(t, o)
		raw.HSet(ctx, b.Pins().(pins).legacyKey(), "t", "v0")
		if err := b.Pins().Approve(ctx, "u", "u1"); err != nil {
			t.Fatal(err)
		}
		if got, err := open(t, o).Pins().Pin(ctx, map[string]string{"t": "v9", "u": "u9"}); err != nil || got["t"] != "v0" || got["u"] != "u1" {
			t.Errorf("Pin = %v, %v; want t from the former hash, u approved", got, err)
		}
	})
}

// keyText returns a key in MCPHOST_SESSION_KEYS's form, the same for the
// same n.
func keyText(t *testing.T, n byte) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{n}, sealbox.KeySize))
}

func mustKeys(t *testing.T, s string) *sealbox.Keys {
	t.Helper()
	k, err := sealbox.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

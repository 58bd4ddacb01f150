package ratelimit

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
)

// acquire calls l.Acquire and fails t unless the outcome is want.
func acquire(t *testing.T, l *Limiter, key string, want bool) (func(), time.Duration, Reason) {
	t.Helper()
	release, retryAfter, reason, ok := l.Acquire(key)
	if ok != want {
		t.Fatalf("Acquire(%q) = ok %v (%v, retry after %v), want %v", key, ok, reason, retryAfter, want)
	}
	if ok && (retryAfter != 0 || reason != 0) || !ok && (retryAfter <= 0 || reason == 0) {
		t.Fatalf("Acquire(%q) = ok %v with reason %v and retry after %v", key, ok, reason, retryAfter)
	}
	return release, retryAfter, reason
}

// TestRate: a burst is admitted, the next request refused until the bucket
// holds a token again, 1/Rate later.
func TestRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(Options{Rate: 20, Burst: 40})
		for range 40 {
			release, _, _ := acquire(t, l, "alice", true)
			release()
		}
		_, retryAfter, reason := acquire(t, l, "alice", false)
		if reason != RateExceeded {
			t.Errorf("reason %v, want %v", reason, RateExceeded)
		}
		if want := time.Second / 20; retryAfter < want || retryAfter > want+time.Microsecond {
			t.Errorf("retry after %v, want %v", retryAfter, want)
		}
		if got := RetryAfterSeconds(retryAfter); got != 1 {
			t.Errorf("Retry-After: %d, want 1", got)
		}
		time.Sleep(retryAfter - time.Millisecond)
		acquire(t, l, "alice", false)
		time.Sleep(time.Millisecond)
		acquire(t, l, "alice", true)
		acquire(t, l, "alice", false)
		// After a quiet spell, the whole burst again, and no more.
		time.Sleep(time.Hour)
		for range 40 {
			acquire(t, l, "alice", true)
		}
		acquire(t, l, "alice", false)
	})
}

// TestRateSlow: a rate under one per second has a burst of 1 by default,
// and a retryAfter of whole minutes.
func TestRateSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := ParseRate("2/m")
		if err != nil {
			t.Fatal(err)
		}
		l := New(Options{Rate: r})
		acquire(t, l, "k", true)
		_, retryAfter, _ := acquire(t, l, "k", false)
		if retryAfter < 30*time.Second || retryAfter > 30*time.Second+time.Microsecond {
			t.Errorf("retry after %v, want 30s", retryAfter)
		}
		time.Sleep(retryAfter)
		acquire(t, l, "k", true)
	})
}

// TestConcurrency: the 17th concurrent request is refused, and admitted
// once one ends; a double release frees one slot.
func TestConcurrency(t *testing.T) {
	l := New(Options{MaxConcurrent: 16})
	var releases []func()
	for range 16 {
		release, _, _ := acquire(t, l, "alice", true)
		releases = append(releases, release)
	}
	_, retryAfter, reason := acquire(t, l, "alice", false)
	if reason != TooManyConcurrent || retryAfter != ConcurrencyRetryAfter {
		t.Errorf("refused for %v, retry after %v; want %v, %v", reason, retryAfter, TooManyConcurrent, ConcurrencyRetryAfter)
	}
	releases[0]()
	releases[0]() // idempotent
	acquire(t, l, "alice", true)
	acquire(t, l, "alice", false)
	acquire(t, l, "bob", true)
}

// TestConcurrencyBeforeRate: a request refused for concurrency costs no
// rate token.
func TestConcurrencyBeforeRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(Options{Rate: 1, Burst: 2, MaxConcurrent: 1})
		release, _, _ := acquire(t, l, "k", true)
		for range 5 {
			if _, _, reason := acquire(t, l, "k", false); reason != TooManyConcurrent {
				t.Fatalf("reason %v", reason)
			}
		}
		release()
		acquire(t, l, "k", true) // the second token of the burst
	})
}

// TestConcurrentUse: under -race, many goroutines acquiring and releasing
// (twice) over more keys than the table holds never put more than
// MaxConcurrent requests in flight on an entry, and leave none counted.
func TestConcurrentUse(t *testing.T) {
	l := New(Options{Rate: rate.Inf, MaxConcurrent: 4, MaxKeys: 2})
	check := func(want func(n int) bool) {
		t.Helper()
		l.mu.Lock()
		defer l.mu.Unlock()
		for k, e := range l.keys {
			if !want(e.inFlight) {
				t.Errorf("%s: %d requests in flight", k, e.inFlight)
			}
		}
		if l.overflow != nil && !want(l.overflow.inFlight) {
			t.Errorf("overflow: %d requests in flight", l.overflow.inFlight)
		}
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 300 {
				release, _, _, ok := l.Acquire(fmt.Sprint((g + i) % 3))
				if !ok {
					continue
				}
				check(func(n int) bool { return n >= 0 && n <= 4 })
				release()
				release()
			}
		})
	}
	wg.Wait()
	check(func(n int) bool { return n == 0 })
}

// TestKeysIndependent: one key's exhaustion does not touch another.
func TestKeysIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(Options{Rate: 1, Burst: 1, MaxConcurrent: 1})
		acquire(t, l, "alice", true)
		acquire(t, l, "alice", false)
		release, _, _ := acquire(t, l, "bob", true)
		acquire(t, l, "bob", false)
		release()
		acquire(t, l, "carol", true)
	})
}

// TestEviction: the table never holds more than MaxKeys; only idle entries
// (nothing in flight, bucket full) are dropped; while none is, new keys
// share one overflow entry.
func TestEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(Options{Rate: 1, Burst: 1, MaxConcurrent: 1, MaxKeys: 3})
		tracked := func() int {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(l.keys)
		}
		held, _, _ := acquire(t, l, "a", true) // in flight throughout
		for _, k := range []string{"b", "c"} {
			release, _, _ := acquire(t, l, k, true)
			release()
		}
		// Full, and no bucket full: "d" and "e" share the overflow entry.
		release, _, _ := acquire(t, l, "d", true)
		if _, _, reason := acquire(t, l, "e", false); reason != TooManyConcurrent {
			t.Errorf("e: %v, want the overflow entry's concurrency limit", reason)
		}
		release()
		if _, _, reason := acquire(t, l, "e", false); reason != RateExceeded {
			t.Errorf("e: %v, want the overflow entry's rate limit", reason)
		}
		if n := tracked(); n != 3 {
			t.Fatalf("%d keys tracked, want 3", n)
		}
		// A second later b and c are idle, a is not: a sweep drops b and c.
		time.Sleep(time.Second)
		acquire(t, l, "f", true)
		acquire(t, l, "a", false) // a's in-flight request still counts
		held()
		l.mu.Lock()
		_, aKept := l.keys["a"]
		_, bKept := l.keys["b"]
		l.mu.Unlock()
		if !aKept || bKept {
			t.Errorf("a kept %v, b kept %v: want only the busy entry kept", aKept, bKept)
		}
		// Many keys over time: the bound holds.
		for i := range 1000 {
			if release, _, _, ok := l.Acquire(fmt.Sprint("k", i)); ok {
				release()
			}
			if n := tracked(); n > 3 {
				t.Fatalf("%d keys tracked, over the bound", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// TestUnlimited: the zero Options admit everything and track nothing.
func TestUnlimited(t *testing.T) {
	for _, o := range []Options{{}, {Rate: rate.Inf, Burst: 5}} {
		l := New(o)
		for range 1000 {
			release, _, _ := acquire(t, l, "k", true)
			_ = release // never released: no limit on concurrency
		}
		if len(l.keys) != 0 {
			t.Errorf("%+v: %d keys tracked", o, len(l.keys))
		}
	}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		o    Options
		want Options
	}{
		{Options{Rate: 20}, Options{Rate: 20, Burst: 20, MaxKeys: DefaultMaxKeys}},
		{Options{Rate: 2.5}, Options{Rate: 2.5, Burst: 3, MaxKeys: DefaultMaxKeys}},
		{Options{Rate: 0.01, MaxKeys: 5}, Options{Rate: 0.01, Burst: 1, MaxKeys: 5}},
		{Options{Rate: 1e300}, Options{Rate: 1e300, Burst: math.MaxInt32, MaxKeys: DefaultMaxKeys}},
		{Options{Burst: 7, MaxConcurrent: 3}, Options{MaxConcurrent: 3, MaxKeys: DefaultMaxKeys}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, New(tc.o).o); diff != "" {
			t.Errorf("New(%+v) (-want +got):\n%s", tc.o, diff)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Options)
		want string // "" for valid
	}{
		{"valid", func(*Options) {}, ""},
		{"negative rate", func(o *Options) { o.Rate = -1 }, "rate"},
		{"NaN rate", func(o *Options) { o.Rate = rate.Limit(math.NaN()) }, "rate"},
		{"negative burst", func(o *Options) { o.Burst = -1 }, "burst"},
		{"negative max_concurrent", func(o *Options) { o.MaxConcurrent = -1 }, "max_concurrent"},
		{"negative key bound", func(o *Options) { o.MaxKeys = -1 }, "key bound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Rate: 20, Burst: 40, MaxConcurrent: 16}
			tc.mod(&o)
			err := o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one about %q", err, tc.want)
			}
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			New(o)
		})
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want rate.Limit // 0: an error
	}{
		{"20/s", 20},
		{"100/m", rate.Limit(100.0 / 60)},
		{"5000/h", rate.Limit(5000.0 / 3600)},
		{"2.5/s", 2.5},
		{"007/s", 7},
		{"0/s", 0},
		{"0.0/s", 0},
		{"-1/s", 0},
		{"+1/s", 0},
		{"1e3/s", 0},
		{"0x10/s", 0},
		{".5/s", 0},
		{"5./s", 0},
		{"Inf/s", 0},
		{"NaN/s", 0},
		{"1_000/s", 0},
		{strings.Repeat("9", 400) + "/s", 0},
		{"20", 0},
		{"20/", 0},
		{"20/d", 0},
		{"20/sec", 0},
		{"20/S", 0},
		{" 20/s", 0},
		{"20/s/s", 0},
		{"", 0},
	}
	for _, tc := range tests {
		got, err := ParseRate(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("ParseRate(%.20q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	_, err := ParseRate("20 per second")
	if want := `rate "20 per second": want N/s, N/m or N/h with N a positive number, such as "20/s", "100/m", "5000/h" or "2.5/s"`; err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant\n%s", err, want)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		1: 1, time.Millisecond: 1, time.Second: 1, time.Second + 1: 2, 30 * time.Second: 30, time.Hour: 3600,
	} {
		if got := RetryAfterSeconds(d); got != want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestReasonString(t *testing.T) {
	for r, want := range map[Reason]string{RateExceeded: "rate limit exceeded", TooManyConcurrent: "too many concurrent requests", 9: "Reason(9)"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}

func BenchmarkAcquire(b *testing.B) {
	b.Run("single key", func(b *testing.B) {
		l := New(Options{Rate: 1e9, Burst: 1 << 30, MaxConcurrent: 1 << 20})
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				release, _, _, _ := l.Acquire("alice")
				release()
			}
		})
	})
	b.Run("parallel keys", func(b *testing.B) {
		l := New(Options{Rate: 1e9, Burst: 1 << 30, MaxConcurrent: 1 << 20})
		keys := make([]string, 1000)
		for i := range keys {
			keys[i] = fmt.Sprint("principal-", i)
		}
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				release, _, _, _ := l.Acquire(keys[i%len(keys)])
				release()
				i++
			}
		})
	})
	b.Run("refused", func(b *testing.B) {
		l := New(Options{Rate: 1, Burst: 1})
		l.Acquire("alice")
		for b.Loop() {
			l.Acquire("alice")
		}
	})
}

// Package ratelimit limits the requests of each principal at the gateway,
// the `gateway { rate_limit { … } }` block:
//
//	gateway {
//	  rate_limit {
//	    per_principal  = "20/s"  # sustained rate: N/s, N/m or N/h
//	    burst          = 40      # requests admitted at once after a quiet spell
//	    max_concurrent = 16      # requests in flight at a time
//	  }
//	}
//
// Each key (a principal's ID) has a token bucket of x/time/rate (Rate,
// Burst) and a count of its requests in flight (MaxConcurrent). Acquire
// admits a request or says why not and when to retry, for a 429 with a
// Retry-After header (RetryAfterSeconds).
//
// # Bounded memory
//
// A Limiter tracks at most MaxKeys keys, without a goroutine: when a new key
// arrives and the table is full, the idle entries — no request in flight and
// a full bucket — are dropped, all at once. Dropping such an entry loses
// nothing (a new entry starts the same way), so eviction never lets a
// principal past its limits, and an entry with a request in flight is never
// dropped (its release must find its count).
//
// If no entry is idle, the table is full of principals active within the
// last Burst/Rate: then new keys share one overflow entry, with the same
// limits as one key, until a sweep (at most one per second) frees room.
// Neither alternative is better: refusing new keys would lock every new
// principal out, and admitting them with a fresh bucket per request would
// exempt them from any limit. Sharing one entry keeps the gateway's load
// bounded and new principals served, slowly. (A key that moves from the
// overflow entry to its own while requests of it are in flight on the
// overflow entry may briefly have more than MaxConcurrent in flight: those
// count against the overflow entry.)
package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Defaults and constants.
const (
	// DefaultMaxKeys is the default of Options.MaxKeys.
	DefaultMaxKeys = 10000
	// ConcurrencyRetryAfter is the retryAfter of a TooManyConcurrent
	// refusal: when a request in flight ends is not known.
	ConcurrencyRetryAfter = time.Second
	// minSweepInterval is the shortest time between two sweeps of a full
	// table that free nothing, so that a full table of busy keys does not
	// cost a scan per request.
	minSweepInterval = time.Second
)

// Reason says why Acquire refused a request.
type Reason int

// Reasons of a refusal. The zero Reason goes with an admitted request.
const (
	// RateExceeded: the key's bucket is empty.
	RateExceeded Reason = iota + 1
	// TooManyConcurrent: MaxConcurrent requests of the key are in flight.
	TooManyConcurrent
)

// String returns a short description of r, for a log or a response body.
func (r Reason) String() string {
	switch r {
	case RateExceeded:
		return "rate limit exceeded"
	case TooManyConcurrent:
		return "too many concurrent requests"
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Options configures a Limiter. The zero Options limit nothing.
type Options struct {
	// Rate is the sustained number of requests per second of one key
	// (ParseRate reads it from "20/s" and the like). OPTIONAL: 0 or rate.Inf
	// means no rate limit.
	Rate rate.Limit
	// Burst is the number of requests of one key admitted at once after a
	// quiet spell: the bucket's size. OPTIONAL: one second's worth of Rate,
	// at least 1. Ignored without a Rate.
	Burst int
	// MaxConcurrent is the number of requests of one key in flight at a
	// time. OPTIONAL: 0 means no limit.
	MaxConcurrent int
	// MaxKeys bounds the keys tracked (see the package doc). OPTIONAL:
	// DefaultMaxKeys.
	MaxKeys int
}

// Validate reports what New would refuse: a negative or NaN Rate, a
// negative Burst, MaxConcurrent or MaxKeys.
func (o Options) Validate() error {
	var errs []error
	if o.Rate < 0 || math.IsNaN(float64(o.Rate)) {
		errs = append(errs, fmt.Errorf("the rate %v is not positive", float64(o.Rate)))
	}
	if o.Burst < 0 {
		errs = append(errs, fmt.Errorf("the burst %d is negative", o.Burst))
	}
	if o.MaxConcurrent < 0 {
		errs = append(errs, fmt.Errorf("max_concurrent %d is negative", o.MaxConcurrent))
	}
	if o.MaxKeys < 0 {
		errs = append(errs, fmt.Errorf("the key bound %d is negative", o.MaxKeys))
	}
	return errors.Join(errs...)
}

// Limiter admits requests by key. Its methods are safe for concurrent use.
type Limiter struct {
	o         Options // with defaults
	limitRate bool
	unlimited bool

	mu        sync.Mutex
	keys      map[string]*entry
	overflow  *entry // shared by new keys while the table is full of busy ones
	lastSweep time.Time
}

// entry is the state of one key.
type entry struct {
	bucket   *rate.Limiter // nil without a rate limit
	inFlight int           // guarded by Limiter.mu
}

// Burst returns the burst in effect (Options.Burst, or its default), 0
// without a rate.
func (l *Limiter) Burst() int { return l.o.Burst }

// New returns a Limiter. It panics if o is not valid (Options.Validate):
// configuration is checked where it is decoded.
func New(o Options) *Limiter {
	if err := o.Validate(); err != nil {
		panic("ratelimit.New: " + err.Error())
	}
	l := &Limiter{keys: make(map[string]*entry)}
	l.limitRate = o.Rate > 0 && o.Rate != rate.Inf
	if !l.limitRate {
		o.Rate, o.Burst = 0, 0
	} else if o.Burst == 0 {
		o.Burst = max(1, int(min(math.Ceil(float64(o.Rate)), math.MaxInt32)))
	}
	if o.MaxKeys == 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	l.o = o
	l.unlimited = !l.limitRate && o.MaxConcurrent == 0
	return l
}

// noRelease is the release of a refused or unlimited request.
func noRelease() {}

// Acquire admits one request of key, or refuses it.
//
// On ok, release must be called when the request ends: it frees the
// request's concurrency slot (rate tokens are not given back). Calling it
// more than once frees one slot all the same.
//
// When refused (ok false), reason says why and retryAfter (> 0) is how long
// until the request would be admitted: for RateExceeded the time until the
// bucket holds a token (if no other request of the key takes it first), for
// TooManyConcurrent ConcurrencyRetryAfter. release is then a no-op.
// RetryAfterSeconds turns retryAfter into a Retry-After header's value.
//
// The concurrency limit is checked first, so a request refused for it
// costs no rate token.
func (l *Limiter) Acquire(key string) (release func(), retryAfter time.Duration, reason Reason, ok bool) {
	if l.unlimited {
		return noRelease, 0, 0, true
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entry(key, now)
	if l.o.MaxConcurrent > 0 && e.inFlight >= l.o.MaxConcurrent {
		return noRelease, ConcurrencyRetryAfter, TooManyConcurrent, false
	}
	if e.bucket != nil && !e.bucket.AllowN(now, 1) {
		return noRelease, l.wait(e.bucket, now), RateExceeded, false
	}
	e.inFlight++
	var released atomic.Bool
	return func() {
		if released.CompareAndSwap(false, true) {
			l.mu.Lock()
			e.inFlight--
			l.mu.Unlock()
		}
	}, 0, 0, true
}

// entry returns key's entry, making one (or sharing the overflow entry)
// for a new key. l.mu is held.
func (l *Limiter) entry(key string, now time.Time) *entry {
	if e, ok := l.keys[key]; ok {
		return e
	}
	if len(l.keys) >= l.o.MaxKeys {
		if now.Sub(l.lastSweep) >= minSweepInterval || now.Before(l.lastSweep) {
			l.sweep(now)
		}
		if len(l.keys) >= l.o.MaxKeys {
			if l.overflow == nil {
				l.overflow = l.newEntry()
			}
			return l.overflow
		}
	}
	e := l.newEntry()
	l.keys[key] = e
	return e
}

// sweep drops the idle entries: no request in flight, and a full bucket.
// l.mu is held.
func (l *Limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, e := range l.keys {
		if e.inFlight == 0 && (e.bucket == nil || e.bucket.TokensAt(now) >= float64(l.o.Burst)) {
			delete(l.keys, k)
		}
	}
}

func (l *Limiter) newEntry() *entry {
	e := &entry{}
	if l.limitRate {
		e.bucket = rate.NewLimiter(l.o.Rate, l.o.Burst)
	}
	return e
}

// wait returns how long until b holds a token, rounded up to the
// nanosecond and checked against b, so a request after the wait is
// admitted.
func (l *Limiter) wait(b *rate.Limiter, now time.Time) time.Duration {
	need := 1 - b.TokensAt(now)
	ns := math.Ceil(need / float64(l.o.Rate) * float64(time.Second))
	if ns >= math.MaxInt64/2 { // a rate so low that the wait is centuries
		return math.MaxInt64 / 2
	}
	d := time.Duration(ns)
	for i := 0; i < 8 && b.TokensAt(now.Add(d)) < 1; i++ {
		d += time.Microsecond // float rounding in the bucket
	}
	return max(d, 1)
}

// RetryAfterSeconds is the value of a Retry-After header for a retryAfter
// of Acquire: whole seconds, rounded up, at least 1.
func RetryAfterSeconds(retryAfter time.Duration) int64 {
	s := int64(retryAfter / time.Second)
	if retryAfter%time.Second != 0 {
		s++
	}
	return max(s, 1)
}

// units of ParseRate.
var units = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// ParseRate reads a rate of the form N/s, N/m or N/h, where N is a
// positive decimal number such as 20 or 2.5: "20/s", "100/m", "5000/h".
func ParseRate(s string) (rate.Limit, error) {
	n, unit, ok := strings.Cut(s, "/")
	per, known := units[unit]
	if !ok || !known || !isDecimal(n) {
		return 0, fmt.Errorf("rate %q: want N/s, N/m or N/h with N a positive number, such as \"20/s\", \"100/m\", \"5000/h\" or \"2.5/s\"", s)
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) {
		return 0, fmt.Errorf("rate %q: %s is not a positive number within range", s, n)
	}
	l := rate.Limit(f / per.Seconds())
	if l <= 0 {
		return 0, fmt.Errorf("rate %q is too small", s)
	}
	return l, nil
}

// isDecimal reports whether s is digits, optionally with a fraction:
// 20, 2.5 (not 1e3, 0x10, .5, 5., +5, Inf or NaN).
func isDecimal(s string) bool {
	whole, frac, hasFrac := strings.Cut(s, ".")
	digits := func(s string) bool {
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	return digits(whole) && (!hasFrac || digits(frac))
}

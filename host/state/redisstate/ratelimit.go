package redisstate

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
)

// limiter is a rate limiter whose counts are in Redis: one script call per
// Acquire (rateLimitScript: the concurrency limit, then GCRA with the
// server's clock), one per release of a request counted in flight
// (rateReleaseScript). Its keys are PREFIX rl:<name>:<key>, each expiring
// once its bucket is full and no request of it counts as in flight.
//
// The semantics are ratelimit.Limiter's: the same default burst, the
// concurrency limit checked first, a refusal's retryAfter the time until a
// token is available (to the microsecond, rounded up) or
// ratelimit.ConcurrencyRetryAfter. A request whose release never comes (its
// replica died) stops counting after Options.InFlightExpiry; so does one
// that runs longer. The rate follows the server's clock: a step of it moves
// the buckets' refill.
type limiter struct {
	b             *Backend
	name          string
	interval      string // µs between tokens; "0" for no rate
	burst         int
	maxInFlight   int
	unlimited     bool
	inFlightMicro int64
}

// RateLimiter returns a limiter with o's limits, shared by every backend
// on the server with the same prefix and name. It panics if o is not
// valid, as ratelimit.New does. Unlimited options never ask Redis.
func (b *Backend) RateLimiter(name string, o ratelimit.Options) state.RateLimiter {
	burst := ratelimit.New(o).Burst() // the default burst, and the validation
	l := &limiter{
		b:             b,
		name:          name,
		interval:      "0",
		burst:         burst,
		maxInFlight:   o.MaxConcurrent,
		inFlightMicro: b.inFlightExpiry.Microseconds(),
	}
	limitRate := o.Rate > 0 && o.Rate != rate.Inf
	if limitRate {
		l.interval = strconv.FormatFloat(1e6/float64(o.Rate), 'g', -1, 64)
	}
	l.unlimited = !limitRate && o.MaxConcurrent == 0
	return l
}

func noRelease() {}

// Acquire admits one request of key or refuses it (see
// state.RateLimiter).
func (l *limiter) Acquire(ctx context.Context, key string) (func(), time.Duration, ratelimit.Reason, error) {
	if l.unlimited {
		return noRelease, 0, 0, nil
	}
	k := l.b.key("rl:", l.name+":"+key)
	var id string
	if l.maxInFlight > 0 {
		id = l.b.newID()
	}
	res, err := rateLimitScript.Run(ctx, l.b.rdb, []string{k},
		l.interval, l.burst, l.maxInFlight, id, l.inFlightMicro).Int64Slice()
	if err == nil && len(res) != 2 {
		err = errUnexpectedReply
	}
	if err != nil {
		return noRelease, 0, 0, wrap(ctx, "rate limit", err)
	}
	switch res[0] {
	case 1:
		return noRelease, retryAfter(res[1]), ratelimit.RateExceeded, nil
	case 2:
		return noRelease, ratelimit.ConcurrencyRetryAfter, ratelimit.TooManyConcurrent, nil
	}
	if id == "" {
		return noRelease, 0, 0, nil
	}
	var released atomic.Bool
	return func() {
		if !released.CompareAndSwap(false, true) {
			return
		}
		ctx, cancel := l.b.opContext()
		defer cancel()
		if err := rateReleaseScript.Run(ctx, l.b.rdb, []string{k}, id).Err(); err != nil {
			l.b.log.Warn("could not release a rate-limited request; it counts as in flight until it expires",
				"limiter", l.name, "expiry", l.b.inFlightExpiry, "error", err)
		}
	}, 0, 0, nil
}

// retryAfter turns the script's microseconds into a duration of at least
// 1 ns.
func retryAfter(us int64) time.Duration {
	if us >= math.MaxInt64/int64(time.Microsecond) {
		return math.MaxInt64 / 2
	}
	return max(time.Duration(us)*time.Microsecond, 1)
}

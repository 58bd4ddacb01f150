package streamable

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
)

// CodeRateLimited is the JSON-RPC error code of a request refused over its
// principal's rate limit (gateway { rate_limit }); its data has
// retryAfterSeconds. The HTTP answer is 429 with Retry-After.
const CodeRateLimited = -32029

// admitRate admits a POSTed request of principal key under l, or answers
// it 429 (nothing goes upstream) and reports false. Each request counts,
// each element of a batch; and subscriptions/listen, a stream that lasts
// as long as its session, takes no slot of max_concurrent (its rate token
// is spent). A body of notifications or responses (a client's answers,
// its cancellations) counts once, against a bucket of its own with the
// same limits (notificationsKey), so that they do not take the requests'
// tokens; over it, the body is refused unless awaited (nil: never) reports
// that it answers a request out to the client — such an answer is always
// admitted, so that limiting never strands a call in flight. release ends
// the requests' concurrency slots.
func (f *Front) admitRate(w http.ResponseWriter, r *http.Request, l state.RateLimiter, key string, body *wire.Body, awaited func() bool) (release func(), ok bool) {
	key = f.rateKey(key)
	id, n, listen := requests(body)
	if n == 0 {
		rel, retry, reason, err := l.Acquire(r.Context(), cluster.NotificationsKey(key))
		switch {
		case err != nil:
			f.log.Warn("rate limit not applied: its shared counts are unavailable", "error", err)
		case reason == 0:
			rel() // (no slot of max_concurrent: nothing waits upstream for it)
		case awaited != nil && awaited():
		default:
			f.refuseRate(w, r, id, retry, reason)
			return nil, false
		}
		return func() {}, true
	}
	var releases []func()
	releaseAll := func() {
		for _, f := range releases {
			f()
		}
	}
	for range n {
		rel, retry, reason, err := l.Acquire(r.Context(), key)
		if err != nil {
			// The shared counts cannot be read: admitted, as an outage of
			// the shared state must not stop every request.
			f.log.Warn("rate limit not applied: its shared counts are unavailable", "error", err)
			continue
		}
		if reason != 0 {
			releaseAll()
			f.refuseRate(w, r, id, retry, reason)
			return nil, false
		}
		releases = append(releases, rel)
	}
	if listen {
		releaseAll()
		return func() {}, true
	}
	return releaseAll, true
}

// refuseRate answers a request (id) refused over its principal's rate
// limit for reason: 429, retry after retry.
func (f *Front) refuseRate(w http.ResponseWriter, r *http.Request, id []byte, retry time.Duration, reason ratelimit.Reason) {
	secs := ratelimit.RetryAfterSeconds(retry)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	writeJSONRPCError(w, http.StatusTooManyRequests, wire.Error(id, CodeRateLimited,
		fmt.Sprintf("rate limit: %s; retry after %d s", reason, secs), fmt.Appendf(nil, `{"retryAfterSeconds":%d}`, secs)))
	f.refused(r, http.StatusTooManyRequests, reason.String())
}

// requests returns the id of a JSON-RPC body's request (nil, null, for a batch
// or none), how many requests it holds (a message with a method and an
// id), and whether it is a subscriptions/listen request.
func requests(body *wire.Body) (id []byte, n int, listen bool) {
	m := body.One()
	if m == nil {
		return nil, body.Requests(), false
	}
	if m.Kind != wire.KindRequest {
		return nil, 0, false
	}
	return m.ID, 1, m.IsMethod(wire.MethodListen)
}

// rateKey is the key of principal's counts in the rate limiter: a MAC of
// it, so that the shared state (Redis key names) does not show who is
// active (a principal is an issuer and a subject). A key rotation starts
// the counts afresh.
func (f *Front) rateKey(principal string) string {
	m := hmac.New(sha256.New, f.rateKeys[0])
	m.Write([]byte(principal))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

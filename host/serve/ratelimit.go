package serve

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// CodeRateLimited is the JSON-RPC error code of a request refused over its
// principal's rate limit (gateway { rate_limit }); its data has
// retryAfterSeconds. The HTTP answer is 429 with Retry-After.
const CodeRateLimited = -32029

// admitRate admits a POSTed request of principal key under l, or answers
// it 429 (nothing goes upstream) and reports false. Only requests count:
// a body of notifications or responses (a client's answers, its
// cancellations) is always admitted, so that limiting never strands a call
// in flight. release ends the request's concurrency slot.
func (g *Gateway) admitRate(w http.ResponseWriter, r *http.Request, l *ratelimit.Limiter, key string, body []byte) (release func(), ok bool) {
	id, isRequest := requestID(body)
	if !isRequest {
		return func() {}, true
	}
	release, retry, reason, ok := l.Acquire(key)
	if ok {
		return release, true
	}
	secs := int(math.Ceil(retry.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSONRPCError(w, http.StatusTooManyRequests, fmt.Appendf(nil,
		`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"rate limit: %s; retry after %d s","data":{"retryAfterSeconds":%d}}}`,
		id, CodeRateLimited, reason, secs, secs))
	g.refused(r, http.StatusTooManyRequests, reason.String())
	return nil, false
}

// requestID returns the id of a JSON-RPC request body ("null" for a batch),
// and whether the body holds a request (a message with a method and an id).
func requestID(body []byte) (id []byte, ok bool) {
	var arr, parr [8]rawjson.Member
	ms, _, err := rawjson.Message(arr[:0], parr[:0], body)
	if err != nil {
		elems, err := rawjson.Elements(nil, body)
		if err != nil {
			return nil, false
		}
		for _, e := range elems {
			if _, ok := requestID(e); ok {
				return []byte("null"), true
			}
		}
		return nil, false
	}
	m, hasMethod := rawjson.Find(ms, "method")
	i, hasID := rawjson.Find(ms, "id")
	if !hasMethod || !hasID || len(m.Value) == 0 {
		return nil, false
	}
	return i.Value, true
}

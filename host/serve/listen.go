package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// A subscriptions/listen request (a 2026-07-28 client's subscriptions and
// list_changed notifications, though any client may send one) is a stream
// that stays open until its client ends it: it carries no call, and costs
// a go-sdk session and its goroutines while it lasts. So, apart from the
// sessions of max_sessions:
//
//   - it is admitted against caps of its own (HTTPOptions.MaxListenStreams,
//     and a principal's share of them under inbound OAuth), counted while
//     its POST is served; one over them is answered 503 with a JSON-RPC
//     error (CodeTooManySessions), and nothing else is spent on it;
//   - a stream on whose session nothing was sent for the session idle
//     timeout is ended with its result, as an idle session is closed: the
//     client opens it again if it still wants it (the answer tells it the
//     stream is over, unlike a cut connection);
//   - a drain (shutdown) ends every stream at once with a CodeShuttingDown
//     error, instead of waiting for it as for a call in flight, and refuses
//     new ones.

// methodListen is the method of a listen stream.
const methodListen = "subscriptions/listen"

// listenStreams are the listen streams of a gateway.
type listenStreams struct {
	mu      sync.Mutex
	open    int            // listen requests admitted over HTTP and not yet answered
	byOwner map[string]int // ... by principal
	// parked are the listen handlers running, by session: what a drain
	// ends, and what a notification sent to the session keeps alive.
	parked  map[*mcp.ServerSession]map[*listenStream]bool
	nParked atomic.Int64 // len of every parked set, read without mu by sends
	idle    time.Duration
}

// listenStream is one running listen handler.
type listenStream struct {
	cancel context.CancelCauseFunc
	timer  *time.Timer // ends it once idle; nil without an idle timeout
}

var (
	// errListenIdle ends a listen stream on whose session nothing was sent
	// for the idle timeout.
	errListenIdle = errors.New("subscription stream idle")
	// errListenDrained ends a listen stream when the gateway drains.
	errListenDrained = errors.New("the gateway is shutting down")
)

// listenCapsError is a listen request refused over its caps.
type listenCapsError struct {
	limit        int
	perPrincipal bool
}

func (e *listenCapsError) Error() string {
	if e.perPrincipal {
		return fmt.Sprintf("too many subscription streams: one principal may have at most %d subscriptions/listen streams open at once; end unused ones", e.limit)
	}
	return fmt.Sprintf("too many subscription streams: the gateway serves at most %d subscriptions/listen streams at once; end unused ones or retry later", e.limit)
}

// setIdle sets the idle timeout of the streams that start from now on
// (the HTTP handler's session idle timeout; 0: none).
func (l *listenStreams) setIdle(d time.Duration) {
	l.mu.Lock()
	l.idle = d
	l.mu.Unlock()
}

// admit counts n listen requests of owner in, under max (this replica's)
// and perPrincipal (0: not applied), or returns a *listenCapsError. release
// counts them out.
func (l *listenStreams) admit(owner string, n, max, perPrincipal int) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case perPrincipal > 0 && l.byOwner[owner]+n > perPrincipal:
		return nil, &listenCapsError{limit: perPrincipal, perPrincipal: true}
	case l.open+n > max:
		return nil, &listenCapsError{limit: max}
	}
	if l.byOwner == nil {
		l.byOwner = map[string]int{}
	}
	l.open += n
	l.byOwner[owner] += n
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open -= n
			if l.byOwner[owner] -= n; l.byOwner[owner] <= 0 {
				delete(l.byOwner, owner)
			}
		})
	}, nil
}

// park registers a listen handler of ss running with ctx, and returns the
// context it is to run with (ended when idle or drained) and the function
// to call when it returns.
func (l *listenStreams) park(ctx context.Context, ss *mcp.ServerSession) (context.Context, func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	st := &listenStream{cancel: cancel}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.idle > 0 {
		st.timer = time.AfterFunc(l.idle, func() { cancel(errListenIdle) })
	}
	if l.parked == nil {
		l.parked = map[*mcp.ServerSession]map[*listenStream]bool{}
	}
	if l.parked[ss] == nil {
		l.parked[ss] = map[*listenStream]bool{}
	}
	l.parked[ss][st] = true
	l.nParked.Add(1)
	return lctx, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if st.timer != nil {
			st.timer.Stop()
		}
		cancel(nil)
		if l.parked[ss][st] {
			delete(l.parked[ss], st)
			if len(l.parked[ss]) == 0 {
				delete(l.parked, ss)
			}
			l.nParked.Add(-1)
		}
	}
}

// touch keeps the listen streams of ss alive: something was sent to it.
func (l *listenStreams) touch(ss *mcp.ServerSession) {
	if l.nParked.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for st := range l.parked[ss] {
		if st.timer != nil {
			st.timer.Reset(l.idle)
		}
	}
}

// endAll ends every listen stream running, for cause.
func (l *listenStreams) endAll(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, set := range l.parked {
		for st := range set {
			st.cancel(cause)
		}
	}
}

// serveListen runs a listen handler (next) for the drain middleware: not
// counted as a call in flight, ended when idle or when the gateway
// drains, refused while it drains.
func (g *Gateway) serveListen(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	g.drainMu.Lock()
	if g.draining {
		g.drainMu.Unlock()
		return nil, errShuttingDown("no new requests are accepted")
	}
	lctx, end := g.listens.park(ctx, ss)
	g.drainMu.Unlock()
	defer end()
	res, err := next(lctx, method, req)
	if errors.Is(context.Cause(lctx), errListenDrained) && ctx.Err() == nil {
		return nil, errShuttingDown("the subscription stream is ended")
	}
	return res, err
}

// listenActivity is a sending middleware of the go-sdk server: a
// notification sent to a session keeps its listen streams alive.
func (g *Gateway) listenActivity(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				g.listens.touch(ss)
			}
		}
		return next(ctx, method, req)
	}
}

// listenRequests returns how many subscriptions/listen requests a POST
// body holds (each element of a batch counts), and the id to answer a
// refusal with ("null" for a batch).
func listenRequests(body []byte) (n int, id []byte) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		if id, ok := listenRequest(body); ok {
			return 1, id
		}
		return 0, []byte("null")
	}
	elems, err := rawjson.Elements(nil, trimmed)
	if err != nil {
		return 0, []byte("null")
	}
	for _, e := range elems {
		if _, ok := listenRequest(e); ok {
			n++
		}
	}
	return n, []byte("null")
}

// listenRequest reports whether msg is a subscriptions/listen request (a
// message with that method and an id), and returns its id.
func listenRequest(msg []byte) (id []byte, ok bool) {
	var arr, parr [8]rawjson.Member
	ms, _, err := rawjson.Message(arr[:0], parr[:0], msg)
	if err != nil {
		return nil, false
	}
	m, _ := rawjson.Find(ms, "method")
	i, hasID := rawjson.Find(ms, "id")
	if !hasID || !rawjson.Is(m.Value, methodListen) {
		return nil, false
	}
	return i.Value, true
}

// admitListen admits the listen requests of a POST body of owner, or
// answers it 503 with a JSON-RPC error and reports false. release counts
// them out when the POST is answered.
func (g *Gateway) admitListen(w http.ResponseWriter, r *http.Request, owner string, body []byte, max, perPrincipal int) (release func(), ok bool) {
	n, id := listenRequests(body)
	if n == 0 {
		return func() {}, true
	}
	release, err := g.listens.admit(owner, n, max, perPrincipal)
	var capped *listenCapsError
	if errors.As(err, &capped) {
		writeJSONRPCError(w, http.StatusServiceUnavailable, fmt.Appendf(nil,
			`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, CodeTooManySessions, capped.Error()))
		reason := "too many subscription streams"
		if capped.perPrincipal {
			reason += " for this principal"
		}
		g.refused(r, http.StatusServiceUnavailable, reason)
		return nil, false
	}
	return release, true
}

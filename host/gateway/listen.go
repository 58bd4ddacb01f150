package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/wire"
)

// A subscriptions/listen request (a 2026-07-28 client's subscriptions and
// list_changed notifications, though any client may send one) is a stream
// that stays open until its client ends it: it carries no call, and costs
// a go-sdk session and its goroutines while it lasts. So, apart from the
// sessions of max_sessions:
//
//   - it is admitted against caps of its own (HTTPOptions.MaxListenStreams,
//     and a principal's share of them under inbound OAuth), counted while
//     its POST is served; one over the gateway's cap is answered 503 with a
//     JSON-RPC error (CodeTooManySessions), and nothing else is spent on it;
//   - one over its principal's share ends that principal's stream on which
//     nothing was sent for the longest (with a CodeTooManySessions error)
//     and takes its place, so that a client that reconnects is never locked
//     out by streams it abandoned; it is refused only when the principal's
//     streams are all still starting or ending;
//   - a stream is not ended for being quiet (a client such as the go-sdk's
//     opens its stream once, at connect, and never again); one whose client
//     went away ends with its request's context (the connection's close);
//   - a drain (shutdown) ends every stream at once with a CodeShuttingDown
//     error, instead of waiting for it as for a call in flight, and refuses
//     new ones.

// methodListen is the method of a listen stream.
const methodListen = wire.MethodListen

// listenStreams are the listen streams of a gateway.
type listenStreams struct {
	mu      sync.Mutex
	open    int            // listen requests admitted over HTTP and not yet answered
	byOwner map[string]int // ... by principal
	// parked are the listen handlers running, by session: what a drain
	// ends, what a notification sent to the session marks active, and
	// what a principal's new stream over its share replaces.
	parked  map[*mcp.ServerSession]map[*listenStream]bool
	nParked atomic.Int64 // len of every parked set, read without mu by sends
}

// listenStream is one running listen handler.
type listenStream struct {
	cancel context.CancelCauseFunc
	owner  string        // the principal whose stream it is ("" without inbound OAuth)
	ticket *listenTicket // its POST's admission (nil: none, or not known)
	last   time.Time     // when it started, or something was last sent to its session
	ending bool          // ended for another stream
}

// listenTicket is the admission of a POST's listen requests, passed to
// their handlers in the request's context (the go-sdk's stateless handler
// runs a listen stream with it): a stream ended for another gives its
// place in its principal's share up at once, not when its POST is
// answered.
type listenTicket struct {
	owner    string
	n        int  // listen requests admitted
	replaced int  // ... of which ended for others (their places given up)
	released bool // counted out
}

type listenTicketKey struct{}

var (
	// errListenReplaced ends a principal's stream for a newer one over its
	// share.
	errListenReplaced = errors.New("subscription stream replaced")
	// errListenDrained ends a listen stream when the gateway drains.
	errListenDrained = errors.New("the gateway is shutting down")
)

// ListenCapsError is a subscriptions/listen request refused over its caps
// (AdmitListen).
type ListenCapsError struct {
	// Limit is the cap that refused it.
	Limit int
	// PerPrincipal: the cap is one principal's share, not the gateway's.
	PerPrincipal bool
}

func (e *ListenCapsError) Error() string {
	if e.PerPrincipal {
		return fmt.Sprintf("too many subscription streams: one principal may have at most %d subscriptions/listen streams open at once, and its others are still starting or ending; retry", e.Limit)
	}
	return fmt.Sprintf("too many subscription streams: the gateway serves at most %d subscriptions/listen streams at once; end unused ones or retry later", e.Limit)
}

// admit counts n listen requests of owner in, under max (this replica's)
// and perPrincipal (0: not applied), or returns a *ListenCapsError. Over
// perPrincipal, owner's streams on which nothing was sent for the longest
// are ended to make room. release counts them out.
func (l *listenStreams) admit(owner string, n, max, perPrincipal int) (t *listenTicket, release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open+n > max {
		return nil, nil, &ListenCapsError{Limit: max}
	}
	if perPrincipal > 0 {
		// A stream ended for another without a ticket keeps its place
		// until it returns.
		var live []*listenStream
		ending := 0
		for _, set := range l.parked {
			for st := range set {
				switch {
				case st.owner != owner:
				case !st.ending:
					live = append(live, st)
				case st.ticket == nil:
					ending++
				}
			}
		}
		need := l.byOwner[owner] + ending + n - perPrincipal
		if need > len(live) || n > perPrincipal {
			return nil, nil, &ListenCapsError{Limit: perPrincipal, PerPrincipal: true}
		}
		if need > 0 {
			slices.SortFunc(live, func(a, b *listenStream) int { return a.last.Compare(b.last) })
			for _, st := range live[:need] {
				l.replaceLocked(st)
			}
		}
	}
	if l.byOwner == nil {
		l.byOwner = map[string]int{}
	}
	l.open += n
	l.byOwner[owner] += n
	t = &listenTicket{owner: owner, n: n}
	return t, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if t.released {
			return
		}
		t.released = true
		l.open -= t.n
		if l.byOwner[owner] -= t.n - t.replaced; l.byOwner[owner] <= 0 {
			delete(l.byOwner, owner)
		}
	}, nil
}

// replaceLocked ends st for a newer stream of its principal's, and gives
// its place in the principal's share up (l.mu is held).
func (l *listenStreams) replaceLocked(st *listenStream) {
	st.ending = true
	st.cancel(errListenReplaced)
	if t := st.ticket; t != nil && !t.released && t.replaced < t.n {
		t.replaced++
		if l.byOwner[t.owner]--; l.byOwner[t.owner] <= 0 {
			delete(l.byOwner, t.owner)
		}
	}
}

// park registers a listen handler of owner's on ss running with ctx, and
// returns the context it is to run with (ended when replaced or drained,
// or with ctx) and the function to call when it returns.
func (l *listenStreams) park(ctx context.Context, ss *mcp.ServerSession, owner string) (context.Context, func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	t, _ := ctx.Value(listenTicketKey{}).(*listenTicket)
	st := &listenStream{cancel: cancel, owner: owner, ticket: t, last: time.Now()}
	l.mu.Lock()
	defer l.mu.Unlock()
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

// touch marks the listen streams of ss active: something was sent to it.
func (l *listenStreams) touch(ss *mcp.ServerSession) {
	if l.nParked.Load() == 0 {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for st := range l.parked[ss] {
		st.last = now
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
// counted as a call in flight, ended when replaced or when the gateway
// drains, refused while it drains.
func (g *Gateway) serveListen(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	owner := ""
	if p := principalOf(req); p != nil {
		owner = p.ID() // (as sessionOwner names the request's principal)
	}
	g.drainMu.Lock()
	if g.draining {
		g.drainMu.Unlock()
		return nil, errShuttingDown("no new requests are accepted")
	}
	lctx, end := g.listens.park(ctx, ss, owner)
	g.drainMu.Unlock()
	defer end()
	if p := principalOf(req); p != nil && ss != nil && g.users.Load() {
		defer g.userListens.add(ss, p)() // (userlists.go)
	}
	res, err := next(lctx, method, req)
	if ctx.Err() == nil {
		switch cause := context.Cause(lctx); {
		case errors.Is(cause, errListenDrained):
			return nil, errShuttingDown("the subscription stream is ended")
		case errors.Is(cause, errListenReplaced):
			return nil, &jsonrpc.Error{Code: CodeTooManySessions, Message: "subscription stream ended: replaced by a newer subscriptions/listen stream of the same principal, over its share"}
		}
	}
	return res, err
}

// listenActivity is a sending middleware of the go-sdk server: a
// notification sent to a session marks its listen streams active.
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

// AdmitListen admits n subscriptions/listen streams of owner (its
// principal's ID, "" without inbound OAuth) under the caps max (all
// streams) and perPrincipal (0: none), for a front about to serve them: the
// returned context carries the admission for the streams' handlers, and
// release counts them out once they are answered. Over a cap, err is a
// *ListenCapsError.
func (g *Gateway) AdmitListen(ctx context.Context, owner string, n, max, perPrincipal int) (_ context.Context, release func(), err error) {
	t, release, err := g.listens.admit(owner, n, max, perPrincipal)
	if err != nil {
		return ctx, nil, err
	}
	return context.WithValue(ctx, listenTicketKey{}, t), release, nil
}

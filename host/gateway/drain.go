package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeShuttingDown is the JSON-RPC error code of a request the gateway did
// not finish because it is shutting down (the implementation-defined server
// error range).
const CodeShuttingDown = -32000

// abortGrace is how long, after the drain deadline cancelled the requests
// still in flight, the gateway waits for their error answers to be written.
const abortGrace = 2 * time.Second

// inflight counts the requests being served and lets a drain wait for none.
// Its zero value counts none.
type inflight struct {
	mu sync.Mutex
	n  int
	// zero is closed when n returns to 0, for those waiting (idle); nil
	// when none waits. (Made only for a waiter: a request costs no channel.)
	zero chan struct{}
}

func newInflight() *inflight { return &inflight{} }

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.zero != nil {
		close(f.zero)
		f.zero = nil
	}
	f.mu.Unlock()
}

// idle returns a channel closed once no request is in flight (already
// closed if none is).
func (f *inflight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return closedChan
	}
	if f.zero == nil {
		f.zero = make(chan struct{})
	}
	return f.zero
}

// closedChan is a closed channel. (Shared, never sent on.)
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// errShuttingDown is the answer to a request refused or cut short by a drain.
func errShuttingDown(detail string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeShuttingDown, Message: "mcphost is shutting down: " + detail}
}

// errAborted is the answer to a request cut short at the drain deadline.
func errAborted(g *Gateway) *jsonrpc.Error {
	return errShuttingDown(fmt.Sprintf("the request was cancelled after the drain timeout (%s)", g.DrainTimeout()))
}

// begin registers a request with the drain. It returns a context that is
// cancelled when the drain deadline passes, and a function to call when the
// request is answered; ok is false if the gateway is already draining, and
// the request must be refused.
func (g *Gateway) begin(ctx context.Context) (context.Context, func(), bool) {
	end, ok := g.enter()
	if !ok {
		return ctx, func() {}, false
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.abort, cancel)
	return ctx, func() {
		stop()
		cancel()
		end()
	}, true
}

// enter is begin for a caller whose context already ends at the drain
// deadline (see abortable): it registers the request, and returns the
// function to call when the request is answered, or ok false.
func (g *Gateway) enter() (end func(), ok bool) {
	g.drainMu.Lock()
	defer g.drainMu.Unlock()
	if g.draining {
		return nil, false
	}
	g.calls.add()
	return g.callDone, true
}

// abortable returns a context of parent that is also cancelled when the
// drain deadline passes, and the function that releases it: one for all the
// requests of a connection, instead of begin's one per request.
func (g *Gateway) abortable(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(g.abort, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// aborted reports whether ctx (from begin) ended because the drain deadline
// passed, rather than because its caller gave up.
func (g *Gateway) aborted(parent context.Context) bool {
	return g.abort.Err() != nil && parent.Err() == nil
}

// drainMiddleware registers every request the go-sdk server handles with the
// drain: while draining, new requests are refused, and a request still
// running at the drain deadline is answered with a CodeShuttingDown error.
func (g *Gateway) drainMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if method == methodListen {
			return g.serveListen(ctx, method, req, next) // (listen.go: a stream, not a call)
		}
		cctx, end, ok := g.begin(ctx)
		if !ok {
			return nil, errShuttingDown("no new requests are accepted")
		}
		defer end()
		res, err := next(cctx, method, req)
		if g.aborted(ctx) {
			return nil, errAborted(g)
		}
		return res, err
	}
}

// Drain stops taking requests, waits up to the drain timeout for the ones in
// flight, then cancels those still running: each is answered with a
// CodeShuttingDown error (the gateway waits up to two more seconds for those
// answers to be written). Streams that carry no call (subscriptions/listen)
// are ended at once with that error, not waited for. It returns when nothing
// is in flight or that grace has passed, or when ctx is done. Drain is the
// first half of a graceful shutdown; the caller then closes the sessions
// (and with them the standalone streams) and the listener.
func (g *Gateway) Drain(ctx context.Context) {
	g.drainMu.Lock()
	g.draining = true
	g.drainMu.Unlock()
	g.listens.endAll(errListenDrained) // (none starts once draining is set)
	timer := time.NewTimer(g.DrainTimeout())
	defer timer.Stop()
	select {
	case <-g.calls.idle():
		return
	case <-ctx.Done():
	case <-timer.C:
	}
	g.log.Warn("drain timeout: cancelling the requests still in flight", "drain_timeout", g.DrainTimeout())
	g.cancelAbort()
	grace := time.NewTimer(abortGrace)
	defer grace.Stop()
	select {
	case <-g.calls.idle():
	case <-grace.C:
	case <-ctx.Done():
	}
}

// CloseSessions ends every session of the gateway's server (their standalone
// streams included), and the calls held for clients' retries.
func (g *Gateway) CloseSessions() {
	g.leaveState()
	g.leaveFronts() // (no session change is taken while the sessions close)
	for ss := range g.srv.Sessions() {
		ss.Close()
	}
	g.closeFronts()
	g.EndHeldCalls()
}

// EndHeldCalls ends the calls held for clients' retries, and waits for
// them (CloseSessions does it last).
func (g *Gateway) EndHeldCalls() { g.held.close() }

// InFlight reports how many requests the gateway is serving.
func (g *Gateway) InFlight() int {
	g.calls.mu.Lock()
	defer g.calls.mu.Unlock()
	return g.calls.n
}

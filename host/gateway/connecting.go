package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
)

// Connecting at start: the gateway serves at once, what is connected, and
// each server as it connects — as a client connected to the servers
// directly would see them come — rather than keep its clients waiting for
// the slowest server (up to its connect_timeout) before it answers their
// initialize.

// ConnectAll connects every active server (an endpoint's gateway: the
// endpoint's) in the background, as host.Host.ConnectAll does, and returns
// at once; progress, if set, is told
// of each server as it settles (connected or failed). Until then, Sync
// passes the servers still connecting over (so that it does not wait for
// them); each is synced in as it settles, and the sessions told by
// list_changed (the gateway's capabilities announce it for tools, prompts
// and resources). The returned channel is closed once every server has
// settled, or ctx is done; the caller waits for it before closing the host.
func (g *Gateway) ConnectAll(ctx context.Context, progress func(name string, st conn.Status)) <-chan struct{} {
	g.starting.Store(true)
	g.startedAt = time.Now()
	started := make(chan struct{})
	g.started.Store(&started)
	done := make(chan struct{})
	go func() { // owned by the caller, who waits for done
		defer close(done)
		defer close(started)
		var only func(string) bool // (an endpoint's gateway connects its servers only)
		if g.endpoint != "" {
			only = g.inEndpoint
		}
		g.h.ConnectSome(ctx, only, func(name string, st conn.Status) {
			if progress != nil {
				progress(name, st)
			}
			g.resync()
		})
		g.starting.Store(false)
		// Synced here, not by the Run loop, so that a call waiting for its
		// server (startupMiddleware) finds it served once started closes.
		// (Servers ConnectAll does not connect, such as token_exchange
		// ones, are listed as before.)
		for _, p := range g.Sync(ctx) {
			g.log.Warn("registry problem", "server", p.Server, "detail", p.Detail)
		}
	}()
	return done
}

// startupMiddleware holds a tools/call of a name the gateway does not
// serve while servers are still connecting at start, until the name is
// served or every server has settled (connected or failed, within its
// connect_timeout), or the request is cancelled: a client that calls a
// tool right after its initialize (answered at once) gets the call, not
// "unknown tool", as it would connecting to the server directly. A name
// still not served then is answered as unknown, as ever.
//
// A list (tools, prompts, resources, templates), or a call of tool
// search's tools, made while servers are still connecting waits for them
// too, but at most until StartGrace after the connects began: a client
// that lists once and does not follow list_changed sees every server that
// connects within the grace, and no client waits longer than that for a
// list.
func (g *Gateway) startupMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call":
			if cr, ok := req.(*mcp.CallToolRequest); ok && cr.Params != nil {
				if g.search != nil && (cr.Params.Name == SearchToolName || cr.Params.Name == CallToolName) {
					g.awaitGrace(ctx)
				} else {
					g.awaitServed(ctx, cr.Params.Name)
				}
			}
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			g.awaitGrace(ctx)
		}
		return next(ctx, method, req)
	}
}

// DefaultStartGrace is how long after the connects at start began a list
// waits for the servers still connecting (Options.StartGrace).
const DefaultStartGrace = 5 * time.Second

// awaitGrace waits while the connects at start have not settled, at most
// until the start grace has passed since they began.
func (g *Gateway) awaitGrace(ctx context.Context) {
	sp := g.started.Load()
	if sp == nil {
		return
	}
	wait := time.Until(g.startedAt.Add(g.startGrace))
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-*sp:
	case <-t.C:
	case <-ctx.Done():
	}
}

// awaitServed waits while name is not a served tool and the connects at
// start have not settled.
func (g *Gateway) awaitServed(ctx context.Context, name string) {
	sp := g.started.Load()
	if sp == nil {
		return
	}
	select {
	case <-*sp:
		return // (every call after the start)
	default:
	}
	for !g.servesTool(ctx, name) {
		synced := g.synced.wait()
		if g.servesTool(ctx, name) {
			return
		}
		select {
		case <-synced:
		case <-*sp:
			return
		case <-ctx.Done():
			return
		}
	}
}

// syncSignal tells waiters that a Sync ended.
type syncSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed when the next Sync ends.
func (s *syncSignal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// fire wakes every waiter.
func (s *syncSignal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// resync asks the Run loop for a Sync.
func (g *Gateway) resync() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// settled is servers without those still connecting at start (see
// ConnectAll).
func (g *Gateway) settled(servers []string) []string {
	if !g.starting.Load() {
		return servers
	}
	pending := map[string]bool{}
	for _, st := range g.h.Connections().Status() {
		if st.State == conn.StatePending {
			pending[st.Name] = true
		}
	}
	out := servers[:0:0]
	for _, s := range servers {
		if !pending[s] {
			out = append(out, s)
		}
	}
	return out
}

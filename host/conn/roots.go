package conn

import (
	"context"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server of a version before 2026-07-28 may ask for the client's roots
// (roots/list) at any time. During a call the request goes to the call's
// Requester (rootsMiddleware); outside any call it is answered by
// Options.OnListRoots when that has an answer (a front with one client
// asks that client), else by the host's own roots (Options.Roots, the
// settings' roots), which each session's go-sdk client holds: SetRoots
// changes them and sends the servers notifications/roots/list_changed.

// rootClients are the go-sdk clients of sessions connecting or live, for
// SetRoots.
type rootClients struct {
	mu    sync.Mutex
	roots []*mcp.Root
	// live holds each client and the roots it was last given.
	live map[*mcp.Client][]*mcp.Root
	// apply serializes SetRoots' passes over the clients (notify), which
	// run without mu: a server's notification may take long.
	apply sync.Mutex
}

// adopt gives client the current roots (before it connects: no
// notification) and records it, so that a SetRoots during its connect
// reaches it too; the returned func forgets it (when the connect fails, or
// the session ends).
func (r *rootClients) adopt(client *mcp.Client) (forget func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	client.AddRoots(r.roots...)
	if r.live == nil {
		r.live = map[*mcp.Client][]*mcp.Root{}
	}
	r.live[client] = r.roots
	return func() {
		r.mu.Lock()
		delete(r.live, client)
		r.mu.Unlock()
	}
}

func uris(roots []*mcp.Root) []string {
	out := make([]string, len(roots))
	for i, root := range roots {
		out[i] = root.URI
	}
	return out
}

func sameRoots(a, b []*mcp.Root) bool {
	return slices.EqualFunc(a, b, func(a, b *mcp.Root) bool { return a.URI == b.URI && a.Name == b.Name })
}

// notify brings every recorded client to the current roots: each client
// whose roots differ is given them (its server is sent
// notifications/roots/list_changed), the clients at once, the call
// returning when all are done. One pass at a time (apply).
func (r *rootClients) notify() {
	r.apply.Lock()
	defer r.apply.Unlock()
	type change struct {
		client *mcp.Client
		old    []string
	}
	r.mu.Lock()
	roots := r.roots // (replaced, never changed in place)
	var changes []change
	for client, given := range r.live {
		if !sameRoots(given, roots) {
			changes = append(changes, change{client, uris(given)})
			r.live[client] = roots
		}
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, ch := range changes {
		wg.Go(func() {
			// (go-sdk notifies on each change: a server may be told twice.)
			ch.client.RemoveRoots(ch.old...)
			ch.client.AddRoots(roots...)
		})
	}
	wg.Wait()
}

// SetRoots replaces the host's own roots (see Options.Roots): every
// session's client answers roots/list with them from now on, and, when
// they differ from the last, its server is sent
// notifications/roots/list_changed. The notifications are sent after
// SetRoots returns (each may wait for its server), by a goroutine that
// Close waits for.
func (m *Manager) SetRoots(roots []*mcp.Root) {
	r := &m.rootClients
	r.mu.Lock()
	same := sameRoots(r.roots, roots)
	if !same {
		r.roots = slices.Clone(roots)
	}
	r.mu.Unlock()
	if same || m.isClosed() {
		return
	}
	m.wg.Go(r.notify)
}

// listRootsOutside answers a server's roots/list that no call's Requester
// takes: by Options.OnListRoots when it answers, else by next (the go-sdk
// client's own roots, the host's).
func (c *Conn) listRootsOutside(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if f := c.m.opts.OnListRoots; f != nil {
		var u *User
		if c.user != nil {
			u = c.user.user()
		}
		res, err := f(ctx, c.cfg.Name, u)
		if err != nil {
			return nil, err
		}
		if res != nil {
			return res, nil
		}
	}
	return next(ctx, method, req)
}

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

// rootClients are the go-sdk clients of live sessions, for SetRoots.
type rootClients struct {
	mu    sync.Mutex
	roots []*mcp.Root
	live  map[*mcp.ClientSession]*mcp.Client
}

// add records client as the client of cs and gives it the current roots
// (before it connects: no notification).
func (r *rootClients) adopt(client *mcp.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	client.AddRoots(r.roots...)
}

// track records cs's client while cs is live; the returned func forgets it.
func (r *rootClients) track(cs *mcp.ClientSession, client *mcp.Client) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[*mcp.ClientSession]*mcp.Client{}
	}
	r.live[cs] = client
	return func() {
		r.mu.Lock()
		delete(r.live, cs)
		r.mu.Unlock()
	}
}

// SetRoots replaces the host's own roots (see Options.Roots): every live
// session's client answers roots/list with them from now on, and, when
// they differ from the last, its server is sent
// notifications/roots/list_changed.
func (m *Manager) SetRoots(roots []*mcp.Root) {
	r := &m.rootClients
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.EqualFunc(r.roots, roots, func(a, b *mcp.Root) bool { return a.URI == b.URI && a.Name == b.Name }) {
		return
	}
	old := make([]string, len(r.roots))
	for i, root := range r.roots {
		old[i] = root.URI
	}
	r.roots = slices.Clone(roots)
	for _, client := range r.live {
		// (go-sdk notifies on each change: a server may be told twice.)
		client.RemoveRoots(old...)
		client.AddRoots(roots...)
	}
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

package conn

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server of a version before 2026-07-28 may ask for the client's roots
// (roots/list) at any time. During a call the request goes to the call's
// Requester (rootsMiddleware); outside any call it is answered by
// Options.OnListRoots when that has an answer (a front with one client
// asks that client), else by the host's own roots (Options.Roots, the
// settings' roots), which each session's go-sdk client holds: SetRoots
// changes them and sends the servers notifications/roots/list_changed.
// When the client OnListRoots asks says its roots changed, the front calls
// ClientRootsChanged, which tells the servers that client answers for.

// rootClients are the go-sdk clients of sessions connecting or live, for
// SetRoots and ClientRootsChanged.
type rootClients struct {
	mu    sync.Mutex
	roots []*mcp.Root
	// live holds each client, the roots it was last given and whom its
	// roots outside a call come from.
	live map[*mcp.Client]*rootClient
	// apply serializes SetRoots' passes over the clients (notify), which
	// run without mu: a server's notification may take long.
	apply sync.Mutex
	// notifyQueued: a pass (notify) is started and has not yet taken the
	// roots; a SetRoots meanwhile starts none (that pass takes its roots
	// too): at most one pass runs and one waits.
	notifyQueued bool
}

// rootClient is one go-sdk client of rootClients.
type rootClient struct {
	given []*mcp.Root
	// user is the User ID of a per-user connection's client, "" for a
	// shared connection's.
	user string
	// listChanged: the client told its server it sends
	// notifications/roots/list_changed.
	listChanged bool
	// send is the client's sending method handler (as the go-sdk's
	// AddRoots uses it), cs its session once connected: ClientRootsChanged
	// sends the notification with them, the go-sdk client having no call
	// that sends it without a change of its own roots.
	send mcp.MethodHandler
	cs   *mcp.ClientSession
	// sending: a notification of ClientRootsChanged is being sent to the
	// client's server (by one goroutine); again: another is to be sent
	// once it is. Notifications coalesce: at most one in flight and one
	// queued per client, however many changes its client reports.
	sending, again bool
}

// adopt gives client the current roots (before it connects: no
// notification) and records it, of the user of ID user ("": shared), so
// that a SetRoots during its connect reaches it too; the returned func
// forgets it (when the connect fails, or the session ends). listChanged
// is what the client declares.
func (r *rootClients) adopt(client *mcp.Client, user string, listChanged bool) (forget func()) {
	rc := &rootClient{user: user, listChanged: listChanged}
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		rc.send = next // (applied at once: before the client is used)
		return next
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	client.AddRoots(r.roots...)
	if r.live == nil {
		r.live = map[*mcp.Client]*rootClient{}
	}
	rc.given = r.roots
	r.live[client] = rc
	return func() {
		r.mu.Lock()
		delete(r.live, client)
		r.mu.Unlock()
	}
}

// connected records client's session, once connected.
func (r *rootClients) connected(client *mcp.Client, cs *mcp.ClientSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rc := r.live[client]; rc != nil {
		rc.cs = cs
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
	r.notifyQueued = false
	roots := r.roots // (replaced, never changed in place)
	var changes []change
	for client, rc := range r.live {
		if !sameRoots(rc.given, roots) {
			changes = append(changes, change{client, uris(rc.given)})
			rc.given = roots
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
	defer r.mu.Unlock()
	if sameRoots(r.roots, roots) {
		return
	}
	r.roots = slices.Clone(roots)
	if !r.notifyQueued && m.goOwned(r.notify) {
		r.notifyQueued = true
	}
}

// goOwned runs f in a goroutine that Close waits for, unless the Manager is
// closed (then it reports false, f not run). The check and the WaitGroup's
// Add are under m.mu, where Close marks the Manager closed before it
// waits: no Add races the Wait.
func (m *Manager) goOwned(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Go(f)
	return true
}

// ClientRootsChanged tells the servers whose roots outside a call come
// from a client of the embedder's (Options.OnListRoots) that the client's
// roots changed: for u nil, the shared connections' servers (a front with
// one client: stdio); else the servers of u's own connections (per-user
// servers). Each session before NewProtocol whose client declared roots
// listChanged is sent notifications/roots/list_changed; its server's next
// roots/list outside a call asks OnListRoots again. The notifications are sent after
// ClientRootsChanged returns (each may wait for its server), by a
// goroutine that Close waits for.
func (m *Manager) ClientRootsChanged(u *User) {
	if m.opts.OnListRoots == nil {
		return // (the host's own roots answer: they did not change)
	}
	user := ""
	if u != nil {
		user = u.ID()
	}
	r := &m.rootClients
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rc := range r.live {
		if rc.user != user || !rc.listChanged || rc.cs == nil || rc.send == nil || newEra(rc.cs) {
			continue
		}
		if rc.sending {
			rc.again = true // (sent once the one in flight is)
			continue
		}
		if m.goOwned(func() { m.sendRootsChanged(rc) }) {
			rc.sending = true
		}
	}
}

// sendRootsChanged sends rc's server notifications/roots/list_changed, and
// again as long as ClientRootsChanged asked for another meanwhile
// (rc.again). Each send is bounded by rootsNotifyWait and ends when the
// Manager closes.
func (m *Manager) sendRootsChanged(rc *rootClient) {
	r := &m.rootClients
	for {
		r.mu.Lock()
		send, cs := rc.send, rc.cs
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(m.ctx, rootsNotifyWait)
		req := &mcp.ClientRequest[*mcp.RootsListChangedParams]{Session: cs, Params: &mcp.RootsListChangedParams{}}
		if _, err := send(ctx, notificationRootsListChanged, req); err != nil {
			m.log.Debug("notifications/roots/list_changed not sent", "error", err)
		}
		cancel()
		r.mu.Lock()
		again := rc.again && m.ctx.Err() == nil
		rc.again = false
		rc.sending = again
		r.mu.Unlock()
		if !again {
			return
		}
	}
}

const notificationRootsListChanged = "notifications/roots/list_changed"

// newEra reports whether cs is a session of NewProtocol or later, where a
// server asks for no roots outside a call, and takes no
// notifications/roots/list_changed.
func newEra(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= NewProtocol
}

// rootsNotifyWait bounds the send of one notifications/roots/list_changed
// (as the go-sdk's own).
const rootsNotifyWait = 10 * time.Second

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

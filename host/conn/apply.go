package conn

import (
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// Plugins are the plugin-served parts of connections: transports that are
// not built in, headers helpers and auth schemes. Any may be nil (such
// servers then fail to connect).
type Plugins struct {
	Transports PluginTransports
	Headers    HeadersProvider
	Auth       AuthPlugins
}

// Reconfig is a new configuration for Manager.Apply.
type Reconfig struct {
	// Servers are the servers of the new configuration.
	Servers []*config.Server
	// Plugins, if set, replace the plugin parts: every server that uses a
	// plugin (a plugin transport, a headers helper or an auth scheme) is
	// connected anew through them. OPTIONAL: nil keeps the current ones.
	Plugins *Plugins
	// Drain is how long the calls in flight on a removed or replaced
	// connection may take to finish before they are cancelled (with a
	// CutError). OPTIONAL: no wait.
	Drain time.Duration
}

// Applied is what Manager.Apply did, by server name.
type Applied struct {
	// Added servers are new; Removed ones are gone.
	Added, Removed []string
	// Replaced servers changed how they are reached (command, URL,
	// credentials, …, or their plugin): a new connection serves them.
	Replaced []string
	// Updated servers changed only what applies to the next call (tool
	// timeouts, the tools filter): their connection is kept.
	Updated []string
	// Done is closed once every removed or replaced connection has drained
	// and closed.
	Done <-chan struct{}
}

// Changed reports whether anything was applied.
func (a *Applied) Changed() bool {
	return len(a.Added)+len(a.Removed)+len(a.Replaced)+len(a.Updated) > 0
}

// Apply makes the managed servers those of rc, without disturbing what did
// not change: an unchanged server keeps its connection and its session; a
// new one gets a connection (connected at once, in the background, unless
// it is disabled or connected per user); a removed or replaced one is
// retired: requests from now on go to the new connection (or, for a
// removed server, fail as for an unknown one), the calls in flight finish
// on the old one for up to rc.Drain, then are cancelled with a CutError,
// and the old connection is closed (its server stopped). The list changes
// are reported (Options.OnListChanged) once the new connections are in
// place.
func (m *Manager) Apply(rc Reconfig) *Applied {
	done := make(chan struct{})
	a := &Applied{Done: done}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		close(done)
		return a
	}
	replug := rc.Plugins != nil
	if replug {
		m.plug = rc.Plugins
	}
	conns := make(map[string]*Conn, len(rc.Servers))
	order := make([]string, 0, len(rc.Servers))
	var retired, started []*Conn
	for _, s := range rc.Servers {
		old := m.conns[s.Name]
		switch {
		case old == nil:
			a.Added = append(a.Added, s.Name)
			conns[s.Name] = m.newConn(s)
			started = append(started, conns[s.Name])
		case sameConnection(old.cfg, s) && !(replug && usesPlugins(s)):
			if !sameCalls(old.live.Load(), s) {
				a.Updated = append(a.Updated, s.Name)
			}
			old.live.Store(s)
			conns[s.Name] = old
		default:
			a.Replaced = append(a.Replaced, s.Name)
			conns[s.Name] = m.newConn(s)
			started = append(started, conns[s.Name])
			retired = append(retired, old)
		}
		order = append(order, s.Name)
	}
	for _, name := range m.order {
		if _, kept := conns[name]; !kept {
			a.Removed = append(a.Removed, name)
			retired = append(retired, m.conns[name])
		}
	}
	m.conns, m.order = conns, order
	// The per-user connections of a retired server go with it. (Under both
	// locks: no per-user connection is made for a retired server after
	// this; see Manager.conn.)
	var users []*Conn
	m.users.mu.Lock()
	for _, c := range retired {
		c.retired.Store(true)
	}
	for k, uc := range m.users.conns {
		if slices.ContainsFunc(retired, func(c *Conn) bool { return c.live == uc.live }) {
			uc.retired.Store(true)
			delete(m.users.conns, k)
			users = append(users, uc)
		}
	}
	m.users.mu.Unlock()
	m.mu.Unlock()

	// What was listed from a retired or updated server is stale (an
	// updated server's tools filter may have changed); a new one's lists
	// are new.
	for _, c := range retired {
		c.allListsChanged()
	}
	for _, c := range users {
		c.allListsChanged()
	}
	for _, name := range a.Added {
		conns[name].allListsChanged()
	}
	for _, name := range a.Updated {
		conns[name].allListsChanged()
	}

	var wg sync.WaitGroup
	for _, c := range append(retired, users...) {
		wg.Add(1)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer wg.Done()
			c.drainAndClose(rc.Drain)
		}()
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		wg.Wait()
		close(done)
	}()
	for _, c := range started {
		if c.State() == StateDisabled || (c.cfg.OAuth != nil && c.cfg.OAuth.Grant == config.GrantTokenExchange) {
			continue
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			c.Session(m.ctx) // the outcome is recorded in the connection's state
		}()
	}
	if len(a.Removed)+len(a.Replaced)+len(a.Added) > 0 {
		m.log.Info("configuration applied", "added", a.Added, "removed", a.Removed, "replaced", a.Replaced, "updated", a.Updated)
	}
	return a
}

// allListsChanged reports every list of the connection's server as changed.
func (c *Conn) allListsChanged() {
	for _, kind := range []ChangeKind{ToolsChanged, PromptsChanged, ResourcesChanged} {
		c.listChanged(kind)
	}
}

// drainAndClose waits, for up to drain, until no request is in flight on
// the retired connection c, then cancels the tool calls still in flight
// (their callers get a CutError; other requests, which are short, finish
// first) and closes it.
func (c *Conn) drainAndClose(drain time.Duration) {
	// Every slot of the concurrency cap taken means nothing is in flight
	// (the server's second session shares the cap). Requests that arrive
	// now meet ErrRetired before they send anything and go elsewhere.
	taken := 0
	timer := time.NewTimer(drain)
	defer timer.Stop()
fill:
	for taken < cap(c.calls) {
		select {
		case c.calls <- struct{}{}:
			taken++
		case <-timer.C:
			break fill
		case <-c.m.ctx.Done():
			break fill
		}
	}
	if taken < cap(c.calls) {
		cut := &CutError{Server: c.cfg.Name, Drain: drain}
		c.cut.Store(cut)
		c.log.Warn("calls still in flight at the drain deadline are cancelled", "calls", cap(c.calls)-taken, "drain", drain)
		c.inflight.cancelAll(cut)
		c.legacy.mu.Lock()
		lcs := c.legacy.members()
		c.legacy.mu.Unlock()
		for _, lc := range lcs {
			lc.inflight.cancelAll(cut)
		}
	}
	c.close()
	for range taken {
		<-c.calls
	}
}

// sameConnection reports whether two configurations of a server are reached
// the same way: everything but what applies per call (see sameCalls) and
// where it was written is equal.
func sameConnection(a, b *config.Server) bool {
	ca, cb := *a, *b
	for _, s := range []*config.Server{&ca, &cb} {
		s.ToolTimeout, s.MaxToolDuration, s.Tools = 0, 0, nil
	}
	return a.Approved == b.Approved && ca.ConfigHash() == cb.ConfigHash() && a.LegacySessionOn() == b.LegacySessionOn()
}

// sameCalls reports whether two configurations of a server that are reached
// the same way also treat calls the same (tool timeouts, tools filter).
func sameCalls(a, b *config.Server) bool {
	return a.ConfigHash() == b.ConfigHash() && a.LegacySessionOn() == b.LegacySessionOn()
}

// usesPlugins reports whether a server needs a plugin to connect.
func usesPlugins(s *config.Server) bool {
	if s.AuthScheme != "" || (s.IsRemote() && len(s.HeadersHelper) > 0) {
		return true
	}
	return s.Transport != config.TransportStdio && s.Transport != config.TransportInProcess &&
		s.Transport != config.TransportHTTP && s.Transport != config.TransportSSE
}

package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// A server's session runs at the newest protocol version both sides speak.
// A server of NewProtocol asks for input during a call only by input-required
// results: it refuses to send elicitation/create or sampling/createMessage of
// its own, so a tool written for earlier versions (one that elicits by a
// request) fails on such a session. A client of an earlier version, calling
// that server directly, gets a session of its own version, where the tool
// works. So the calls of such clients go to a second session of the server,
// opened at LegacyProtocol when first needed: the server's requests there
// reach the calling client as they would directly (see Requester).
//
// On a server's own pipe (stdio, plugin, legacy SSE) the server's requests
// during a call name no call, so they could not be told apart between
// clients: a second session serves the calls of one client at a time
// (enter). When every second session of the server has another client's
// call in flight, a further one is opened (a pool, up to legacy_pool
// sessions in all, 4 by default; for a stdio server each is a process of
// its own), and a further session with no call in flight for LegacyIdle is
// closed. Only when the bound is reached does a call wait for a session to
// be free of others' calls, as it would wait for a server that serves one
// call at a time — up to legacyWait, after which the first session serves
// it (where a tool that asks by a request of its own fails, and one that
// asks by an input-required result works). The first second session is
// kept open as long as the first session: the 2025-11-25 tasks (tasks.go)
// and the calls that carry them live there. Over streamable HTTP a
// server's request during a call comes on that call's response stream,
// tied to it, and calls of several clients share the second session at
// once.
//
// Resource subscriptions: over streamable HTTP they are the first
// session's (the server is one process, whose updates reach the session
// subscribed). On a server's own pipe each second session is a process (or
// a session of its own) that reports what its calls change only to its own
// subscriptions: so the host's subscriptions are made on each second
// session too (OnSession, with IsSecondSession, when one connects;
// SecondSessionsOnPipe for those open when one is made), and their
// resources/updated are passed on as the first session's (a subscribed
// client may then see an update twice, never none).
//
// The second session is only for calls: the registry lists what the first
// session offers, and list_changed is the first session's (a second
// session's tools list_changed discards the comparison below).
// Its tools are compared with the first session's (once per generation of
// either while they match, and again after a list_changed): while they are
// the same, a call checked against the registry is checked for the second
// session too; otherwise the caller's Verify checks each call on the second
// session.
// A server gets a second session unless configured not to (legacy_session =
// false): the second session shares no session state with the first, and
// for a stdio server it is a second process, which shares no memory either
// — what a tool call there changes, the first session, which lists, reads
// and subscribes, may not see. It is opened only when a client of an
// earlier version first calls a tool of a server of NewProtocol.

// LegacyProtocol is the protocol version of the second session.
const LegacyProtocol = "2025-11-25"

// legacy is a connection's second session, for callers of protocol
// versions before NewProtocol, and on a server's own pipe the further
// second sessions of its pool.
type legacy struct {
	mu   sync.Mutex
	c    *Conn // nil until first needed
	none bool  // the server speaks no version before NewProtocol: use the first session

	// more are the further second sessions (pipe servers only), opened
	// while c and the others were busy with other clients' calls; opening
	// counts those being connected (counted against the bound), closes
	// the closings of the pool (closeMore): a session connected across
	// one is closed rather than added. idleSince is when a further
	// session's last call left it; reaping says the reaper runs (reap).
	more      []*Conn
	opening   int
	closes    uint64
	idleSince map[*Conn]time.Time
	reaping   bool

	// epoch counts list changes (forget): a comparison that began before
	// one is not recorded.
	epoch uint64
	// What the last comparison of tool lists, per second session, since
	// then found.
	cmp map[*Conn]*comparison
	// freed is closed (and replaced) when a call leaves a second session:
	// calls waiting for one to be free of other clients' calls try again.
	freed chan struct{}
	// waiting counts those calls (SecondSession).
	waiting atomic.Int32
}

// members returns the second sessions open or being used: c and more.
// The caller holds l.mu.
func (l *legacy) members() []*Conn {
	if l.c == nil {
		return nil
	}
	return append([]*Conn{l.c}, l.more...)
}

// SecondSession reports the calls of the named server's second sessions
// (see legacy.go; summed over its pool): those in flight there, and those
// waiting for one to be free of another client's call; zeros when the
// server has none open.
func (m *Manager) SecondSession(ctx context.Context, server string) (inFlight, waiting int) {
	c := m.For(ctx, server)
	if c == nil {
		return 0, 0
	}
	c.legacy.mu.Lock()
	lcs := c.legacy.members()
	c.legacy.mu.Unlock()
	for _, lc := range lcs {
		lc.inflight.mu.Lock()
		inFlight += len(lc.inflight.calls)
		lc.inflight.mu.Unlock()
	}
	return inFlight, int(c.legacy.waiting.Load())
}

// secondKey marks the context of OnSession for a second session.
type secondKey struct{}

// IsSecondSession reports whether ctx, OnSession's, is that of a second
// session of a server on its own pipe (see legacy.go): the host renews its
// resource subscriptions there, not its log level (a second session logs
// every level: legacyConnected).
func IsSecondSession(ctx context.Context) bool {
	v, _ := ctx.Value(secondKey{}).(bool)
	return v
}

// SecondSessionsOnPipe returns the live second sessions of the named
// server (its own connection's; none for a per-user server) when it is reached
// over its own pipe (stdio, plugin, legacy SSE): those the host's resource
// subscriptions are made on too (see legacy.go).
func (m *Manager) SecondSessionsOnPipe(server string) []*mcp.ClientSession {
	c := m.Get(server)
	if c == nil || c.sharedByCalls() || c.cfg.PerUser() {
		return nil // (a per-user server's subscriptions are its users')
	}
	c.legacy.mu.Lock()
	lcs := c.legacy.members()
	c.legacy.mu.Unlock()
	var out []*mcp.ClientSession
	for _, lc := range lcs {
		lc.mu.Lock()
		if lc.session != nil {
			out = append(out, lc.session)
		}
		lc.mu.Unlock()
	}
	return out
}

// SecondSessions reports how many second sessions of the named server are
// open (connected), the first one's included (see legacy.go).
func (m *Manager) SecondSessions(ctx context.Context, server string) int {
	c := m.For(ctx, server)
	if c == nil {
		return 0
	}
	c.legacy.mu.Lock()
	lcs := c.legacy.members()
	c.legacy.mu.Unlock()
	n := 0
	for _, lc := range lcs {
		lc.mu.Lock()
		if lc.session != nil {
			n++
		}
		lc.mu.Unlock()
	}
	return n
}

// freedCh returns the channel closed when a call next leaves the second
// session.
func (l *legacy) freedCh() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.freed == nil {
		l.freed = make(chan struct{})
	}
	return l.freed
}

// left wakes the calls waiting for a second session (freedCh), once a call
// left lc; a further session of the pool left with no call in flight is
// closed after idle (reap).
func (l *legacy) left(lc *Conn) {
	l.mu.Lock()
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
	if lc != l.c && slices.Contains(l.more, lc) && lc.inflight.empty() {
		if l.idleSince == nil {
			l.idleSince = map[*Conn]time.Time{}
		}
		l.idleSince[lc] = time.Now()
		l.startReaperLocked(lc.primary)
	}
	l.mu.Unlock()
}

// comparison is what comparing the tool lists of the second session (of
// generation seen) and the first (of generation primary) found.
type comparison struct {
	seen, primary uint64
	same          bool
}

// conn returns the second session's connection, or nil.
func (l *legacy) conn() *Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c
}

// forget drops the results of the last comparisons (a list changed).
func (l *legacy) forget() {
	l.mu.Lock()
	l.epoch++
	l.cmp = nil
	l.mu.Unlock()
}

// recordLocked records what comparing lc's tools found; the caller holds
// l.mu.
func (l *legacy) recordLocked(lc *Conn, k *comparison) {
	if l.cmp == nil {
		l.cmp = map[*Conn]*comparison{}
	}
	l.cmp[lc] = k
}

// root is the server's own connection: c, or the connection c is the second
// session of.
func (c *Conn) root() *Conn {
	if c.primary != nil {
		return c.primary
	}
	return c
}

// forVersion returns the connection a call of a client of protocol version
// version may go on: the server's second session when version is before
// NewProtocol, the server's session is of NewProtocol or later and the
// server's configuration allows a second session (legacy_session, on
// unless false), and the server's requests can be put to the caller (asks:
// one that cannot be asked, a stateless client say, has no use for the
// second session), else c.
// It connects c first if needed (to learn its version); an error there is
// left for the call to meet. See also enter.
func (c *Conn) forVersion(ctx context.Context, version string, asks bool) *Conn {
	if !asks || version == "" || version >= NewProtocol || !c.cfg.LegacySessionOn() {
		return c
	}
	cs, _, err := c.sessionGen(ctx)
	if err != nil || cs.InitializeResult().ProtocolVersion < NewProtocol {
		return c
	}
	c.legacy.mu.Lock()
	if c.legacy.none {
		c.legacy.mu.Unlock()
		return c
	}
	lc := c.legacy.c
	if lc == nil {
		lc = c.newSecond(c.log.Named(LegacyProtocol))
		c.legacy.c = lc
		c.log.Info("opening a second session for clients of earlier protocol versions", "protocol", LegacyProtocol)
	}
	c.legacy.mu.Unlock()
	if _, _, err := lc.sessionGen(ctx); err != nil && !errors.Is(err, ErrClosed) {
		// The first session serves the call rather than none.
		if !errors.Is(err, errNoLegacy) {
			c.log.Warn("the second session is not available; the first serves the call", "error", err)
		}
		return c
	}
	return lc
}

// newSecond makes a second session of c (not connected), logging to log.
func (c *Conn) newSecond(log hclog.Logger) *Conn {
	return &Conn{
		m: c.m, cfg: c.cfg, log: log,
		version: LegacyProtocol, primary: c,
		calls: c.calls, // one cap for all requests to the server
		user:  c.user, plug: c.plug, live: c.live,
	}
}

// errNoLegacy ends the connect of a second session to a server that speaks
// no protocol version before NewProtocol.
var errNoLegacy = errors.New("the server speaks no protocol version before " + NewProtocol)

// enter records fc as in flight on c and returns the connection the call
// goes on and the function that removes it. On a second session whose
// server's requests name no call (see sharedByCalls), the call goes to a
// second session of the pool with no call of another client in flight (the
// server's requests could not be told apart), one opened for it if none is
// and the pool is below its bound (legacy_pool); else it waits until one
// is, within ctx and up to legacyWait, after which it goes on the first
// session. The error is ctx's, wrapped.
func (c *Conn) enter(ctx context.Context, fc *call) (*Conn, func(), error) {
	if c.primary == nil || c.sharedByCalls() {
		return c, c.inflight.add(fc), nil
	}
	p := c.primary
	l := &p.legacy
	var bound <-chan time.Time
	for {
		freed := l.freedCh() // (before trying: a call leaving after the try closes it)
		lc, remove := l.take(fc)
		if lc == nil {
			lc, remove = p.openMore(ctx, fc)
		}
		if lc != nil {
			if bound != nil {
				c.log.Debug("a call waited for another client's call on the sessions for earlier protocol versions")
			}
			return lc, func() { remove(); l.left(lc) }, nil
		}
		if bound == nil {
			t := time.NewTimer(c.m.legacyWait())
			defer t.Stop()
			bound = t.C
			l.waiting.Add(1)
			defer l.waiting.Add(-1)
		}
		select {
		case <-freed:
		case <-bound:
			// Not forever behind other clients' calls (ones that wait
			// for their users' answers, say): the first session serves
			// it, where a tool that asks by a request of its own fails.
			c.log.Info("other clients' calls are still in flight on every session for earlier protocol versions (legacy_pool): the first session serves the call", "waited", c.m.legacyWait())
			return p, p.inflight.add(fc), nil
		case <-ctx.Done():
			return c, nil, fmt.Errorf("waiting for a %s session of the server free of other clients' calls (another client's call is in flight on each: the server's requests there name no call, so a session takes one client's calls at a time, and legacy_pool bounds the sessions): %w", LegacyProtocol, context.Cause(ctx))
		}
	}
}

// take adds fc to the first second session of the pool with no call of
// another client in flight, and returns it and the function that removes
// fc; nil when there is none.
func (l *legacy) take(fc *call) (*Conn, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lc := range l.members() {
		if remove, ok := lc.inflight.addAlone(fc); ok {
			delete(l.idleSince, lc)
			return lc, remove
		}
	}
	return nil, nil
}

// openMore opens a further second session of c's pool for fc, when the
// pool is below its bound (legacy_pool), and returns it with fc in flight
// there and the function that removes fc; nil when it may not or could not
// (the call then waits for a session of the pool, see enter).
func (c *Conn) openMore(ctx context.Context, fc *call) (*Conn, func()) {
	l := &c.legacy
	l.mu.Lock()
	if l.c == nil || l.none || c.retired.Load() || 1+len(l.more)+l.opening >= c.live.Load().LegacyPoolSize() {
		l.mu.Unlock()
		return nil, nil
	}
	l.opening++
	closes := l.closes
	n := 1 + len(l.more) + l.opening // (this one's place in the pool, for the log)
	l.mu.Unlock()
	lc := c.newSecond(c.log.Named(fmt.Sprintf("%s#%d", LegacyProtocol, n)))
	remove := lc.inflight.add(fc) // (its own: no other client's call is there)
	begun := time.Now()
	_, _, err := lc.sessionGen(ctx)
	l.mu.Lock()
	l.opening--
	added := err == nil && l.closes == closes && !l.none && !c.retired.Load() && !c.m.isClosed()
	if added {
		l.more = append(l.more, lc)
	}
	l.mu.Unlock()
	if !added {
		remove()
		lc.retire()
		if err != nil && !errors.Is(err, errNoLegacy) && !errors.Is(err, ErrClosed) && ctx.Err() == nil {
			c.log.Warn("a further session for earlier protocol versions could not be opened", "error", err)
		}
		return nil, nil
	}
	c.log.Info("opened a further session for clients of earlier protocol versions (other clients' calls are in flight on the others)", "protocol", LegacyProtocol, "sessions", n, "took", time.Since(begun).Round(time.Millisecond))
	return lc, remove
}

// retire closes lc, a further second session, for good: a raw call that
// picked it before sends nothing there (enterRaw, sessionGen).
func (lc *Conn) retire() {
	lc.inflight.mu.Lock()
	lc.inflight.closed = true
	lc.inflight.mu.Unlock()
	lc.retired.Store(true)
	lc.close()
}

// startReaperLocked starts the goroutine that closes c's further second
// sessions left idle (reap), unless it runs; the caller holds l.mu.
func (l *legacy) startReaperLocked(c *Conn) {
	if l.reaping || c.m.isClosed() {
		return
	}
	l.reaping = true
	c.m.wg.Add(1)
	go c.reap()
}

// reap closes c's further second sessions that had no call in flight for
// LegacyIdle, until none is left or the Manager closes.
func (c *Conn) reap() {
	defer c.m.wg.Done()
	l := &c.legacy
	idle := c.m.legacyIdle()
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-c.m.ctx.Done():
			l.mu.Lock()
			l.reaping = false
			l.mu.Unlock()
			return
		case <-t.C:
		}
		now := time.Now()
		var idled []*Conn
		next := idle
		l.mu.Lock()
		kept := l.more[:0]
		for _, lc := range l.more {
			since, ok := l.idleSince[lc]
			switch {
			case !ok:
			case now.Sub(since) < idle:
				next = min(next, idle-now.Sub(since))
			case lc.inflight.closeIfEmpty():
				idled = append(idled, lc)
				delete(l.idleSince, lc)
				delete(l.cmp, lc)
				continue
			default:
				// A raw call took it (enterRaw): idle again when the
				// call leaves (left).
				delete(l.idleSince, lc)
			}
			kept = append(kept, lc)
		}
		clear(l.more[len(kept):])
		l.more = kept
		done := len(l.more) == 0
		if done {
			l.reaping = false
		}
		l.mu.Unlock()
		for _, lc := range idled {
			c.log.Info("closing an idle further session for earlier protocol versions", "idle", idle)
			lc.retire()
		}
		if done {
			return
		}
		t.Reset(max(next, time.Millisecond))
	}
}

// closeMore closes c's further second sessions (the first session closed
// or was reset: they are opened again when needed).
func (c *Conn) closeMore() {
	l := &c.legacy
	l.mu.Lock()
	more := l.more
	l.more = nil
	l.closes++
	for _, lc := range more {
		delete(l.idleSince, lc)
		delete(l.cmp, lc)
	}
	l.mu.Unlock()
	for _, lc := range more {
		lc.retire()
	}
}

// legacyIdle is how long, by default, a further second session is kept
// with no call in flight (Options.LegacyIdle).
const legacyIdle = time.Minute

// legacyIdle is Options.LegacyIdle, or the default.
func (m *Manager) legacyIdle() time.Duration {
	if m.opts.LegacyIdle > 0 {
		return m.opts.LegacyIdle
	}
	return legacyIdle
}

// legacyWait is how long a call waits, by default, for a second session
// busy with another client's call (enter) before the first session serves
// it (Options.LegacyWait).
const legacyWait = 3 * time.Second

// legacyWait is Options.LegacyWait, or the default.
func (m *Manager) legacyWait() time.Duration {
	if m.opts.LegacyWait > 0 {
		return m.opts.LegacyWait
	}
	return legacyWait
}

// errLegacyBusy: a raw call found the second session busy with another
// client's call (enterRaw); nothing was sent.
var errLegacyBusy = errors.New("another client's call is in flight on the second session")

// enterRaw is enter for a raw call, which must not wait: on a second
// session busy with another client's call it fails with errLegacyBusy (the
// caller then takes the go-sdk path, which waits).
func (c *Conn) enterRaw(fc *call) (func(), error) {
	if c.primary == nil || c.sharedByCalls() {
		return c.inflight.add(fc), nil
	}
	remove, ok := c.inflight.addAlone(fc)
	if !ok {
		return nil, errLegacyBusy
	}
	l := &c.primary.legacy
	return func() { remove(); l.left(c) }, nil
}

// legacyRaw returns the second session a raw call rc of a client before
// NewProtocol goes to (the relay's path, as Call's goes there by
// forVersion), or nil: when the client cannot be asked (rc.Asks), the
// server has none open, or its tools were
// last found to differ from those of the first session of generation
// rc.Gen, which the caller checked the tool on (then the go-sdk path opens
// or compares it). It never connects. With further second sessions open
// (a pool, see enter) it is the first with no other client's call in
// flight (enterRaw checks again), else the first one; a call with a 2025
// task parameter goes to the first one, where its task lives (tasks.go).
func (c *Conn) legacyRaw(rc RawCall) *Conn {
	if c.primary != nil || rc.ProtocolVersion == "" || rc.ProtocolVersion >= NewProtocol || !c.cfg.LegacySessionOn() || rc.Requester == nil || !rc.Asks {
		return nil
	}
	l := &c.legacy
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil || l.none {
		return nil
	}
	lc := l.c
	if len(l.more) > 0 && rc.Task == nil {
		client := clientOf(rc.Requester)
		for _, m := range l.members() {
			if m.inflight.freeFor(client) {
				lc = m
				break
			}
		}
	}
	if k := l.cmp[lc]; k == nil || !k.same || k.primary != rc.Gen {
		return nil
	}
	return lc
}

// legacyMayServe reports whether a second session may serve the raw call
// rc of a client before NewProtocol that can be asked, made on c (a first
// session), in its place: one is open and was last found to list the
// tools of the first session of generation rc.Gen, or it is yet to be
// opened or compared (CallRaw's openLegacyRaw, or the go-sdk path, does
// that). false when the configuration has none, the server refused one
// (it speaks only NewProtocol), its last connect failed, or it lists other
// tools: the call is then relayed on c, as for a client that cannot be
// asked, rather than every call taking the go-sdk path.
func (c *Conn) legacyMayServe(rc RawCall) bool {
	if c.primary != nil || !c.cfg.LegacySessionOn() || rc.Requester == nil || !rc.Asks {
		return false
	}
	l := &c.legacy
	l.mu.Lock()
	lc, none, cmp := l.c, l.none, l.cmp[l.c]
	l.mu.Unlock()
	switch {
	case none:
		return false
	case lc == nil:
		return true
	}
	lc.mu.Lock()
	failed := lc.session == nil && (lc.state == StateFailed || lc.state == StateNeedsAuth)
	lc.mu.Unlock()
	switch {
	case failed:
		return false
	case cmp == nil || cmp.primary != rc.Gen:
		return true
	}
	return cmp.same
}

// openLegacyRaw is legacyRaw for a caller that may wait (CallRaw): it
// opens the second session when needed (forVersion) and compares its tools
// with the first session's (listedAs), so that the first call of a client
// before NewProtocol is relayed too. nil: the call cannot go there raw.
func (c *Conn) openLegacyRaw(ctx context.Context, rc RawCall) *Conn {
	if c.primary != nil || rc.ProtocolVersion == "" || rc.ProtocolVersion >= NewProtocol || !c.cfg.LegacySessionOn() || rc.Requester == nil || !rc.Asks {
		return nil
	}
	lc := c.forVersion(ctx, rc.ProtocolVersion, true)
	if lc == c {
		return nil
	}
	cs, gen, err := lc.sessionGen(ctx)
	if err != nil || lc.listedAs(ctx, cs, gen) != rc.Gen {
		return nil
	}
	return lc
}

// listedGen is the generation of the first session whose tool listing a
// call verified against it may rely on, for a call on c's session of
// generation gen: gen itself on a first session; on a second one, the
// first session's generation whose tools it was last found to list too
// (listedAs), else 0.
func (c *Conn) listedGen(gen uint64) uint64 {
	if c.primary == nil {
		return gen
	}
	l := &c.primary.legacy
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := l.cmp[c]; k != nil && k.same && k.seen == gen {
		return k.primary
	}
	return 0
}

// sharedByCalls reports whether the server's own requests during a call
// reach c tied to that call (over streamable HTTP, on the call's response
// stream), so that calls of several clients may be in flight at once.
func (c *Conn) sharedByCalls() bool { return c.cfg.Transport == config.TransportHTTP }

// legacyConnected checks a new second session: a server that answered with
// NewProtocol or later offers nothing the first session does not, and the
// session is closed (false); the server's calls then all go to the first
// session. A server that logs is asked for every level: which of its
// messages a caller sees is for the caller's own level to decide (the
// gateway's downstream sessions filter by theirs).
func (c *Conn) legacyConnected(ctx context.Context, cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	if ir.ProtocolVersion >= NewProtocol {
		c.noLegacy("the server answered with " + ir.ProtocolVersion)
		return false
	}
	if ir.Capabilities != nil && ir.Capabilities.Logging != nil {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			c.log.Debug("setting the log level failed", "error", err)
		}
	}
	return true
}

// noLegacy records, on the second session c, that the server speaks no
// protocol version before NewProtocol (why): its first session serves every
// client from now on.
func (c *Conn) noLegacy(why string) {
	c.log.Info("the server speaks no earlier protocol version; its first session serves every client", "reason", why)
	p := c.primary
	p.legacy.mu.Lock()
	p.legacy.none = true
	p.legacy.mu.Unlock()
}

// listedAs returns the generation of the server's first session whose tools
// the second session cs (of generation gen) lists as well, or 0 if they
// differ or cannot be compared: a call verified against the registry's
// listing of that generation is then verified for cs too. What a
// comparison finds holds until either session reconnects or a list changes;
// a list change during a comparison discards its result (0).
func (c *Conn) listedAs(ctx context.Context, cs *mcp.ClientSession, gen uint64) uint64 {
	p := c.primary
	p.mu.Lock()
	pcs, pgen := p.session, p.gen
	p.mu.Unlock()
	if pcs == nil {
		return 0
	}
	l := &p.legacy
	l.mu.Lock()
	if k := l.cmp[c]; k != nil && k.seen == gen && k.primary == pgen {
		l.mu.Unlock()
		if k.same {
			return pgen
		}
		return 0
	}
	epoch := l.epoch
	l.mu.Unlock()
	a, err := toolsJSON(ctx, pcs)
	if err != nil {
		return 0
	}
	b, err := toolsJSON(ctx, cs)
	if err != nil {
		return 0 // not recorded: the next call compares again
	}
	same := bytes.Equal(a, b)
	l.mu.Lock()
	recorded := l.epoch == epoch
	if recorded {
		l.recordLocked(c, &comparison{seen: gen, primary: pgen, same: same})
	}
	l.mu.Unlock()
	switch {
	case !recorded:
		return 0 // a list changed meanwhile: what was compared may be gone
	case !same:
		c.log.Warn("the second session lists other tools than the first: each call is checked on it")
		return 0
	}
	return pgen
}

// toolsJSON is a session's tool list, by name, as JSON.
func toolsJSON(ctx context.Context, cs *mcp.ClientSession) ([]byte, error) {
	var tools []*mcp.Tool
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Tools != nil {
		for t, err := range cs.Tools(ListingTools(ctx), nil) { // (execution kept, as the first session's: execution.go)
			if err != nil {
				return nil, err
			}
			tools = append(tools, t)
		}
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return json.Marshal(tools)
}

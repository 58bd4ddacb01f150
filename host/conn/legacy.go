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
// On a server's own pipe (stdio, plugin, legacy SSE) a call goes there only
// while no call of another client is in flight on it (enter): the server's
// requests there name no call, so they could not be told apart; a call of
// another client waits for the session to be free of others' calls, as it
// would wait for a server that serves one call at a time — up to
// legacyWait, after which the first session serves it (where a tool that
// asks by a request of its own fails, and one that asks by an
// input-required result works). Over streamable HTTP a server's request during a call comes on
// that call's response stream, tied to it, and calls of several clients
// share the second session at once.
//
// The second session is only for calls: the registry lists what the first
// session offers, subscriptions and list_changed are the first session's.
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
// versions before NewProtocol.
type legacy struct {
	mu   sync.Mutex
	c    *Conn // nil until first needed
	none bool  // the server speaks no version before NewProtocol: use the first session

	// epoch counts list changes (forget): a comparison that began before
	// one is not recorded.
	epoch uint64
	// What the last comparison of tool lists since then found; nil: none.
	cmp *comparison
	// freed is closed (and replaced) when a call leaves the second session:
	// calls waiting for it to be free of other clients' calls try again.
	freed chan struct{}
	// waiting counts those calls (SecondSession).
	waiting atomic.Int32
}

// SecondSession reports the calls of the named server's second session
// (see legacy.go): those in flight there, and those waiting for it to be
// free of another client's call; zeros when the server has none open.
func (m *Manager) SecondSession(ctx context.Context, server string) (inFlight, waiting int) {
	c := m.For(ctx, server)
	if c == nil {
		return 0, 0
	}
	lc := c.legacy.conn()
	if lc == nil {
		return 0, 0
	}
	lc.inflight.mu.Lock()
	inFlight = len(lc.inflight.calls)
	lc.inflight.mu.Unlock()
	return inFlight, int(c.legacy.waiting.Load())
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

// left wakes the calls waiting for the second session (freedCh).
func (l *legacy) left() {
	l.mu.Lock()
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
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

// forget drops the result of the last comparison (a list changed).
func (l *legacy) forget() {
	l.mu.Lock()
	l.epoch++
	l.cmp = nil
	l.mu.Unlock()
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
		lc = &Conn{
			m: c.m, cfg: c.cfg, log: c.log.Named(LegacyProtocol),
			version: LegacyProtocol, primary: c,
			calls: c.calls, // one cap for all requests to the server
			user:  c.user, plug: c.plug, live: c.live,
		}
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

// errNoLegacy ends the connect of a second session to a server that speaks
// no protocol version before NewProtocol.
var errNoLegacy = errors.New("the server speaks no protocol version before " + NewProtocol)

// enter records fc as in flight on c and returns the connection the call
// goes on and the function that removes it. On a second session whose
// server's requests name no call (see sharedByCalls), a call of another
// client in flight there makes it wait until none is (the server's
// requests could not be told apart), within ctx and up to legacyWait, after
// which it goes on the first session. The error is ctx's, wrapped.
func (c *Conn) enter(ctx context.Context, fc *call) (*Conn, func(), error) {
	if c.primary == nil || c.sharedByCalls() {
		return c, c.inflight.add(fc), nil
	}
	l := &c.primary.legacy
	var bound <-chan time.Time
	for {
		freed := l.freedCh() // (before trying: a call leaving after the try closes it)
		if remove, ok := c.inflight.addAlone(fc); ok {
			if bound != nil {
				c.log.Debug("a call waited for another client's call on the session for earlier protocol versions")
			}
			return c, func() { remove(); l.left() }, nil
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
			// Not forever behind another client's call (one that waits
			// for its user's answer, say): the first session serves it,
			// where a tool that asks by a request of its own fails.
			c.log.Info("another client's call is still in flight on the session for earlier protocol versions: the first session serves the call", "waited", c.m.legacyWait())
			p := c.primary
			return p, p.inflight.add(fc), nil
		case <-ctx.Done():
			return c, nil, fmt.Errorf("waiting for the server's %s session, where another client's call is in flight (the server's requests there name no call, so its calls are taken one client at a time): %w", LegacyProtocol, context.Cause(ctx))
		}
	}
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
	return func() { remove(); l.left() }, nil
}

// legacyRaw returns the second session a raw call rc of a client before
// NewProtocol goes to (the relay's path, as Call's goes there by
// forVersion), or nil: when the client cannot be asked (rc.Asks), the
// server has none open, or its tools were
// last found to differ from those of the first session of generation
// rc.Gen, which the caller checked the tool on (then the go-sdk path opens
// or compares it). It never connects.
func (c *Conn) legacyRaw(rc RawCall) *Conn {
	if c.primary != nil || rc.ProtocolVersion == "" || rc.ProtocolVersion >= NewProtocol || !c.cfg.LegacySessionOn() || rc.Requester == nil || !rc.Asks {
		return nil
	}
	l := &c.legacy
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil || l.none || l.cmp == nil || !l.cmp.same || l.cmp.primary != rc.Gen {
		return nil
	}
	return l.c
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
	lc, none, cmp := l.c, l.none, l.cmp
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
	if k := l.cmp; k != nil && k.same && k.seen == gen {
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
	if k := l.cmp; k != nil && k.seen == gen && k.primary == pgen {
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
		l.cmp = &comparison{seen: gen, primary: pgen, same: same}
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

package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
)

// Conn is one server's connection. Its methods are safe for concurrent use.
type Conn struct {
	m   *Manager
	cfg *config.Server
	log hclog.Logger

	// version is the protocol version asked for at connect ("" the
	// latest); primary, for the second session of a server (legacy.go), is
	// the server's own connection.
	version string
	primary *Conn

	calls chan struct{} // semaphore: requests in flight

	inflight     inflight           // calls in flight
	toolsLists   toolsLists         // the go-sdk client's tools/list awaiting their responses (execution.go)
	routes       routes             // of notifications read, not yet handled (notes.go)
	taskNotes    taskNotes          // where tasks' status notifications go (tasknotes.go)
	elicitations elicitationWaiters // -32042 URL elicitations awaited

	mu             sync.Mutex
	state          State
	err            error
	session        *mcp.ClientSession
	gen            uint64        // generation of session: one more for every connect
	raw            rawStarter    // the session's raw lane (nil: none)
	connecting     chan struct{} // non-nil while a connect is in flight
	stderr         *tailBuffer
	pid            int
	failures       int
	retryAt        time.Time
	needsAuthUntil time.Time
	terminalErrs   int
	reconnecting   bool
	connectedAt    time.Time
	earlyEnds      int            // consecutive sessions that ended soon after they began
	oauth          *hauth.Handler // built-in OAuth client, made on first use

	legacy legacy // the second session for clients of earlier versions (legacy.go)

	// user, for a per-user connection (users.go), is its gateway user; nil
	// for a server's own connection.
	user *userConn

	// plug serves the connection's plugin parts: the Manager's when the
	// connection was made (a reload that changes the plugins replaces the
	// connections that use them; see apply.go).
	plug *Plugins
	// live is the server's configuration as last applied, shared by the
	// server's own, second and per-user connections: cfg with what a reload
	// may change without a new connection (tool timeouts, the tools
	// filter).
	live *atomic.Pointer[config.Server]
	// retired is set when the connection was closed for good (a reload
	// removed or replaced it, or a per-user connection was evicted): it
	// never connects again, and a request that meets it before sending
	// goes to the server's current connection.
	retired atomic.Bool
	// cut is set when a retired connection's calls still in flight at the
	// drain deadline are cancelled (apply.go; each call's own cancel,
	// see call.cancel).
	cut atomic.Pointer[CutError]

	// tasks: the server declared capabilities.tasks (2025-11-25's
	// experimental tasks) in its last initialize result (tasks.go).
	tasks atomic.Bool
}

// acquire takes a slot of the server's concurrency cap, waiting for one if needed.
func (c *Conn) acquire(ctx context.Context) (release func(), err error) {
	select {
	case c.calls <- struct{}{}:
		return func() { <-c.calls }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Config returns the server's configuration as last applied (see
// Manager.Apply).
func (c *Conn) Config() *config.Server { return c.live.Load() }

// State returns the current state.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Status returns a snapshot of the connection.
func (c *Conn) Status() Status {
	var legacyPID int
	if lc := c.legacy.conn(); lc != nil {
		lc.mu.Lock()
		if lc.session != nil {
			legacyPID = lc.pid
		}
		lc.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{
		Name: c.cfg.Name, Transport: c.cfg.Transport,
		Scope: c.cfg.Origin.Scope.String(), File: c.cfg.Origin.File,
		State: c.state, PID: c.pid, LegacyPID: legacyPID,
	}
	// Both may carry what the server printed or answered: scrubbed here, so
	// every display of a status (servers, --json, the serve banner) is.
	if c.err != nil && c.state != StateConnected {
		st.Error = redact.String(c.err.Error())
		if te := (*ConnectTimeoutError)(nil); errors.As(c.err, &te) {
			st.Hint = te.Hint()
		}
	}
	if c.stderr != nil && c.state != StateConnected {
		st.Stderr = shownStderr(c.stderr)
	}
	if c.session != nil {
		if ir := c.session.InitializeResult(); ir != nil {
			st.Server = ir.ServerInfo
			st.Instructions = ir.Instructions
		}
	}
	return st
}

// Session returns the live session, connecting if needed. Concurrent callers
// share one connection attempt.
func (c *Conn) Session(ctx context.Context) (*mcp.ClientSession, error) {
	cs, _, err := c.sessionGen(ctx)
	return cs, err
}

// rawLane returns the raw lane of cs, nil when it has none or cs is no
// longer the live session.
func (c *Conn) rawLane(cs *mcp.ClientSession) rawStarter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != cs {
		return nil
	}
	return c.raw
}

// sessionGen is Session, with the session's generation.
func (c *Conn) sessionGen(ctx context.Context) (*mcp.ClientSession, uint64, error) {
	for {
		c.mu.Lock()
		if c.m.isClosed() {
			c.mu.Unlock()
			return nil, 0, ErrClosed
		}
		if c.root().retired.Load() || c.retired.Load() {
			c.mu.Unlock()
			return nil, 0, ErrRetired
		}
		switch {
		case c.state == StateDisabled:
			err := c.err
			c.mu.Unlock()
			return nil, 0, err
		case c.session != nil:
			cs, gen := c.session, c.gen
			c.mu.Unlock()
			return cs, gen, nil
		case c.connecting != nil:
			ch := c.connecting
			c.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, 0, ctx.Err()
			}
		case c.state == StateNeedsAuth && time.Now().Before(c.needsAuthUntil):
			err := c.err
			c.mu.Unlock()
			return nil, 0, err
		case c.state == StateFailed && time.Now().Before(c.retryAt):
			err := fmt.Errorf("%w (next attempt in %s)", c.err, time.Until(c.retryAt).Round(time.Second))
			c.mu.Unlock()
			return nil, 0, err
		}
		ch := make(chan struct{})
		c.connecting = ch
		c.state = StatePending
		reconnect := c.gen > 0
		c.mu.Unlock()

		cs, raw, err := c.connect(ctx)
		if err == nil && reconnect && c.primary == nil {
			c.m.opts.Telemetry.RecordReconnect(ctx, c.cfg.Name)
		}
		if err == nil && reconnect {
			// A restarted server may offer other tools, prompts and
			// resources without saying so: whatever was listed before is
			// stale. Told before the session is published, so no one
			// uses the new session with the old lists.
			for _, kind := range []ChangeKind{ToolsChanged, PromptsChanged, ResourcesChanged} {
				c.listChanged(kind)
			}
		}

		c.mu.Lock()
		c.connecting = nil
		close(ch)
		if err != nil {
			c.recordFailureLocked(err)
			c.mu.Unlock()
			return nil, 0, err
		}
		if c.root().retired.Load() || c.retired.Load() {
			// Retired while connecting: the session is closed, not kept
			// on a connection no one holds.
			c.mu.Unlock()
			cs.Close()
			return nil, 0, ErrRetired
		}
		c.gen++
		gen := c.gen
		c.session, c.raw, c.state, c.err = cs, raw, StateConnected, nil
		c.taskNotes.reset() // (the old session's tasks are gone)
		c.connectedAt = time.Now()
		c.failures, c.terminalErrs = 0, 0
		c.mu.Unlock()
		c.m.wg.Add(1)
		go c.watch(cs)
		switch {
		case c.m.opts.OnSession == nil:
		case c.primary == nil:
			c.m.wg.Add(1)
			go func() {
				defer c.m.wg.Done()
				ctx := c.m.ctx
				if c.user != nil {
					ctx = WithUser(ctx, c.user.user())
				}
				c.m.opts.OnSession(ctx, c.cfg.Name, cs)
			}()
		case !c.sharedByCalls() && c.user == nil:
			// A second session on the server's own pipe: its process
			// reports what its calls change only to its own
			// subscriptions (see legacy.go), made before its first call.
			c.m.opts.OnSession(context.WithValue(c.m.ctx, secondKey{}, true), c.cfg.Name, cs)
		}
		return cs, gen, nil
	}
}

func (c *Conn) recordFailureLocked(err error) {
	c.err = err
	if errors.Is(err, ErrNeedsAuth) {
		c.state = StateNeedsAuth
		c.needsAuthUntil = time.Now().Add(NeedsAuthCacheTTL)
		return
	}
	c.state = StateFailed
	c.failures++
	c.retryAt = time.Now().Add(Backoff(c.failures))
}

// Backoff returns the delay before attempt n+1 after n consecutive failures:
// 1 s doubling up to 30 s.
func Backoff(n int) time.Duration {
	d := BackoffInitial
	for i := 1; i < n && d < BackoffMax; i++ {
		d *= 2
	}
	return min(d, BackoffMax)
}

// watch waits for a session to end. An end the host did not ask for moves the
// server back to pending (reconnect on next use); a remote server is also
// reconnected in the background with backoff, up to ReconnectAttempts times.
func (c *Conn) watch(cs *mcp.ClientSession) {
	defer c.m.wg.Done()
	werr := cs.Wait()
	c.mu.Lock()
	if c.session != cs { // closed on purpose, or already replaced
		c.mu.Unlock()
		return
	}
	c.session, c.raw = nil, nil
	if werr == nil || errors.Is(werr, io.EOF) {
		werr = errors.New("connection closed by the server")
	}
	c.endedLocked(c.describeLocked(fmt.Errorf("%s disconnected: %w", c.cfg.Name, werr)))
	c.log.Warn("disconnected", "error", werr)
	// A second session (legacy.go) is opened again when next needed.
	remote := c.cfg.IsRemote() && c.primary == nil
	if remote && !c.reconnecting && !c.m.isClosed() {
		c.reconnecting = true
		c.m.wg.Add(1)
		go c.reconnectLoop()
	}
	c.mu.Unlock()
}

func (c *Conn) reconnectLoop() {
	defer c.m.wg.Done()
	defer func() {
		c.mu.Lock()
		c.reconnecting = false
		c.mu.Unlock()
	}()
	for attempt := 1; attempt <= ReconnectAttempts; attempt++ {
		select {
		case <-c.m.ctx.Done():
			return
		case <-time.After(Backoff(attempt)):
		}
		c.mu.Lock()
		c.retryAt = time.Time{} // the loop paces itself
		c.mu.Unlock()
		if _, err := c.Session(c.m.ctx); err == nil || errors.Is(err, ErrNeedsAuth) || errors.Is(err, ErrClosed) {
			return
		}
	}
	c.log.Warn("giving up reconnecting", "attempts", ReconnectAttempts)
}

func (c *Conn) noteSuccess() {
	c.mu.Lock()
	c.terminalErrs = 0
	c.mu.Unlock()
}

// noteTerminal counts a terminal transport error; TerminalErrorLimit in a row
// close the session so the next use reconnects.
func (c *Conn) noteTerminal(cs *mcp.ClientSession, err error) {
	c.mu.Lock()
	c.terminalErrs++
	n := c.terminalErrs
	c.mu.Unlock()
	if n >= TerminalErrorLimit {
		c.log.Warn("closing connection after consecutive terminal errors", "count", n, "error", err)
		c.drop(cs, err)
	}
}

// drop closes a session (if it is still the current one) so the next use reconnects.
func (c *Conn) drop(cs *mcp.ClientSession, cause error) {
	c.mu.Lock()
	if c.session != cs {
		c.mu.Unlock()
		return
	}
	c.session, c.raw = nil, nil
	c.terminalErrs = 0
	c.endedLocked(cause)
	c.mu.Unlock()
	cs.Close()
}

// StableAfter is how long a session must last before its end no longer
// counts toward the backoff.
const StableAfter = 30 * time.Second

// endedLocked records a session that ended without being asked to. The
// first end is reconnected on next use at once; a server whose sessions keep
// ending soon after they begin (a crash loop) is reconnected only after a
// backoff (1 s doubling to 30 s), so it is not respawned on every call.
func (c *Conn) endedLocked(cause error) {
	if time.Since(c.connectedAt) > StableAfter {
		c.earlyEnds = 0
	}
	c.earlyEnds++
	c.err = cause
	c.state = StatePending
	if c.earlyEnds > 1 {
		c.state = StateFailed
		c.retryAt = time.Now().Add(Backoff(c.earlyEnds - 1))
	}
}

// Reset closes the current session, if any, so that the next use reconnects.
func (c *Conn) Reset() {
	c.mu.Lock()
	cs := c.session
	c.session, c.raw = nil, nil
	if cs != nil {
		c.state, c.err = StatePending, errors.New("reset")
	}
	c.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	c.closeMore() // (opened again when needed)
	if lc := c.legacy.conn(); lc != nil {
		lc.Reset()
		// What kept the second session from connecting (a needed login,
		// a backoff) was the server's: it is tried again with the first.
		lc.mu.Lock()
		if lc.session == nil {
			lc.state, lc.needsAuthUntil, lc.retryAt = StatePending, time.Time{}, time.Time{}
		}
		lc.mu.Unlock()
	}
}

func (c *Conn) close() {
	c.mu.Lock()
	cs := c.session
	c.session, c.raw = nil, nil
	if c.state != StateDisabled {
		c.state = StatePending
	}
	c.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	c.closeMore()
	if lc := c.legacy.conn(); lc != nil {
		lc.close()
	}
}

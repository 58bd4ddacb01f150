package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
)

// Reconnection and failure policy.
const (
	BackoffInitial     = 1 * time.Second
	BackoffMax         = 30 * time.Second
	ReconnectAttempts  = 5
	TerminalErrorLimit = 3
	// DefaultMaxConcurrentCalls is the default cap on requests in flight to one server.
	DefaultMaxConcurrentCalls = 64
	NeedsAuthCacheTTL         = 15 * time.Minute
	// DefaultToolTimeout is config.DefaultToolTimeout, kept here for callers of this package.
	DefaultToolTimeout  = config.DefaultToolTimeout
	defaultCloseTimeout = 2 * time.Second
)

// Sentinel errors returned by Session and Do.
var (
	ErrDisabled    = errors.New("server is disabled")
	ErrBlocked     = errors.New("blocked by policy")
	ErrNotApproved = errors.New("project server is not approved")
	ErrNeedsAuth   = errors.New("server needs authentication")
	ErrUnknown     = errors.New("unknown server")
	ErrClosed      = errors.New("connection manager is closed")
)

// ChangeKind says which list a server reported as changed.
type ChangeKind int

// List kinds for Options.OnListChanged.
const (
	ToolsChanged ChangeKind = iota
	ResourcesChanged
	PromptsChanged
)

// Options configures a Manager. Nil options mean defaults.
type Options struct {
	// Logger receives connection events. OPTIONAL.
	Logger hclog.Logger
	// LookupEnv reads the host environment for stdio servers' inherited
	// variables. OPTIONAL: defaults to os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ClientInfo names the host to servers. OPTIONAL.
	ClientInfo *mcp.Implementation
	// ConcurrencyLocal and ConcurrencyRemote bound concurrent connects of
	// stdio and remote servers. OPTIONAL: 3 and 20.
	ConcurrencyLocal, ConcurrencyRemote int
	// MaxMessageBytes caps one message from a server (a stdio line or an SSE
	// event). OPTIONAL: 4 MiB.
	MaxMessageBytes int
	// MaxConcurrentCalls caps the requests in flight to one server; further
	// callers wait. OPTIONAL: DefaultMaxConcurrentCalls.
	MaxConcurrentCalls int
	// OnListChanged is called when a server reports that its tools,
	// resources or prompts changed (from a connection's goroutine), and for
	// all three when a server is reconnected (a restarted server may offer
	// different lists without saying so), before the new session is used.
	// It must not block on the server's connection. OPTIONAL.
	OnListChanged func(server string, kind ChangeKind)
	// OnElicit answers elicitation requests from servers. OPTIONAL: when nil the
	// host does not advertise elicitation.
	OnElicit func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// OnProcessStart, if set, is told each stdio server's process id when it starts.
	OnProcessStart func(server string, pid int)
	// Plugins serves the transports that are not built in. OPTIONAL: without
	// it, such servers fail to connect.
	Plugins PluginTransports
	// Auth serves the auth schemes of auth "SCHEME" blocks. OPTIONAL: without
	// it, such servers fail to connect.
	Auth AuthPlugins
	// TokenStore keeps the tokens of servers with an oauth block. OPTIONAL:
	// without it tokens live in memory only.
	TokenStore hauth.Store
	// Headers supplies dynamic headers for servers with a headers_helper.
	// OPTIONAL: without it, such servers fail to connect.
	Headers HeadersProvider
}

// Manager owns one connection per configured server. Its methods are safe for
// concurrent use.
type Manager struct {
	opts      Options
	log       hclog.Logger
	semLocal  chan struct{}
	semRemote chan struct{}
	progress  sync.Map // progress token (string) -> func(*mcp.ProgressNotificationParams)
	tokens    atomic.Uint64

	ctx    context.Context // cancelled by Close; parents background reconnects
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[string]*Conn
	order  []string
	closed bool
}

// NewManager returns a manager for the given servers. It connects nothing until asked.
func NewManager(servers []*config.Server, opts *Options) *Manager {
	m := &Manager{conns: map[string]*Conn{}}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.Logger == nil {
		m.opts.Logger = hclog.NewNullLogger()
	}
	if m.opts.LookupEnv == nil {
		m.opts.LookupEnv = os.LookupEnv
	}
	if m.opts.ClientInfo == nil {
		m.opts.ClientInfo = &mcp.Implementation{Name: "mcphost", Version: "dev"}
	}
	if m.opts.ConcurrencyLocal <= 0 {
		m.opts.ConcurrencyLocal = config.DefaultConcurrencyLocal
	}
	if m.opts.ConcurrencyRemote <= 0 {
		m.opts.ConcurrencyRemote = config.DefaultConcurrencyRemote
	}
	if m.opts.MaxMessageBytes <= 0 {
		m.opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if m.opts.MaxConcurrentCalls <= 0 {
		m.opts.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	m.log = m.opts.Logger
	m.semLocal = make(chan struct{}, m.opts.ConcurrencyLocal)
	m.semRemote = make(chan struct{}, m.opts.ConcurrencyRemote)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, s := range servers {
		c := &Conn{m: m, cfg: s, log: m.log.Named(s.Name), calls: make(chan struct{}, m.opts.MaxConcurrentCalls)}
		switch {
		case s.BlockedBy != "":
			c.state, c.err = StateDisabled, fmt.Errorf("%w: %s", ErrBlocked, s.BlockedBy)
		case s.Disabled:
			c.state, c.err = StateDisabled, ErrDisabled
		case !s.Approved:
			c.state, c.err = StateDisabled, fmt.Errorf("%w: run `mcphost config approve %s` to review and approve it", ErrNotApproved, s.Name)
		}
		m.conns[s.Name] = c
		m.order = append(m.order, s.Name)
	}
	return m
}

// Names returns the managed servers' names in configuration order.
func (m *Manager) Names() []string { return append([]string(nil), m.order...) }

// Get returns the connection for a server, or nil.
func (m *Manager) Get(name string) *Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.conns[name]
}

// ConnectAll connects every enabled server concurrently (bounded by the local
// and remote limits) and waits for all of them. A failure is recorded in that
// server's state and never stops the others. progress, if set, is called as
// each server settles.
func (m *Manager) ConnectAll(ctx context.Context, progress func(name string, st Status)) {
	var wg sync.WaitGroup
	for _, name := range m.order {
		c := m.Get(name)
		if c.State() == StateDisabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Session(ctx) // the outcome is recorded in the connection's state
			if progress != nil {
				progress(name, c.Status())
			}
		}()
	}
	wg.Wait()
}

// Session returns a connected session for the named server, connecting first if needed.
func (m *Manager) Session(ctx context.Context, name string) (*mcp.ClientSession, error) {
	c := m.Get(name)
	if c == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	return c.Session(ctx)
}

// Do runs fn with a connected session of the named server. If the server
// reports that the session expired, the connection is re-established and fn is
// retried once. Consecutive terminal transport errors close the connection so
// the next use reconnects.
func (m *Manager) Do(ctx context.Context, name string, fn func(context.Context, *mcp.ClientSession) error) error {
	return m.do(ctx, name, func(ctx context.Context, cs *mcp.ClientSession, _ uint64) error { return fn(ctx, cs) })
}

// do is Do, telling fn the generation of the session it runs on.
func (m *Manager) do(ctx context.Context, name string, fn func(context.Context, *mcp.ClientSession, uint64) error) error {
	c := m.Get(name)
	if c == nil {
		return fmt.Errorf("%w %q", ErrUnknown, name)
	}
	release, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	for attempt := 0; ; attempt++ {
		cs, gen, err := c.sessionGen(ctx)
		if err != nil {
			return err
		}
		err = fn(ctx, cs, gen)
		if err == nil {
			c.noteSuccess()
			return nil
		}
		if errors.Is(err, mcp.ErrSessionMissing) && attempt == 0 {
			// The server forgot the session (a restart, an idle timeout):
			// not a crash, so it does not count toward the backoff.
			c.log.Info("session expired; reconnecting")
			c.mu.Lock()
			if c.session == cs {
				c.session, c.raw, c.state, c.err = nil, nil, StatePending, err
			}
			c.mu.Unlock()
			cs.Close()
			continue
		}
		if errors.Is(err, hauth.ErrLoginRequired) {
			// The server accepted the connection but wants a login for this
			// request: the server shows its authenticate tool until then.
			err = fmt.Errorf("%w: run `mcphost auth login %s` or call the mcp__%s__authenticate tool", ErrNeedsAuth, c.cfg.Name, c.cfg.Name)
			c.mu.Lock()
			if c.session == cs {
				c.session, c.raw = nil, nil
				c.recordFailureLocked(err)
			}
			c.mu.Unlock()
			cs.Close()
			if m.opts.OnListChanged != nil {
				m.opts.OnListChanged(name, ToolsChanged) // the authenticate tool replaces them
			}
			return err
		}
		switch {
		case attempt == 0 && neverSent(err):
			// The session was already dead when the request went out (its
			// end had not been noticed yet): nothing reached the server, so
			// it is safe to reconnect and send it once more.
			c.drop(cs, err)
			continue
		case connectionGone(err):
			// The session is dead (a crashed server, say): forget it now, so
			// the next use reconnects instead of meeting the same corpse.
			c.drop(cs, err)
		case IsTerminal(err):
			c.noteTerminal(cs, err)
		}
		return err
	}
}

// CallTool calls a tool on the named server. onProgress, if set, receives the
// server's progress notifications for this call.
func (m *Manager) CallTool(ctx context.Context, server string, params *mcp.CallToolParams, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	return m.Call(ctx, server, params, &CallOptions{OnProgress: onProgress})
}

// CallOptions configures Manager.Call. Nil means defaults.
type CallOptions struct {
	// OnProgress receives the server's progress notifications for this
	// call. OPTIONAL.
	OnProgress func(*mcp.ProgressNotificationParams)
	// Verify runs on the session the call is about to be sent on, with that
	// session's generation (see Generation); an error ends the call with
	// nothing sent. It runs again if the call is retried on a new session.
	// OPTIONAL.
	Verify func(ctx context.Context, cs *mcp.ClientSession, gen uint64) error
}

// Call calls a tool on the named server, as configured by opts.
func (m *Manager) Call(ctx context.Context, server string, params *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	if o.OnProgress != nil {
		token := fmt.Sprintf("mcphost-%d", m.tokens.Add(1))
		params.SetProgressToken(token)
		m.progress.Store(token, o.OnProgress)
		defer m.progress.Delete(token)
	}
	var res *mcp.CallToolResult
	err := m.do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession, gen uint64) error {
		if o.Verify != nil {
			if err := o.Verify(ctx, cs, gen); err != nil {
				return &verifyError{err}
			}
		}
		var err error
		res, err = cs.CallTool(ctx, params)
		return err
	})
	if ve := (*verifyError)(nil); errors.As(err, &ve) {
		return nil, ve.err
	}
	return res, err
}

// verifyError carries a Verify failure through Do untouched (it is not a
// transport error, whatever it wraps).
type verifyError struct{ err error }

func (e *verifyError) Error() string { return e.err.Error() }

// Generation returns the generation of the server's current (or last)
// session: 0 before the first connect, then one more for every session.
// A call verified under one generation and sent on a session of another was
// sent to a server that may have restarted in between.
func (m *Manager) Generation(server string) uint64 {
	c := m.Get(server)
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// CallRaw is the relay path of a tools/call: for a stdio server whose session
// negotiated protocolVersion, it sends the call with the raw JSON arguments
// and returns the server's raw JSON-RPC response line, decoding nothing.
// handled is false (and nothing was sent) when the server cannot take the raw
// path; the caller then uses CallTool. It is also false when the session is
// not of generation gen (the server was reconnected since the caller checked
// the tool). Connection failures are handled as in Do.
func (m *Manager) CallRaw(ctx context.Context, server, tool string, args []byte, protocolVersion string, gen uint64) (resp []byte, handled bool, err error) {
	c := m.Get(server)
	if c == nil {
		return nil, false, nil
	}
	release, err := c.acquire(ctx)
	if err != nil {
		return nil, true, err
	}
	defer release()
	cs, csGen, err := c.sessionGen(ctx)
	if err != nil {
		return nil, true, err
	}
	c.mu.Lock()
	raw := c.raw
	live := c.session == cs
	c.mu.Unlock()
	if raw == nil || !live || csGen != gen || cs.InitializeResult().ProtocolVersion != protocolVersion {
		return nil, false, nil
	}
	resp, err = raw.CallRaw(ctx, tool, args)
	if err != nil {
		if connectionGone(err) {
			c.drop(cs, err)
		}
		return nil, true, err
	}
	c.noteSuccess()
	return resp, true, nil
}

// Status reports every server's state in configuration order.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, m.Get(name).Status())
	}
	return out
}

// Close closes every connection (stopping stdio servers) and waits for
// background work to end.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	conns := make([]*Conn, 0, len(m.conns))
	for _, c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.close() }()
	}
	wg.Wait()
	m.wg.Wait()
	return nil
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Status is a snapshot of one connection.
type Status struct {
	Name      string              `json:"name"`
	Transport string              `json:"transport"`
	Scope     string              `json:"scope"`
	File      string              `json:"file,omitempty"`
	State     State               `json:"state"`
	Error     string              `json:"error,omitempty"`
	Stderr    string              `json:"stderr,omitempty"`
	PID       int                 `json:"pid,omitempty"`
	Server    *mcp.Implementation `json:"server_info,omitempty"`
	// Instructions are the server's instructions, sanitized and capped by the registry.
	Instructions string `json:"-"`
}

// Conn is one server's connection. Its methods are safe for concurrent use.
type Conn struct {
	m   *Manager
	cfg *config.Server
	log hclog.Logger

	calls chan struct{} // semaphore: requests in flight

	mu             sync.Mutex
	state          State
	err            error
	session        *mcp.ClientSession
	gen            uint64        // generation of session: one more for every connect
	raw            *lineConn     // the session's connection, for stdio servers
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

// Config returns the server's configuration.
func (c *Conn) Config() *config.Server { return c.cfg }

// State returns the current state.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Status returns a snapshot of the connection.
func (c *Conn) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{
		Name: c.cfg.Name, Transport: c.cfg.Transport,
		Scope: c.cfg.Origin.Scope.String(), File: c.cfg.Origin.File,
		State: c.state, PID: c.pid,
	}
	// Both may carry what the server printed or answered: scrubbed here, so
	// every display of a status (servers, --json, the serve banner) is.
	if c.err != nil && c.state != StateConnected {
		st.Error = redact.String(c.err.Error())
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

// sessionGen is Session, with the session's generation.
func (c *Conn) sessionGen(ctx context.Context) (*mcp.ClientSession, uint64, error) {
	for {
		c.mu.Lock()
		if c.m.isClosed() {
			c.mu.Unlock()
			return nil, 0, ErrClosed
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
		if err == nil && reconnect && c.m.opts.OnListChanged != nil {
			// A restarted server may offer other tools, prompts and
			// resources without saying so: whatever was listed before is
			// stale. Told before the session is published, so no one
			// uses the new session with the old lists.
			for _, kind := range []ChangeKind{ToolsChanged, PromptsChanged, ResourcesChanged} {
				c.m.opts.OnListChanged(c.cfg.Name, kind)
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
		c.gen++
		gen := c.gen
		c.session, c.raw, c.state, c.err = cs, raw, StateConnected, nil
		c.connectedAt = time.Now()
		c.failures, c.terminalErrs = 0, 0
		c.mu.Unlock()
		c.m.wg.Add(1)
		go c.watch(cs)
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

// connect opens one session, bounded by the connect timeout and the
// concurrency limit for the server's kind.
func (c *Conn) connect(ctx context.Context) (*mcp.ClientSession, *lineConn, error) {
	sem := c.m.semRemote
	if !c.cfg.IsRemote() {
		sem = c.m.semLocal
	}
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	timeout := c.cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = config.DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	c.log.Debug("connecting", "transport", c.cfg.Transport)
	t, authSeen, err := c.transport(ctx)
	if err != nil {
		return nil, nil, err
	}
	client := mcp.NewClient(c.m.opts.ClientInfo, c.clientOptions())
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		pt, _ := t.(*pluginTransport)
		if aerr := c.authFailure(err, pt != nil && pt.authFailed, authSeen != nil && authSeen.Load()); aerr != nil {
			return nil, nil, aerr
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("connect timed out after %s", timeout)
		}
		if st, ok := t.(*stdioTransport); ok && st.proc != nil {
			st.proc.settle(500 * time.Millisecond)
		}
		return nil, nil, c.describe(fmt.Errorf("connecting to %s: %w", c.cfg.Name, err))
	}
	c.log.Info("connected", "transport", c.cfg.Transport)
	var raw *lineConn
	if st, ok := t.(*stdioTransport); ok {
		raw = st.conn
	}
	return cs, raw, nil
}

// describe adds the tail of a stdio server's stderr to an error.
func (c *Conn) describe(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.describeLocked(err)
}

func (c *Conn) describeLocked(err error) error {
	buf := c.stderr
	if buf == nil {
		return err
	}
	if tail := strings.TrimSpace(shownStderr(buf)); tail != "" {
		return fmt.Errorf("%w\nserver stderr:\n%s", err, indent(tail))
	}
	return err
}

// shownStderr is the kept tail of a server's stderr as shown to the user:
// scrubbed of secrets, and starting at a whole line (a line cut by the
// buffer could hide the name that marks a secret, "password=" say).
func shownStderr(buf *tailBuffer) string {
	s := buf.String()
	if rest, cut := strings.CutPrefix(s, "…"); cut {
		if _, after, ok := strings.Cut(rest, "\n"); ok {
			s = "…\n" + after
		} else {
			s = "…"
		}
	}
	return redact.String(s)
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func (c *Conn) transport(ctx context.Context) (mcp.Transport, *atomic.Bool, error) {
	s := c.cfg
	if s.IsRemote() && len(s.HeadersHelper) > 0 {
		// Dynamic headers override static ones; fetched at each connect.
		if c.m.opts.Headers == nil {
			return nil, nil, fmt.Errorf("server %s has a headers_helper, but no headers plugin is available", s.Name)
		}
		dyn, err := c.m.opts.Headers.Headers(ctx, s)
		if err != nil {
			return nil, nil, err
		}
		merged := *s
		merged.Headers = map[string]string{}
		for k, v := range s.Headers {
			merged.Headers[k] = v
		}
		for k, v := range dyn {
			for old := range merged.Headers {
				if strings.EqualFold(old, k) {
					delete(merged.Headers, old)
				}
			}
			merged.Headers[k] = v
		}
		s = &merged
	}
	switch s.Transport {
	case config.TransportStdio:
		buf := newTailBuffer(stderrTail)
		c.mu.Lock()
		c.stderr = buf
		c.mu.Unlock()
		return &stdioTransport{
			command: s.Command,
			args:    s.Args,
			env:     childEnv(c.m.opts.LookupEnv, s.InheritEnv, s.Env),
			dir:     s.Cwd,
			maxMsg:  c.m.opts.MaxMessageBytes,
			stderr:  buf,
			onStart: func(pid int) {
				c.mu.Lock()
				c.pid = pid
				c.mu.Unlock()
				if c.m.opts.OnProcessStart != nil {
					c.m.opts.OnProcessStart(s.Name, pid)
				}
			},
		}, nil, nil
	}
	var oh *hauth.Handler
	if s.OAuth != nil {
		var err error
		if oh, err = c.OAuth(); err != nil {
			return nil, nil, err
		}
	}
	var pa *pluginAuth
	if s.AuthScheme != "" {
		if c.m.opts.Auth == nil {
			return nil, nil, fmt.Errorf("server %s uses auth scheme %q, but no auth plugin is available", s.Name, s.AuthScheme)
		}
		var err error
		if pa, err = newPluginAuth(ctx, c.m.opts.Auth, s, c.m.opts.TokenStore); err != nil {
			return nil, nil, err
		}
	}
	switch s.Transport {
	case config.TransportHTTP, config.TransportSSE:
		seen := new(atomic.Bool)
		hc := newHTTPClient(s.Headers)
		hc.Transport = &statusWatcher{base: hc.Transport, unauthorized: seen}
		if oh != nil {
			hc.Transport = oh.ResourceTransport(hc.Transport)
		}
		if s.Transport == config.TransportSSE {
			if pa != nil {
				hc.Transport = &bearerTransport{base: hc.Transport, auth: pa}
			}
			if oh != nil {
				hc.Transport = &oauthTransport{base: hc.Transport, h: oh}
			}
			return lifetimeTransport{&mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: c.m.opts.MaxMessageBytes}, c.m.ctx}, seen, nil
		}
		st := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: c.m.opts.MaxMessageBytes}
		if pa != nil {
			st.OAuthHandler = pa
		}
		if oh != nil {
			st.OAuthHandler = oh
		}
		// Not wrapped in lifetimeTransport: the streamable client detaches
		// its connection from Connect's context itself, and a wrapped
		// connection would hide the go-sdk's session hooks (its standalone
		// SSE stream, which servers use for requests outside a call, starts
		// from one of them).
		return st, seen, nil
	}
	if c.m.opts.Plugins != nil {
		return &pluginTransport{plugins: c.m.opts.Plugins, server: s, auth: pa}, nil, nil
	}
	return nil, nil, fmt.Errorf("transport %q is not available", s.Transport)
}

// HeadersProvider supplies a server's dynamic headers.
type HeadersProvider interface {
	Headers(ctx context.Context, server *config.Server) (map[string]string, error)
}

// statusWatcher records a 401 from the server, to tell needs-auth from failure.
type statusWatcher struct {
	base         http.RoundTripper
	unauthorized *atomic.Bool
}

func (w *statusWatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		w.unauthorized.Store(true)
	}
	return resp, err
}

func (c *Conn) clientOptions() *mcp.ClientOptions {
	name := c.cfg.Name
	m := c.m
	o := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, // no roots
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if m.opts.OnListChanged != nil {
				m.opts.OnListChanged(name, ToolsChanged)
			}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			if m.opts.OnListChanged != nil {
				m.opts.OnListChanged(name, ResourcesChanged)
			}
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			if m.opts.OnListChanged != nil {
				m.opts.OnListChanged(name, PromptsChanged)
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if f, ok := m.progress.Load(fmt.Sprint(req.Params.ProgressToken)); ok {
				f.(func(*mcp.ProgressNotificationParams))(req.Params)
			}
		},
	}
	if m.opts.OnElicit != nil {
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return m.opts.OnElicit(ctx, name, req)
		}
	}
	return o
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
	remote := c.cfg.IsRemote()
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
}

// neverSent reports whether err says the request was refused before it was
// written, because the connection was already closing.
func neverSent(err error) bool {
	return strings.Contains(err.Error(), "client is closing")
}

// connectionGone reports whether err says the session's connection is closed.
func connectionGone(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection closed") || strings.Contains(msg, "client is closing")
}

// IsTerminal reports whether err means the transport to a server is broken
// (connection reset or refused, timeouts, broken pipe, unreachable host, or a
// closed stream), as opposed to an error the server returned.
func IsTerminal(err error) bool {
	for _, target := range []error{
		syscall.ECONNRESET, syscall.ETIMEDOUT, syscall.EPIPE, syscall.EHOSTUNREACH,
		syscall.ECONNREFUSED, io.ErrUnexpectedEOF, mcp.ErrConnectionClosed,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "stream disconnected") || strings.Contains(msg, "connection closed")
}

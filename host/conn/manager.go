package conn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/telemetry"
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
	// Environ lists the host environment (NAME=value entries, as
	// os.Environ): a stdio server's connect timeout names the variables it
	// did not get (ConnectTimeoutError; names only). OPTIONAL: os.Environ
	// when LookupEnv is nil too, else none are named.
	Environ func() []string
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
	// OnUserListChanged is OnListChanged for a per-user connection (see
	// WithUser), with its user; also called when the connection is closed
	// for good (its lists are gone with it). OPTIONAL.
	OnUserListChanged func(server string, u *User, kind ChangeKind)
	// MaxUserConns caps the per-user connections held at once. OPTIONAL:
	// DefaultMaxUserConns.
	MaxUserConns int
	// OnElicit answers elicitation requests from servers. OPTIONAL: when nil the
	// host does not advertise elicitation.
	OnElicit func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// OnCreateMessage answers sampling requests from servers that no call's
	// Requester takes. OPTIONAL.
	OnCreateMessage func(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// OnListRoots answers a server's roots/list that no call's Requester
	// takes (one outside any call), for the connection of user u (nil: a
	// shared one); a nil result leaves it to Roots. OPTIONAL.
	OnListRoots func(ctx context.Context, server string, u *User) (*mcp.ListRootsResult, error)
	// Roots are the host's own roots (settings { roots }), answered to a
	// server's roots/list outside any call when OnListRoots has no answer;
	// SetRoots changes them. OPTIONAL.
	Roots []*mcp.Root
	// Capabilities are the client capabilities offered to servers of
	// protocol versions before 2026-07-28 at initialize, beyond those
	// OnElicit and OnCreateMessage imply: what the callers' Requesters may
	// answer (a gateway offers what its clients might have). Servers of
	// 2026-07-28 are told each call's Requester's own capabilities instead.
	// OPTIONAL.
	Capabilities *mcp.ClientCapabilities
	// ProtocolVersion is the protocol version sessions are opened at: a
	// front with clients of one era only (the stdio gateway, whose one
	// client said its version at initialize) opens them in that era, where
	// the server behaves as it would for that client directly and calls are
	// relayed as they are. It must be one of mcp.SupportedProtocolVersions.
	// OPTIONAL: the newest version both sides speak.
	ProtocolVersion string
	// LegacyWait is how long a call waits for a second session busy with
	// another client's call before the first session serves it (see
	// legacy.go). OPTIONAL: 3s.
	LegacyWait time.Duration
	// LegacyIdle is how long a further second session of a server (one
	// opened while the others were busy with other clients' calls; see
	// legacy.go) is kept with no call in flight before it is closed.
	// OPTIONAL: 1m.
	LegacyIdle time.Duration
	// OnResourceUpdated receives notifications/resources/updated. OPTIONAL.
	OnResourceUpdated func(server string, p *mcp.ResourceUpdatedNotificationParams)
	// OnUserResourceUpdated is OnResourceUpdated for a per-user
	// connection: the update of a subscription made through user u's own
	// connection (see WithUser). OPTIONAL.
	OnUserResourceUpdated func(server string, u *User, p *mcp.ResourceUpdatedNotificationParams)
	// OnLog receives notifications/message, with the Requester of the call
	// it belongs to when that is known (see Requester). OPTIONAL.
	OnLog func(server string, p *mcp.LoggingMessageParams, r Requester)
	// OnSession is called (from a goroutine of the Manager) after each new
	// session of a server is in use, to renew what the previous session
	// had. OPTIONAL.
	OnSession func(ctx context.Context, server string, cs *mcp.ClientSession)
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
	// Telemetry records the upstream requests (spans, with W3C trace
	// context sent in _meta and HTTP headers, and the call duration
	// metric) and reconnects. OPTIONAL: off.
	Telemetry *telemetry.Telemetry
	// InProcess are the implementations of the servers with transport
	// "inprocess", by server name. OPTIONAL: without one, such a server
	// fails to connect.
	InProcess map[string]*mcp.Server
	// OnNewClient is called with every go-sdk client the connections make,
	// before it connects: it may register the custom methods the host
	// sends (SEP-2624's interceptors/list and interceptor/invoke).
	// OPTIONAL.
	OnNewClient func(*mcp.Client)
}

// Manager owns one connection per configured server. Its methods are safe for
// concurrent use.
type Manager struct {
	opts      Options
	log       hclog.Logger
	semLocal  chan struct{}
	semRemote chan struct{}
	progress  sync.Map // progress token (string) -> *call
	tokens    atomic.Uint64

	ctx    context.Context // cancelled by Close; parents background reconnects
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[string]*Conn
	order  []string
	closed bool
	plug   *Plugins // what new connections use (Apply may replace it)

	users users // per-user connections (users.go)

	sseRouters sseRouters // the raw lane's event stream readers (httplane.go)

	rootClients rootClients // the host's roots and the clients holding them (roots.go)
}

// NewManager returns a manager for the given servers. It connects nothing until asked.
func NewManager(servers []*config.Server, opts *Options) *Manager {
	m := &Manager{conns: map[string]*Conn{}}
	if opts != nil {
		m.opts = *opts
	}
	m.rootClients.roots = slices.Clone(m.opts.Roots)
	if m.opts.Logger == nil {
		m.opts.Logger = hclog.NewNullLogger()
	}
	if m.opts.LookupEnv == nil {
		m.opts.LookupEnv = os.LookupEnv
		if m.opts.Environ == nil {
			m.opts.Environ = os.Environ
		}
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
	if m.opts.MaxUserConns <= 0 {
		m.opts.MaxUserConns = DefaultMaxUserConns
	}
	m.users.max = m.opts.MaxUserConns
	m.semLocal = make(chan struct{}, m.opts.ConcurrencyLocal)
	m.semRemote = make(chan struct{}, m.opts.ConcurrencyRemote)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.plug = &Plugins{Transports: m.opts.Plugins, Headers: m.opts.Headers, Auth: m.opts.Auth}
	for _, s := range servers {
		m.conns[s.Name] = m.newConn(s)
		m.order = append(m.order, s.Name)
	}
	return m
}

// newConn returns the connection of a configured server (not connected).
func (m *Manager) newConn(s *config.Server) *Conn {
	c := &Conn{m: m, cfg: s, log: m.log.Named(s.Name), version: m.opts.ProtocolVersion,
		calls: make(chan struct{}, m.opts.MaxConcurrentCalls), plug: m.plug, live: new(atomic.Pointer[config.Server])}
	c.live.Store(s)
	switch {
	case s.BlockedBy != "":
		c.state, c.err = StateDisabled, fmt.Errorf("%w: %s", ErrBlocked, s.BlockedBy)
	case s.Disabled:
		c.state, c.err = StateDisabled, ErrDisabled
	case !s.Approved && s.Registry != "" && s.Origin.Scope != config.ScopeProject:
		why := ""
		if note := s.ApprovalNote(); note != "" {
			why = " (" + note + ")"
		}
		c.state, c.err = StateDisabled, registryNotApproved{fmt.Sprintf("server from the MCP Registry (%s) is not approved%s: run `mcphost config approve %s` to review and approve it", s.Registry, why, s.Name)}
	case !s.Approved && s.ApprovalNote() != "":
		c.state, c.err = StateDisabled, fmt.Errorf("%w: %s: run `mcphost config approve %s` to review and approve it again", ErrNotApproved, s.ApprovalNote(), s.Name)
	case !s.Approved:
		c.state, c.err = StateDisabled, fmt.Errorf("%w: run `mcphost config approve %s` to review and approve it", ErrNotApproved, s.Name)
	}
	return c
}

// Names returns the managed servers' names in configuration order.
func (m *Manager) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.order...)
}

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
	m.ConnectSome(ctx, nil, progress)
}

// ConnectSome is ConnectAll of the servers only accepts (all, if nil).
func (m *Manager) ConnectSome(ctx context.Context, only func(name string) bool, progress func(name string, st Status)) {
	var wg sync.WaitGroup
	for _, name := range m.Names() {
		if only != nil && !only(name) {
			continue
		}
		c := m.Get(name)
		if c == nil || c.State() == StateDisabled {
			continue
		}
		if o := c.cfg.OAuth; o != nil && o.Grant == config.GrantTokenExchange {
			continue // connected for each gateway user, on first use
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
	var cs *mcp.ClientSession
	err := m.onCurrent(ctx, name, func(c *Conn) (err error) {
		cs, err = c.Session(ctx)
		return err
	})
	return cs, err
}

// retiredRetries bounds how often a request that met a retired connection
// (ErrRetired: nothing was sent) is tried on the server's next one.
const retiredRetries = 3

// onCurrent runs fn on the connection of server that ctx uses (see For),
// and again on the server's new connection when fn met a retired one
// (ErrRetired, returned only before anything is sent).
func (m *Manager) onCurrent(ctx context.Context, server string, fn func(*Conn) error) error {
	for attempt := 0; ; attempt++ {
		c := m.For(ctx, server)
		if c == nil {
			return fmt.Errorf("%w %q", ErrUnknown, server)
		}
		err := fn(c)
		if !errors.Is(err, ErrRetired) || attempt == retiredRetries || m.For(ctx, server) == c {
			return err
		}
	}
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
	return m.onCurrent(ctx, name, func(c *Conn) error { return m.doOn(ctx, c, fn) })
}

// doOn is do on connection c (a server's own, or its second session).
func (m *Manager) doOn(ctx context.Context, c *Conn, fn func(context.Context, *mcp.ClientSession, uint64) error) error {
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
		if cut := c.root().cut.Load(); cut != nil {
			return cut // cancelled by a reload's drain deadline (apply.go)
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
			c.listChanged(ToolsChanged) // the authenticate tool replaces them
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
	// Requester answers what the server asks during the call. OPTIONAL.
	Requester Requester
	// CannotAsk says that Requester cannot put the server's own requests
	// (elicitation, sampling, roots) to the client during the call (a
	// stateless client): the call of a client before NewProtocol then
	// stays on the server's first session (see ClientVersion), as it does
	// without a Requester.
	CannotAsk bool
	// ClientVersion is the protocol version of the client the call is
	// made for: a call of a client before NewProtocol to a server of
	// NewProtocol may go to the server's second session, of
	// LegacyProtocol, when the server's configuration has legacy_session
	// and no other client's call is in flight there (see legacy.go).
	// OPTIONAL: "" is this host's own (the latest).
	ClientVersion string
	// Tasks, if set, says the caller can carry a task result (SEP-2663)
	// and names its task: a call to a session of NewProtocol that the
	// server may answer with a task — the retry of a multi-round-trip
	// call, or a call whose client declared the tasks extension — is then
	// sent on the raw lane, and a task result returned under
	// TaskResultKey (see callRawRetry). OPTIONAL.
	Tasks TaskIDs
	// Task is the task parameter of a 2025-11-25 task-augmented call (a
	// raw JSON object), sent with Tasks to a session before NewProtocol on
	// the raw lane; a CreateTaskResult comes back under TaskResultKey.
	// OPTIONAL.
	Task []byte
}

// Call calls a tool on the named server, as configured by opts.
func (m *Manager) Call(ctx context.Context, server string, params *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	fc := newCall(server, o.Requester, o.OnProgress)
	if o.OnProgress != nil {
		token := fmt.Sprintf("mcphost-%d", m.tokens.Add(1))
		params.SetProgressToken(token)
		m.progress.Store(token, fc)
		defer m.progress.Delete(token)
	}
	var res *mcp.CallToolResult
	err := m.onCurrent(ctx, server, func(c *Conn) (err error) {
		res, err = m.callOn(ctx, c, params, &o, fc)
		return err
	})
	return res, err
}

// callOn is Call on the server's connection c.
func (m *Manager) callOn(ctx context.Context, c *Conn, params *mcp.CallToolParams, o *CallOptions, fc *call) (*mcp.CallToolResult, error) {
	if len(params.InputResponses) == 0 && params.RequestState == "" {
		// (A retry with answers goes where its request state came from:
		// the first session; a second one, of an earlier version, asks by
		// requests instead.)
		c = c.forVersion(ctx, o.ClientVersion, o.Requester != nil && !o.CannotAsk)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fc.cancel = cancel // (a reload's drain deadline cuts the call)
	c, left, err := c.enter(ctx, fc)
	if err != nil {
		return nil, err
	}
	defer left()
	// The notifications the server sent before its response reach the
	// caller before the result does (see notes.go).
	defer fc.drain(ctx)
	var res *mcp.CallToolResult
	err = m.doOn(ctx, c, func(ctx context.Context, cs *mcp.ClientSession, gen uint64) error {
		if c.primary != nil {
			// The registry lists the first session's tools.
			gen = c.listedAs(ctx, cs, gen)
		}
		if o.Verify != nil {
			if err := o.Verify(ctx, cs, gen); err != nil {
				return &verifyError{err}
			}
		}
		p := params
		if o.Requester != nil && cs.InitializeResult().ProtocolVersion >= NewProtocol {
			// Offer the server only what this caller's client can answer.
			cp := *params
			cp.Meta = mcp.Meta{}
			for k, v := range params.Meta {
				cp.Meta[k] = v
			}
			caps := metaCapabilities(o.Requester)
			if o.Tasks == nil {
				caps = capsWithoutTasks(caps) // (a task result would have nowhere to go)
			}
			cp.Meta[mcp.MetaKeyClientCapabilities] = caps
			p = &cp
		}
		var err error
		tel := m.opts.Telemetry
		var us telemetry.Span
		var begun time.Time
		if tel.Enabled() {
			ctx, us = tel.StartUpstream(ctx, c.cfg.Name, "tools/call", params.Name,
				telemetry.RequestInfo{ProtocolVersion: cs.InitializeResult().ProtocolVersion})
			cp := *p
			cp.Meta = mcp.Meta(tel.InjectMeta(ctx, maps.Clone(map[string]any(p.Meta))))
			p, begun = &cp, time.Now()
		}
		// The call's own context names it for the routing of its
		// notifications (never a connect's, whose values the connection
		// would keep).
		sent := false
		if o.Tasks != nil && o.Task != nil && cs.InitializeResult().ProtocolVersion < NewProtocol {
			res, sent, err = c.callRawRetry(ctx, cs, p, nil, o.Task, fc, o.Tasks)
		} else if o.Tasks != nil && cs.InitializeResult().ProtocolVersion >= NewProtocol {
			// A call the server may answer with a task (the retry of a
			// multi-round-trip call, or one of a client that declared the
			// tasks extension to a server that declared it too) goes on
			// the raw lane: the go-sdk client's CallToolResult cannot hold
			// a task result.
			caps, _ := p.Meta[mcp.MetaKeyClientCapabilities].(map[string]any)
			if len(p.InputResponses) > 0 || p.RequestState != "" || declaresTasks(caps) && serverDeclaresTasks(cs) {
				res, sent, err = c.callRawRetry(ctx, cs, p, caps, nil, fc, o.Tasks)
			}
		}
		if !sent {
			res, err = cs.CallTool(context.WithValue(ctx, callKey{}, fc), p)
		}
		if tel.Enabled() {
			et := telemetry.ErrorType(err)
			if err == nil && res.IsError {
				et = telemetry.ErrorTypeToolError
			}
			us.EndWith(et)
			tel.RecordCall(ctx, c.cfg.Name, params.Name, time.Since(begun), et)
		}
		return err
	})
	if ve := (*verifyError)(nil); errors.As(err, &ve) {
		return nil, ve.err
	}
	return res, err
}

// Generation returns the generation of the server's current (or last)
// session: 0 before the first connect, then one more for every session.
// A call verified under one generation and sent on a session of another was
// sent to a server that may have restarted in between.
func (m *Manager) Generation(ctx context.Context, server string) uint64 {
	c := m.For(ctx, server)
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// RawCall is a tools/call for Manager.CallRaw.
type RawCall struct {
	Tool string
	// Args is the raw JSON object of the arguments (nil: none).
	Args []byte
	// ProtocolVersion is that of the client the call is made for.
	ProtocolVersion string
	// Gen is the generation of the session the caller checked the tool on.
	Gen uint64
	// Caps are the capabilities of the client the call is made for, as the
	// JSON object a request of NewProtocol carries in its _meta: a server of
	// NewProtocol is told those, not this host's (nil: this host's).
	Caps []byte
	// Requester answers what the server asks during the call and gets the
	// log messages it sends then (as CallOptions.Requester). OPTIONAL.
	Requester Requester
	// HeaderParams is set when the tool's input schema sends parameters as
	// HTTP headers (x-mcp-header): over streamable HTTP at NewProtocol only
	// the go-sdk client sends those.
	HeaderParams bool
	// Asks is set when Requester can put the server's own requests
	// (elicitation, sampling, roots) to the client during the call. A server
	// of a version before NewProtocol asks by such requests, which only the
	// calls in flight tie to a caller: without Asks, its calls are not
	// relayed.
	Asks bool
	// Trace are _meta members carrying the client's W3C trace context
	// (encoded JSON members without braces), sent as they are when
	// telemetry is off; with it on, the call's upstream span's context is
	// sent instead.
	Trace []byte
	// Task is the raw task parameter of a 2025-11-25 task-augmented call
	// (nil: none), sent as it is; the CreateTaskResult of a session before
	// NewProtocol has its task's id named by Tasks.
	Task []byte
	// Tasks, if set, names the task of a task result (SEP-2663's
	// resultType "task", from a session of NewProtocol) as the caller's
	// client sees it: the result's taskId is replaced by Tasks.Outward's.
	Tasks TaskIDs
	// Timeout, if set, bounds the call: without a response by then, the
	// server is sent notifications/cancelled and the call ends with an
	// error matching both context.DeadlineExceeded and TimeoutCause.
	// (One timer on the call's own context, rather than a context of the
	// caller's around it: a context level less per call.)
	Timeout      time.Duration
	TimeoutCause error
}

// CallRaw is the relay path of a tools/call: it sends the call with the raw
// JSON arguments on the server's raw lane (stdio, streamable HTTP and plugin
// transports; see rawStarter) and returns the server's raw JSON-RPC
// response, decoding nothing. The call is in flight on the connection
// as one of Call's is (the server's requests and log messages during it go
// to rc.Requester), and the notifications the server sent before its
// response are handled before CallRaw returns.
//
// handled is false when the server cannot take the raw path (nothing was
// sent), or refused the raw request before acting on it (an HTTP 401, 403
// or 404, which the go-sdk client handles); the caller then uses CallTool.
// The raw path is not taken when the session is not of generation rc.Gen
// (the server was reconnected since the caller checked the tool), when its
// protocol version is not the client's, except as below, and for a session
// before NewProtocol unless rc.Asks.
// Connection failures are handled as in Do.
//
// A client of a version before NewProtocol is relayed to a session of
// NewProtocol or later too (unless the server has legacy_session, whose
// second session serves such clients' calls): a tools/call and its complete
// result differ between the eras only by the result's resultType, which is
// removed (see completeResult).
//
// A result that needs input (input_required) is never returned: handled is
// then false, though the call was sent — it was the first round of a
// multi-round-trip call, which a server expects to see again with the
// answers; CallTool sends it again, binds the request state to the call and
// has the client asked as its version allows.
func (m *Manager) CallRaw(ctx context.Context, server string, rc RawCall) (resp []byte, handled bool, err error) {
	c := m.For(ctx, server)
	if c == nil {
		return nil, false, nil
	}
	if lc := c.legacyRaw(rc); lc != nil {
		c = lc
	} else if lc := c.openLegacyRaw(ctx, rc); lc != nil {
		c = lc
	}
	// At once when a slot is free and the session live (no context of
	// rc.Timeout around the call: its own timer bounds it, see startRaw);
	// else waiting for either, within rc.Timeout.
	cs, csGen, raw, ok := c.ready()
	if !ok {
		if rc.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, rc.Timeout, rc.TimeoutCause)
			defer cancel()
		}
		release, err := c.acquire(ctx)
		if err != nil {
			return nil, true, timedOut(ctx, rc, err)
		}
		cs, csGen, err = c.sessionGen(ctx)
		if errors.Is(err, ErrRetired) {
			release()
			return nil, false, nil // (nothing sent: CallTool finds the current connection)
		}
		if err != nil {
			release()
			return nil, true, timedOut(ctx, rc, err)
		}
		raw = c.rawLane(cs)
	}
	defer c.release() // (the slot taken by ready or acquire)
	if raw == nil || c.listedGen(csGen) != rc.Gen {
		return nil, false, nil
	}
	v, older, ok := rawVersions(cs, raw, rc, c.legacyMayServe(rc))
	if !ok {
		return nil, false, nil
	}
	type result struct {
		resp    []byte
		handled bool
		err     error
	}
	ch := make(chan result, 1)
	if err := c.startRaw(ctx, cs, raw, v, older, rc, true, func() {}, func(resp []byte, handled bool, err error) {
		ch <- result{resp, handled, err}
	}); err != nil {
		if errors.Is(err, errLegacyBusy) {
			return nil, false, nil // (nothing sent: CallTool waits for the session)
		}
		if connectionGone(err) {
			c.drop(cs, err)
		}
		return nil, true, err
	}
	r := <-ch
	return r.resp, r.handled, r.err
}

// ready takes a slot of c's concurrency cap (c.release frees it) and
// returns c's live session, its generation and raw lane, when it can at
// once (ok false, and nothing taken, when it cannot): CallRaw's path
// without a wait.
func (c *Conn) ready() (cs *mcp.ClientSession, gen uint64, raw rawStarter, ok bool) {
	if c.root().retired.Load() || c.m.isClosed() {
		return nil, 0, nil, false
	}
	select {
	case c.calls <- struct{}{}:
	default:
		return nil, 0, nil, false
	}
	c.mu.Lock()
	cs, gen, raw = c.session, c.gen, c.raw
	c.mu.Unlock()
	if cs == nil || raw == nil {
		c.release()
		return nil, 0, nil, false
	}
	return cs, gen, raw, true
}

// release frees a slot of c's concurrency cap (taken by ready, or acquire).
func (c *Conn) release() { <-c.calls }

// timedOut is err, from a wait of CallRaw under ctx, as the raw call's
// own timeout reports it (startRaw) when rc.Timeout ended the wait.
func timedOut(ctx context.Context, rc RawCall, err error) error {
	if rc.TimeoutCause != nil && errors.Is(err, context.DeadlineExceeded) && context.Cause(ctx) == rc.TimeoutCause {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, rc.TimeoutCause)
	}
	return err
}

// StartRaw is CallRaw without the wait, for a caller that must not block:
// it starts the call only if it can at once — the server's session is live
// (no connect), of generation rc.Gen, under its concurrency cap, and takes
// the call as CallRaw would — and reports whether it did. Nothing was sent
// when it did not; the caller then uses CallRaw or CallTool. A started call
// ends with one call of done, with what CallRaw would return, on the
// connection's read loop (done must not block on the connection) or on
// another goroutine.
func (m *Manager) StartRaw(ctx context.Context, server string, rc RawCall, done func(resp []byte, handled bool, err error)) bool {
	c := m.For(ctx, server)
	if c == nil || c.root().retired.Load() {
		return false
	}
	if lc := c.legacyRaw(rc); lc != nil {
		c = lc
	}
	select {
	case c.calls <- struct{}{}:
	default:
		return false
	}
	release := func() { <-c.calls }
	c.mu.Lock()
	cs, raw, gen := c.session, c.raw, c.gen
	c.mu.Unlock()
	if cs == nil || raw == nil || c.listedGen(gen) != rc.Gen {
		release()
		return false
	}
	v, older, ok := rawVersions(cs, raw, rc, c.legacyMayServe(rc))
	if !ok {
		release()
		return false
	}
	if err := c.startRaw(ctx, cs, raw, v, older, rc, false, release, done); err != nil {
		release()
		return false // (CallRaw meets the lost connection)
	}
	return true
}

// rawVersions decides whether a raw call may go on session cs (see
// CallRaw): v is the session's protocol version, older that the client's
// is earlier than NewProtocol while the session's is not. legacySession
// says that a second session may serve the call instead (legacyMayServe):
// a client that can be asked is then not relayed to a session of
// NewProtocol.
func rawVersions(cs *mcp.ClientSession, raw rawStarter, rc RawCall, legacySession bool) (v string, older, ok bool) {
	v = cs.InitializeResult().ProtocolVersion
	if l, isHTTP := raw.(*httpLane); isHTTP && !l.takes(rc, v) {
		return v, false, false
	}
	switch {
	case v == rc.ProtocolVersion:
		return v, false, v >= NewProtocol || (rc.Requester != nil && rc.Asks)
	case v >= NewProtocol && rc.ProtocolVersion < NewProtocol && (!legacySession || !rc.Asks || rc.Requester == nil):
		// (A client that cannot be asked during the call, a stateless one
		// say, has no use for the second session.)
		return v, true, true
	}
	return v, false, false
}

// startRaw sends a raw call on cs (of protocol version v) and ends it with
// one call of done; release runs first. It returns the error of a call that
// could not be sent. wait says that the caller waits for done (see
// rawRequest.wait).
func (c *Conn) startRaw(ctx context.Context, cs *mcp.ClientSession, raw rawStarter, v string, older bool, rc RawCall, wait bool, release func(), done func([]byte, bool, error)) error {
	caps := rc.Caps
	switch {
	case v < NewProtocol:
		caps = nil // (such a server was told the client's at initialize)
	case rc.Tasks == nil:
		caps = rawCapsWithoutTasks(caps) // (a task result would have nowhere to go)
	}
	fc := newCall(c.cfg.Name, rc.Requester, nil)
	tasks, legacyTask := rc.Tasks, rc.Task != nil && rc.Tasks != nil // (tasks.go)
	ctx, cancel := context.WithCancelCause(ctx)
	fc.cancel = cancel // (a reload's drain deadline cuts the call)
	var timer *time.Timer
	if rc.Timeout > 0 {
		cause := rc.TimeoutCause
		if cause == nil {
			cause = context.DeadlineExceeded
		}
		timer = time.AfterFunc(rc.Timeout, func() { cancel(cause) })
	}
	left, err := c.enterRaw(fc)
	if err != nil {
		cancel(nil)
		if timer != nil {
			timer.Stop()
		}
		return err
	}
	trace, tool := rc.Trace, rc.Tool // (the closure below takes tool, not all of rc)
	var us telemetry.Span
	var begun time.Time
	tel := c.m.opts.Telemetry
	if tel.Enabled() {
		ctx, us = tel.StartUpstream(ctx, c.cfg.Name, "tools/call", tool, telemetry.RequestInfo{ProtocolVersion: v})
		trace, begun = tel.TraceMembers(ctx), time.Now()
	}
	timeoutCause := rc.TimeoutCause
	err = raw.StartRaw(ctx, rawRequest{tool: tool, args: rc.Args, task: rc.Task, caps: caps, trace: trace, fc: fc, wait: wait}, func(resp []byte, err error) {
		if timer != nil {
			timer.Stop()
			if err != nil && timeoutCause != nil && context.Cause(ctx) == timeoutCause {
				err = fmt.Errorf("%w: %w", context.DeadlineExceeded, timeoutCause)
			}
		}
		cancel(nil)
		left()
		release()
		if tel.Enabled() {
			et := telemetry.ErrorType(err)
			if err == nil && bytes.Contains(resp, []byte(`"isError":true`)) {
				et = telemetry.ErrorTypeToolError // (as the go-sdk path reports it)
			}
			us.EndWith(et)
			tel.RecordCall(ctx, c.cfg.Name, tool, time.Since(begun), et)
		}
		if cut := c.root().cut.Load(); cut != nil && err != nil {
			done(nil, true, cut) // cancelled by a reload's drain deadline (apply.go)
			return
		}
		if errors.Is(err, errRawRefused) {
			done(nil, false, nil) // nothing done: the go-sdk client sends it
			return
		}
		if err != nil {
			if connectionGone(err) {
				c.drop(cs, err)
			}
			done(nil, true, err)
			return
		}
		c.noteSuccess()
		finish := func() {
			// The notifications the server sent before its response
			// reach the caller before the result does (see notes.go).
			fc.drain(ctx)
			if v < NewProtocol {
				var flush func()
				if legacyTask {
					resp, flush = c.createTaskResult(ctx, tasks, fc.r, v, resp)
				}
				done(resp, true, nil)
				if flush != nil {
					flush() // (the statuses read before resp, after it: watchTask)
				}
				return
			}
			out, ok := completeResultTasks(ctx, resp, older, tasks, c.cfg.Name, v)
			if !ok {
				done(nil, false, nil) // (see CallRaw)
				return
			}
			done(out, true, nil)
		}
		if fc.pending.Load() > 0 {
			go finish() // not on the read loop; ends within drainWait
			return
		}
		finish()
	})
	if err != nil {
		if tel.Enabled() {
			us.End(err)
		}
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
		left()
	}
	return err
}

// Current returns the server's live session (ctx's user's, see WithUser),
// or nil: it never connects.
func (m *Manager) Current(ctx context.Context, server string) *mcp.ClientSession {
	c := m.For(ctx, server)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// NewProtocol is the first protocol version whose requests stand alone
// (carrying the client's capabilities in _meta) and whose servers ask for
// input in results (SEP-2322) rather than by requests of their own.
const NewProtocol = "2026-07-28"

// Status reports every server's state in configuration order.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	conns := make([]*Conn, 0, len(m.order))
	for _, name := range m.order {
		conns = append(conns, m.conns[name])
	}
	m.mu.Unlock()
	out := make([]Status, 0, len(conns))
	users := m.userCounts() // (one pass over the per-user connections)
	for _, c := range conns {
		st := c.Status()
		name := c.cfg.Name
		st.Users = users[name]
		out = append(out, st)
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
	conns = append(conns, m.userConns("")...)
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
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Scope     string `json:"scope"`
	File      string `json:"file,omitempty"`
	State     State  `json:"state"`
	Error     string `json:"error,omitempty"`
	// Hint says what may fix Error, when something can be said: for a
	// stdio server's connect timeout, the host's variables it did not get
	// and how to pass them (ConnectTimeoutError.Hint).
	Hint   string `json:"hint,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	PID    int    `json:"pid,omitempty"`
	// LegacyPID is the process of a stdio server's second session
	// (legacy_session), while it runs.
	LegacyPID int                 `json:"legacy_pid,omitempty"`
	Server    *mcp.Implementation `json:"server_info,omitempty"`
	// Instructions are the server's instructions, sanitized and capped by the registry.
	Instructions string `json:"-"`
	// Users is the number of per-user connections held (a per_user server
	// under a gateway with inbound OAuth; see WithUser).
	Users int `json:"users,omitempty"`
}

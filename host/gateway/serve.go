// Package gateway is the core of the gateway: it exposes a host's unified
// registry as an MCP server to clients of either protocol era
// (2025-11-25 sessions, 2026-07-28 stateless requests). Tools, prompts,
// resources and resource templates of every upstream server are served
// (named as Options.Naming says); calls go through the host's one call
// pipeline; completions, reads and subscriptions go to the owning server;
// what an upstream asks during a call (elicitation, sampling, roots) goes to
// the client that made the call. What is served follows the upstream
// servers: a list change or a reconnect upstream updates it and notifies
// downstream clients.
//
// The core knows no transport: its fronts serve it, host/gateway/stdio
// over a pipe and host/gateway/streamable over HTTP, through what front.go
// exports; each message is parsed once, by host/gateway/wire; what its
// replicas share through the state backend is listed in
// host/gateway/cluster.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/hclogslog"
	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// Options configures a Gateway. Nil options mean defaults.
type Options struct {
	// Logger receives the gateway's logs. OPTIONAL.
	Logger hclog.Logger
	// SoleClient says the gateway will serve one client (serve on stdio):
	// a server's roots/list outside any call waits for that client
	// (SetSoleClient) to ask it (ListRootsOutside). OPTIONAL.
	SoleClient bool
	// DrainTimeout bounds Drain: requests still in flight after it are
	// answered with an error. OPTIONAL: defaults to config.DefaultDrainTimeout.
	DrainTimeout time.Duration
	// StartGrace is how long, after ConnectAll began, a list request
	// (tools, prompts, resources) waits for servers still connecting
	// before it is answered with those connected (the others come with
	// list_changed). OPTIONAL: defaults to DefaultStartGrace.
	StartGrace time.Duration
	// Naming is how tools and prompts are named downstream: config.NamingPrefixed,
	// config.NamingConditional or config.NamingBare (see naming.go).
	// OPTIONAL: the config's settings { naming }, else prefixed.
	Naming string
	// UserClients records each user's latest session whose client has
	// roots (inbound OAuth), asked by ListRootsOutside for the user's
	// per-user connections: give the host's gateways (/mcp, /mcp/NAME)
	// the same one, as the host asks one of them. OPTIONAL: the gateway's
	// own.
	UserClients *UserClients
	// Endpoint names the configuration's endpoint (an endpoint "NAME"
	// block) the gateway serves: its servers only, their tools as its tools
	// block lets through, under its naming (if set: it takes precedence
	// over Naming); anything else is unknown to its clients. Its audit
	// lines name it. The definition is read from the host's configuration
	// at each Sync (Resync after a reload changed it). OPTIONAL: "" serves
	// every server (the gateway's /mcp).
	Endpoint string
	// Audit receives a line per tool call and per refused request (an
	// audit block). OPTIONAL; the caller closes it after the gateway.
	Audit *audit.Log
	// ToolSearch lists two tools of the gateway's own in place of the
	// registry's (serve --tool-search): search_tools finds tools by what
	// they do, call_tool calls one (see toolsearch.go). The registry's
	// tools are still served and may be called directly. OPTIONAL.
	ToolSearch bool
	// Users says the gateway serves users of inbound OAuth (gateway {
	// oauth }): a per-user server (oauth { per_user } or token_exchange,
	// auth { per_user }) is then listed for and called through each user's
	// own connection, never through the host's, and its tools are not in
	// the lists shared by all (see users.go). OPTIONAL.
	Users bool
	// Telemetry traces and measures every downstream request the gateway
	// answers, relayed or not: a SERVER span, the parent of the host's
	// spans of the request, and mcp.server.operation.duration (see
	// telemetry.go). OPTIONAL: nil is off.
	Telemetry *telemetry.Telemetry
	// Keys seal the session ids of clients before 2026-07-28 and key the
	// request states the gateway issues (MCPHOST_SESSION_KEYS): replicas
	// given the same keys serve each other's sessions and retries.
	// OPTIONAL: a random key, good for this process only.
	Keys *sealbox.Keys
	// State is what the gateway shares with its other replicas: session
	// records, pending requests (host/gateway/cluster lists them).
	// OPTIONAL: this process's memory.
	State state.Backend
	// Replicas tunes how the replicas judge each other gone while one
	// serves a held call for another (heldforward.go). OPTIONAL: zero
	// fields are the defaults.
	Replicas ReplicaTimeouts
}

// ReplicaTimeouts are how long a replica waits for another that holds a
// call its client retried here.
type ReplicaTimeouts struct {
	// AckWait: the retry passed on is lost if the owner does not ack it
	// within this long. OPTIONAL: 2s.
	AckWait time.Duration
	// Pulse: how often the owner, serving the retry, says it is alive.
	// OPTIONAL: 2s.
	Pulse time.Duration
	// Silence: the owner is gone, and the call with it, after this long
	// without a word once it acked. OPTIONAL: 10s. At least twice Pulse
	// (and AckWait at least Pulse), so that a live owner is not taken for
	// gone.
	Silence time.Duration
}

// Gateway serves a host's registry as an MCP server.
type Gateway struct {
	h   *host.Host
	log hclog.Logger
	srv *mcp.Server
	// naming is the naming mode served (namingMode), published by Sync
	// with the exposure named so; flagNaming is Options.Naming as given
	// ("" when unset: the settings' naming, as of the latest reload, is
	// the base an endpoint without a naming of its own returns to; see
	// baseNaming).
	naming     atomic.Pointer[string]
	flagNaming string
	tasks      taskTable // the task ids it issues (tasks.go)
	skillDirs  skillDirs // each skill server's skill directories (skilldirs.go)

	// endpoint is Options.Endpoint ("": the whole gateway); ep its
	// definition, as last read from the configuration (endpoint.go).
	endpoint string
	ep       atomic.Pointer[config.Endpoint]
	epGone   atomic.Bool // the configuration has no such endpoint any more (said once)

	mu      sync.Mutex
	exposed exposure // what is served, by exposed name or URI

	changed chan struct{} // a registry change is pending
	// sole is the front's one client, asked for roots outside any call (roots.go).
	sole     atomic.Pointer[mcp.ServerSession]
	soleSeen chan struct{} // closed when SetSoleClient names it; nil: no sole client expected
	soleOnce sync.Once
	// userRoots are each user's latest session with roots (roots.go),
	// Options.UserClients or the gateway's own.
	userRoots *UserClients
	relayed   atomic.Uint64 // tools/call requests that took the relay path
	askKeys   [][]byte      // key the request states the gateway issues; the first signs (ask.go)

	// Scale-out (host/gateway/cluster): the keys (MCPHOST_SESSION_KEYS),
	// the shared state, this replica's random id; the fronts whose
	// sessions outlive a request (streamable HTTP) and what they take of
	// this replica's forward channel (fronts.go).
	keys    *sealbox.Keys
	state   state.Backend
	replica string
	fronts  frontSet
	// noteWriters write what the go-sdk server cannot send (tasknotes.go).
	noteWriters noteWriters

	leaveState func() // ends the subscriptions to the shared state (once)

	logins pendingLogins // logins started through authenticate pseudo-tools
	subs   subscriptions // upstream resource subscriptions (resources.go)
	levels logLevels     // downstream sessions' log levels (resources.go)
	held   *heldCalls    // calls held across a client's retries (held.go)

	// Graceful shutdown (drain.go).
	drainTimeout atomic.Int64 // time.Duration (SetDrainTimeout)
	calls        *inflight
	callDone     func() // calls.done, bound once (a method value per request is an allocation)
	drainMu      sync.Mutex
	draining     bool
	abort        context.Context // cancelled when the drain deadline passes
	cancelAbort  context.CancelFunc

	listens listenStreams // subscriptions/listen streams' caps, idle end and drain (listen.go)
	// userListens are the listen streams of gateway users running here
	// (userlists.go: a per-user server's list_changed).
	userListens userListens
	// userChanges hands the per-user servers' list_changed on to their
	// users' sessions, off the upstream connections (userlists.go).
	userChanges userChanges
	// userUpdates hands the per-user servers' resources/updated on to
	// their users' subscribed sessions (userResourceUpdated).
	userUpdates userChanges

	starting atomic.Bool // servers are connecting at start (connecting.go)
	// started is closed once the connects at start have settled and been
	// synced in (connecting.go); nil before ConnectAll.
	started atomic.Pointer[chan struct{}]
	// startedAt is when ConnectAll began (set before started, read after
	// it); startGrace is Options.StartGrace.
	startedAt  time.Time
	startGrace time.Duration
	synced     syncSignal // fired after each Sync (connecting.go)

	search *searchState // the tool-search mode's index, or nil (toolsearch.go)

	audit *audit.Log // or nil (audit.go)

	users atomic.Bool // Options.Users, or ServeUsers (a front with inbound OAuth)

	tel     *telemetry.Telemetry // Options.Telemetry: nil, or disabled, is off
	carries carries              // relayed calls' spans passed on to the go-sdk (telemetry.go)

	// Lifetime (close.go): life ends at Close; the sync loop runs until
	// then and closes loopDone; leaveHost undoes New's registrations with
	// the host.
	life      context.Context
	endLife   context.CancelFunc
	loopDone  chan struct{}
	leaveHost func()
	closeOnce sync.Once
}

// RelayedCalls reports how many tools/call requests took the relay path
// (forwarded without decoding) rather than the go-sdk server.
func (g *Gateway) RelayedCalls() uint64 { return g.relayed.Load() }

// New returns a gateway for h. Call Sync before serving; from then on a
// loop the gateway runs keeps what is served in sync with the registry.
// Close releases the gateway.
func New(h *host.Host, opts *Options) *Gateway {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = config.DefaultDrainTimeout
	}
	flagNaming := o.Naming
	if o.Naming == "" {
		o.Naming = h.Config().Settings.Naming
	}
	var ep *config.Endpoint
	if o.Endpoint != "" {
		if ep = h.Config().Endpoint(o.Endpoint); ep != nil && ep.Naming != "" {
			o.Naming = ep.Naming
		}
	}
	if o.Keys == nil {
		o.Keys = sealbox.Random()
	}
	if o.State == nil {
		o.State, _ = state.NewLocal(nil, "") // (fails only reading a pins file)
	}
	var rid [6]byte
	rand.Read(rid[:])
	g := &Gateway{h: h, log: o.Logger, flagNaming: flagNaming, exposed: newExposure(), changed: make(chan struct{}, 1),
		askKeys: o.Keys.MACKeys(cluster.RequestStatePurpose), keys: o.Keys, state: o.State,
		replica: hex.EncodeToString(rid[:]),
		calls:   newInflight(), held: newHeldCalls(), audit: o.Audit, tel: o.Telemetry}
	g.callDone = g.calls.done
	g.naming.Store(&o.Naming)
	g.endpoint = o.Endpoint
	g.ep.Store(ep)
	if o.SoleClient {
		g.soleSeen = make(chan struct{})
	}
	g.users.Store(o.Users)
	g.userRoots = o.UserClients
	if g.userRoots == nil {
		g.userRoots = &UserClients{}
	}
	g.drainTimeout.Store(int64(o.DrainTimeout))
	g.startGrace = o.StartGrace
	if g.startGrace <= 0 {
		g.startGrace = DefaultStartGrace
	}
	g.abort, g.cancelAbort = context.WithCancel(context.Background())
	g.held.bind(g) // (heldforward.go: held calls' ids carry the replica)
	g.held.box = o.Keys.Box(cluster.HeldForwardPurpose)
	if t := o.Replicas.AckWait; t > 0 {
		g.held.ackWait = t
	}
	if t := o.Replicas.Pulse; t > 0 {
		g.held.pulse = t
	}
	if t := o.Replicas.Silence; t > 0 {
		g.held.silence = t
	}
	// A live owner pulses at least twice within the silence, and acks
	// within the wait.
	g.held.silence = max(g.held.silence, 2*g.held.pulse)
	g.held.ackWait = max(g.held.ackWait, g.held.pulse)
	unsubFwd := g.state.Subscribe(cluster.ForwardChannel(g.replica), g.forwarded)
	unsubTok := g.state.Subscribe(cluster.TokensChannel, g.credentialsStored)
	g.leaveState = sync.OnceFunc(func() { unsubFwd(); unsubTok() })
	g.srv = mcp.NewServer(&mcp.Implementation{Name: "mcphost", Version: host.Version}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
			Logging:     &mcp.LoggingCapabilities{},
		},
		Logger:                  hclogslog.New(g.log),
		InitializedHandler:      g.initialized,
		RootsListChangedHandler: g.rootsChanged,
		CompletionHandler:       g.complete,
		SubscribeHandler:        g.subscribe,
		UnsubscribeHandler:      g.unsubscribe,
	})
	g.addSkillMethods()
	g.srv.AddReceivingMiddleware(g.appsMiddleware)       // (innermost: inside the caller's; resources.go)
	g.srv.AddReceivingMiddleware(g.skillsMiddleware)     // (inside the caller's; skills.go)
	g.srv.AddReceivingMiddleware(g.loginRetryMiddleware) // (inside the caller's; loginretry.go)
	g.srv.AddReceivingMiddleware(g.drainMiddleware, g.callerMiddleware, g.startupMiddleware, g.unknownToolMiddleware, g.instructionsMiddleware, g.logLevelMiddleware, g.decisionMiddleware)
	// (Outermost but for telemetry: it wraps the initialize result the
	// others give, tasks.go.)
	g.srv.AddReceivingMiddleware(g.tasksCapsMiddleware)
	g.srv.AddSendingMiddleware(g.sendingMiddlewares()...)
	if o.ToolSearch {
		g.enableToolSearch()
	}
	if g.tel.Enabled() {
		// Added after the others but executionMiddleware, so it wraps
		// them all: it sees a request before them, and their answer last
		// (executionMiddleware only turns a tools/list result into its
		// JSON, after it).
		g.srv.AddReceivingMiddleware(g.telemetryMiddleware)
	}
	// Outermost: it changes the type of a tools/list result (execution.go).
	g.srv.AddReceivingMiddleware(g.executionMiddleware)
	g.life, g.endLife = context.WithCancel(context.Background()) // (before any handler that may use it)
	offChange := h.Registry().OnChange(func(string) {
		select {
		case g.changed <- struct{}{}:
		default:
		}
	})
	offNotes := h.OnServerNotification(&host.NotificationHandlers{
		ResourceUpdated:     g.resourceUpdated,
		Log:                 g.upstreamLog,
		UserListChanged:     g.userListChanged,
		UserResourceUpdated: g.userResourceUpdated,
	})
	g.leaveHost = func() { offChange(); offNotes() }
	g.loopDone = make(chan struct{})
	go g.syncLoop() // owned by the gateway: Close ends it
	g.tasks.start(g)
	return g
}

// DrainTimeout returns how long a drain waits for the requests in flight.
func (g *Gateway) DrainTimeout() time.Duration { return time.Duration(g.drainTimeout.Load()) }

// SetDrainTimeout changes the drain timeout (a reloaded settings {
// drain_timeout }); d <= 0 means config.DefaultDrainTimeout.
func (g *Gateway) SetDrainTimeout(d time.Duration) {
	if d <= 0 {
		d = config.DefaultDrainTimeout
	}
	g.drainTimeout.Store(int64(d))
}

// Server returns the underlying go-sdk server.
func (g *Gateway) Server() *mcp.Server { return g.srv }

// stripProtocolMeta removes the upstream's protocol-reserved _meta keys
// (such as its serverInfo): downstream, the gateway is the server.
func stripProtocolMeta(m mcp.Meta) { mcpmeta.Strip(m) }

func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r
}

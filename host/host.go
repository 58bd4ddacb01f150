// Package host is mcphost as a library: it connects to the configured MCP
// servers, merges their tools, prompts and resources into one registry, and
// calls tools through it.
//
//	cfg, diags := config.Load(nil)
//	if diags.HasErrors() { ... }
//	h, err := host.New(cfg, nil)
//	defer h.Close()
//	tools, problems := h.Tools(ctx)
//	res, err := h.CallTool(ctx, "mcp__everything__echo", map[string]any{"message": "hi"}, nil)
//
// What only a gateway serving the host to MCP clients needs (its relay,
// decisions for its users, replicas' logins) is in the Host's Serving view.
package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/intercept/sep"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/telemetry"
)

// Version is the host's version as reported to servers and clients.
var Version = "0.1.0-dev"

// Options configures a Host. Nil options mean defaults.
type Options struct {
	// Logger receives the host's logs. OPTIONAL: no logging.
	Logger hclog.Logger
	// LookupEnv reads the host environment for stdio servers. OPTIONAL: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Environ lists the host environment (as os.Environ) for the hint of a
	// stdio server's connect timeout (the names of the variables it did
	// not get). OPTIONAL: os.Environ when LookupEnv is nil too, else none.
	Environ func() []string
	// OutputDir is where oversized results and resource blobs are written.
	// OPTIONAL: the config's output_dir, else $XDG_CACHE_HOME/mcphost/output,
	// else ~/.cache/mcphost/output.
	OutputDir string
	// OnElicit answers elicitation requests that servers send during calls.
	// OPTIONAL: without it, elicitation is not offered to servers.
	//
	// A form request (Params.Mode "" or "form") asks for the fields of
	// Params.RequestedSchema; a URL request (Mode "url") asks the user to
	// open Params.URL, and is also how a server's -32042 "URL elicitation
	// required" error reaches the caller: after an accept, the call is retried
	// once the server reports the elicitation complete.
	OnElicit func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// OnCreateMessage answers sampling requests (sampling/createMessage) that
	// servers send during calls. OPTIONAL: without it, sampling is not offered
	// to servers.
	OnCreateMessage func(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// OnListRoots answers a server's roots/list outside any call (a server
	// that asks at session start): for the connection of user u (nil: a
	// shared one). A nil result leaves it to settings { roots }. OPTIONAL.
	OnListRoots func(ctx context.Context, server string, u *conn.User) (*mcp.ListRootsResult, error)
	// ClientCapabilities are offered to servers of protocol versions before
	// 2026-07-28, beyond what OnElicit and OnCreateMessage imply: what the
	// Requesters of calls (CallOptions.Requester) may answer. A gateway offers
	// what its clients may have; each request it cannot route to a client
	// that has the capability is refused. Servers of 2026-07-28 are told each
	// call's own client's capabilities. OPTIONAL.
	ClientCapabilities *mcp.ClientCapabilities
	// OnProcessStart is told the pid of each stdio server process. OPTIONAL.
	OnProcessStart func(server string, pid int)
	// ProtocolVersion is the protocol version upstream sessions are opened
	// at (see conn.Options.ProtocolVersion). OPTIONAL: the configuration's
	// settings { protocol_version }, else the newest version both sides
	// speak.
	ProtocolVersion string
	// TokenStore keeps OAuth tokens across runs. OPTIONAL: in memory only.
	TokenStore hauth.Store
	// PresentAuthURL shows a login URL to the user when the authenticate
	// pseudo-tool is called. OPTIONAL: without it, the call fails with the
	// advice to run `mcphost auth login`.
	PresentAuthURL hauth.Presenter
	// PinsFile keeps the fingerprints of the tool definitions seen, across
	// runs. OPTIONAL: without it, pins last as long as the Host.
	PinsFile string
	// Pins keeps the fingerprints instead of PinsFile: the state the
	// gateway's replicas share (state.Backend.Pins). OPTIONAL.
	Pins state.Pins
	// Ask is asked about a call whose permission decision is ask; true
	// allows it. OPTIONAL: without it, such calls are denied with a message
	// saying how to allow them. AskArguments(ctx) is the call's arguments.
	Ask func(ctx context.Context, tool *registry.Tool, d permissions.Decision) (bool, error)
	// InProcess are built-in servers linked in memory (no process), by
	// server name. Each must also be in the configuration, as
	// config.InProcessServer(name) in config.LoadOptions.Dynamic: there it
	// takes its place among the scopes (a configured server of the same
	// name overrides it, the managed policy applies), and from there it goes
	// through the same registry, permissions, pins and call pipeline as any
	// other server. Close ends their sessions, and waits for their handlers
	// in flight to return (go-sdk's ServerSession.Close), so a handler should
	// honour its context. OPTIONAL.
	InProcess map[string]*mcp.Server
	// Telemetry traces tool calls (with the permission decision, the
	// upstream request and plugin RPCs as children), propagates the trace
	// context upstream, and counts calls, decisions, reconnects, token
	// refreshes and plugin restarts. OPTIONAL: off.
	Telemetry *telemetry.Telemetry
}

// Host is a running mcphost. Its methods are safe for concurrent use.
type Host struct {
	cfg       atomic.Pointer[config.Config] // as last applied (reload.go)
	log       hclog.Logger
	conns     *conn.Manager
	reg       *registry.Registry
	views     userViews                          // per-user registries (views.go)
	plugins   atomic.Pointer[plugins.Runtime]    // nil without plugins
	policy    atomic.Pointer[permissions.Policy] // of cfg
	checks    atomic.Pointer[intercept.Chain]    // hooks and interceptors of cfg (nil: none)
	reloads   reloads                            // (reload.go)
	pins      *pins
	ask       func(ctx context.Context, tool *registry.Tool, d permissions.Decision) (bool, error)
	outputDir string
	present   hauth.Presenter
	lookupEnv func(string) (string, bool) // Options.LookupEnv (hooks' inherit_env)
	// session is the per-process session id hooks and interceptors are
	// told for the CLI's and the library's calls (CallInfo.Session).
	session string

	onElicit        func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	onCreateMessage func(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	notes           notifications
	inProcess       map[string]*mcp.Server // Options.InProcess
	tel             *telemetry.Telemetry   // Options.Telemetry
	serving         Serving                // the gateway's view (Serving)
}

// New returns a host for a loaded configuration. It connects nothing until
// asked (ConnectAll) or used.
func New(cfg *config.Config, opts *Options) (*Host, error) {
	if cfg == nil {
		return nil, errors.New("host.New: config is required")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
		if o.Environ == nil {
			o.Environ = os.Environ
		}
	}
	policy, err := cfg.Policy()
	if err != nil {
		return nil, fmt.Errorf("permission rules: %w", err)
	}
	if err := checkInProcess(cfg, o.InProcess); err != nil {
		return nil, err
	}
	store := o.Pins
	if store == nil {
		var err error
		if store, err = state.NewFilePins(o.PinsFile); err != nil {
			return nil, err
		}
	}
	pn := newPins(store)
	h := &Host{log: o.Logger, outputDir: o.OutputDir, ask: o.Ask, pins: pn, present: o.PresentAuthURL,
		onElicit: o.OnElicit, onCreateMessage: o.OnCreateMessage, inProcess: o.InProcess, tel: o.Telemetry,
		lookupEnv: o.LookupEnv, session: newSessionID()}
	h.serving.h = h
	h.cfg.Store(cfg)
	h.policy.Store(policy)
	if h.outputDir == "" {
		h.outputDir = cfg.Settings.OutputDir
	}
	if h.outputDir == "" {
		h.outputDir = defaultOutputDir(o.LookupEnv)
	}
	h.reg = registry.New(source{h})
	checks, err := h.buildChecks(cfg)
	if err != nil {
		return nil, fmt.Errorf("hooks and interceptors: %w", err)
	}
	h.checks.Store(checks)
	rt, plug, err := h.newPlugins(cfg)
	if err != nil {
		return nil, err
	}
	h.plugins.Store(rt)
	h.conns = conn.NewManager(cfg.Servers, &conn.Options{
		Plugins:            plug.Transports,
		Headers:            plug.Headers,
		Auth:               plug.Auth,
		TokenStore:         o.TokenStore,
		Logger:             o.Logger.Named("conn"),
		LookupEnv:          o.LookupEnv,
		Environ:            o.Environ,
		ClientInfo:         &mcp.Implementation{Name: "mcphost", Version: Version},
		ConcurrencyLocal:   cfg.Settings.ConcurrencyLocal,
		ConcurrencyRemote:  cfg.Settings.ConcurrencyRemote,
		MaxConcurrentCalls: cfg.Settings.MaxConcurrentCalls,
		MaxMessageBytes:    cfg.Settings.MaxMessageBytes,
		OnElicit:           h.connOnElicit(),
		OnCreateMessage:    o.OnCreateMessage,
		OnListRoots:        o.OnListRoots,
		Roots:              cfg.Settings.Roots,
		Capabilities:       o.ClientCapabilities,
		OnResourceUpdated:  h.resourceUpdated,
		OnLog:              h.logMessage,
		OnSession:          h.sessionStarted,
		OnProcessStart:     o.OnProcessStart,
		InProcess:          maps.Clone(o.InProcess),
		OnNewClient:        sep.Register, // SEP-2624 interceptor servers (interceptor { server })
		ProtocolVersion:    cmp.Or(o.ProtocolVersion, cfg.Settings.ProtocolVersion),
		Telemetry:          o.Telemetry,
		OnUserListChanged:  h.userListChanged,
		OnUserResourceUpdated: func(server string, u *conn.User, p *mcp.ResourceUpdatedNotificationParams) {
			for _, nh := range h.noteHandlers() {
				if nh.UserResourceUpdated != nil {
					nh.UserResourceUpdated(server, u.ID(), p)
				}
			}
		},
		OnListChanged: func(server string, kind conn.ChangeKind) {
			invalidate(h.reg, server, kind)
		},
	})
	return h, nil
}

// connOnElicit is the connections' OnElicit: Options.OnElicit with the
// Elicitation hooks around it (nil without Options.OnElicit).
func (h *Host) connOnElicit() func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if h.onElicit == nil {
		return nil
	}
	return h.onElicitOutside
}

func defaultOutputDir(lookup func(string) (string, bool)) string {
	if d, ok := lookup("XDG_CACHE_HOME"); ok && d != "" {
		return filepath.Join(d, "mcphost", "output")
	}
	if home, ok := lookup("HOME"); ok && home != "" {
		return filepath.Join(home, ".cache", "mcphost", "output")
	}
	return filepath.Join(os.TempDir(), "mcphost-output")
}

// Decide returns the permission decision for a registry tool name.
func (h *Host) Decide(name string) permissions.Decision { return h.policy.Load().Decide(name) }

// Config returns the configuration the host runs (as last applied by
// Reload).
func (h *Host) Config() *config.Config { return h.cfg.Load() }

// Registry returns the unified registry.
func (h *Host) Registry() *registry.Registry { return h.reg }

// Connections returns the connection manager.
func (h *Host) Connections() *conn.Manager { return h.conns }

// ConnectAll connects every enabled server (bounded concurrency) and reports
// each as it settles. Failures are recorded per server; none stops the others.
func (h *Host) ConnectAll(ctx context.Context, progress func(name string, st conn.Status)) {
	h.conns.ConnectAll(ctx, progress)
}

// ConnectSome is ConnectAll of the servers only accepts (all, if nil): a
// gateway's named endpoint connects its own servers only.
func (h *Host) ConnectSome(ctx context.Context, only func(name string) bool, progress func(name string, st conn.Status)) {
	h.conns.ConnectSome(ctx, only, progress)
}

// ActiveServers returns the servers that are not disabled, in name order,
// but for interceptor servers (config.Server.InterceptorOnly), whose
// features are not served.
func (h *Host) ActiveServers() []string {
	var out []string
	for _, st := range h.conns.Status() {
		if st.State != conn.StateDisabled && !h.interceptorOnly(st.Name) {
			out = append(out, st.Name)
		}
	}
	return out
}

// ServerStatus is a server's connection status with its tool count. For a
// connected server whose tools could not be listed, Error says why.
type ServerStatus struct {
	conn.Status
	Tools int `json:"tools"`
}

// Servers returns the status of every configured server. Connected servers'
// tools are counted from the registry.
func (h *Host) Servers(ctx context.Context) []ServerStatus {
	ctx = WithoutCaller(ctx) // the host's own connections, never a user's
	var out []ServerStatus
	for _, st := range h.conns.Status() {
		ss := ServerStatus{Status: st}
		if st.State == conn.StateConnected {
			ts, err := h.reg.ServerTools(ctx, st.Name)
			if err != nil {
				// Connected, but its tools are unusable: say why, rather
				// than show a server with no tools.
				ss.Error = redact.String(err.Error())
			}
			ss.Tools = len(ts)
		}
		ss.Instructions = registry.Cap(ss.Instructions, registry.MaxDescriptionLen)
		out = append(out, ss)
	}
	return out
}

// Tools returns the unified tool list of the active servers, and the problems
// found (servers that could not be reached, name collisions, and tools whose
// definition changed since first seen: those are left out until approved).
func (h *Host) Tools(ctx context.Context) ([]*registry.Tool, []registry.Problem) {
	return h.ToolsOf(ctx, h.ActiveServers())
}

// ToolsOf is Tools for the given servers. For a gateway user (WithCaller)
// a per-user server's tools are those of the user's own connection.
func (h *Host) ToolsOf(ctx context.Context, servers []string) ([]*registry.Tool, []registry.Problem) {
	shared, own, view := h.splitServers(ctx, servers)
	tools, problems := h.reg.Tools(ctx, shared)
	tools, problems = mergeTools(ctx, tools, problems, view, own)
	return h.withoutChanged(tools, problems)
}

// withoutChanged pins new tools and moves changed ones, and those whose
// pins cannot be checked, into problems.
func (h *Host) withoutChanged(tools []*registry.Tool, problems []registry.Problem) ([]*registry.Tool, []registry.Problem) {
	blocked := h.pins.observe(tools)
	if len(blocked) == 0 {
		return tools, problems
	}
	kept := tools[:0:0]
	for _, t := range tools {
		err := blocked[t.Name]
		if err == nil {
			kept = append(kept, t)
			continue
		}
		problems = append(problems, registry.Problem{Server: t.Server, Detail: blockedDetail(t.Name, err)})
		if reason := pinsReason(err); reason != "" && h.pins.newReport(reason) {
			h.log.Warn("tools are blocked: their pins cannot be checked", "reason", reason)
		}
	}
	return kept, problems
}

// blockedDetail is the problem of a tool that observe blocked with err.
func blockedDetail(name string, err error) string {
	if errors.Is(err, ErrToolChanged) {
		return fmt.Sprintf("tool %s changed since it was first seen and is blocked; review it and run `mcphost tools approve %s`", name, name)
	}
	return fmt.Sprintf("tool %s is blocked: its pin cannot be checked (%s); review it and run `mcphost tools approve %s`", name, pinsReason(err), name)
}

// pinsReason says why a tool's pin could not be checked ("" for a changed
// tool).
func pinsReason(err error) string {
	if errors.Is(err, ErrToolChanged) {
		return ""
	}
	if mp, ok := errors.AsType[*state.MissingPinsError](err); ok {
		return mp.Reason
	}
	return redact.String(err.Error()) // (the store cannot be reached)
}

// ApproveTool records the current definition of a tool whose definition
// changed, unblocking it.
func (h *Host) ApproveTool(ctx context.Context, name string) error {
	server, _, _ := registry.ParseName(name)
	t, err := h.regFor(ctx, server).Lookup(ctx, name)
	if err != nil {
		return err
	}
	return h.pins.approve(t)
}

// Plugins returns the plugin runtime, or nil if no plugin is configured.
func (h *Host) Plugins() *plugins.Runtime { return h.plugins.Load() }

// Close disconnects every server and stops every server and plugin process.
func (h *Host) Close() error {
	err := h.conns.Close()
	h.reloads.wg.Wait() // (the plugin runtimes a reload replaced are closed)
	if rt := h.plugins.Load(); rt != nil {
		err = errors.Join(err, rt.Close())
	}
	return err
}

// source adapts the connections to registry.Source.
type source struct{ h *Host }

func (s source) ListTools(ctx context.Context, server string) ([]*mcp.Tool, error) {
	tools, err := listAll(ctx, s.h, server, "tools",
		func(c *mcp.ServerCapabilities) bool { return c.Tools != nil },
		func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.Tool, error] {
			return cs.Tools(conn.ListingTools(ctx), nil) // (the tools' "execution" kept: conn/execution.go)
		})
	if errors.Is(err, conn.ErrNeedsAuth) {
		if c := s.h.conns.For(ctx, server); c != nil && (c.Config().OAuth != nil || c.Config().AuthScheme != "") {
			// The login pseudo-tool stands in for the tools until login.
			return []*mcp.Tool{authTool(server)}, nil
		}
	}
	if c := s.h.conns.Get(server); err == nil && c != nil && c.Config().Tools != nil {
		// The server block's tools { include, exclude }: what is left out
		// is not in the registry, so it is neither listed nor called.
		f := c.Config().Tools
		tools = slices.DeleteFunc(tools, func(t *mcp.Tool) bool { return t != nil && !f.Allows(t.Name) })
	}
	return tools, err
}

func (s source) ListPrompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	return listAll(ctx, s.h, server, "prompts",
		func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil },
		func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.Prompt, error] {
			return cs.Prompts(ctx, nil)
		})
}

func (s source) ListResources(ctx context.Context, server string) ([]*mcp.Resource, error) {
	return listAll(ctx, s.h, server, "resources",
		func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.Resource, error] {
			return cs.Resources(ctx, nil)
		})
}

func (s source) ListResourceTemplates(ctx context.Context, server string) ([]*mcp.ResourceTemplate, error) {
	return listAll(ctx, s.h, server, "resource templates",
		func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[*mcp.ResourceTemplate, error] {
			return cs.ResourceTemplates(ctx, nil)
		})
}

// listAll reads every page of one of a server's lists, or nothing if the
// server does not offer that capability.
func listAll[T any](ctx context.Context, h *Host, server, what string,
	offered func(*mcp.ServerCapabilities) bool,
	items func(context.Context, *mcp.ClientSession) iter.Seq2[T, error]) ([]T, error) {
	if h.interceptorOnly(server) {
		return nil, nil // (its features are not served: nothing to look up either)
	}
	var out []T
	err := h.conns.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		out = nil
		if caps := cs.InitializeResult().Capabilities; caps == nil || !offered(caps) {
			return nil
		}
		for item, err := range items(ctx, cs) {
			if err != nil {
				return fmt.Errorf("listing %s of %s: %w", what, server, err)
			}
			out = append(out, item)
		}
		return nil
	})
	return out, err
}

package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

func (a *app) serveCmd() *cobra.Command {
	var httpAddr string
	var allowNonLoopback, noAuth, stateless, toolSearch bool
	var naming, endpoint string
	var origins []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the unified registry as an MCP server (stdio, or streamable HTTP with --http)",
		Long: `Serves the unified tool registry as an MCP server: on stdio by default, or on
streamable HTTP at http://ADDR/mcp with --http ADDR. The HTTP listener must be a
loopback address unless --allow-non-loopback is given. Everything the servers
offer passes through: tools, prompts, resources and templates (named per
--naming), completions, subscriptions, logging, progress and cancellation;
what a server asks during a call (elicitation, sampling) goes to the client
that made the call. Clients of 2025-11-25 and 2026-07-28 are both served; on
stdio, the servers are connected in the client's era (read from its first
message, an initialize request for clients before 2026-07-28).

With --tool-search, tools/list shows two tools of the gateway's own instead of
the registry: search_tools {query, limit?, server?} returns the tools that best
match a task described in words (name, description, input schema), and
call_tool {name, arguments?} calls one through the same permission checks as a
direct call. For registries too large to hand a model whole. The registry's
tools can still be called directly; tools the permission rules deny are never
found.

SIGTERM or SIGINT drains: no new requests are taken, requests in flight get
up to drain_timeout (settings; default 10s) to finish, then are answered with
an error, the servers are stopped (SIGINT, then SIGTERM, then SIGKILL) and
the process exits.

SIGHUP, or a change of any file the configuration is made of (every scope's
file, the plugin lock file, the plugin and secrets directories), reloads the
configuration: it is loaded and validated first, and an invalid one is
reported and not applied. Otherwise what changed is applied: added servers
are started, removed and changed ones get their calls in flight up to
drain_timeout before they are stopped (changed ones are restarted), and
permission rules apply from the next call; clients are told the lists
changed. Changes to the gateway block, the listener and a few settings
(named in the log) need a restart.

Endpoint blocks (endpoint "NAME" { servers = [...], tools { include, exclude },
naming = ... }) are served at http://ADDR/mcp/NAME beside the whole gateway at
/mcp, with the same authentication and limits; --endpoint NAME serves one of
them on stdio. A client of an endpoint is served its servers' tools (as its
tools block lets through, named per its naming), prompts and resources only;
anything else is unknown to it.

Over HTTP, /healthz answers while the process serves and /readyz when it
should get requests (settings { ready_when }: "all", "any" (default) or
"none" of the servers connected), both without a token.

Over HTTP every request needs "Authorization: Bearer TOKEN". The token is read
from $MCPHOST_SERVE_TOKEN, or generated and printed at start; --no-auth turns
this off. Browser requests need their Origin to be the gateway's own (http://HOST:PORT as
addressed) or allowed with --allow-origin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if httpAddr != "" && !allowNonLoopback {
				if err := checkLoopback(httpAddr); err != nil {
					return err
				}
			}
			if naming != "" && !slices.Contains(config.NamingModes(), naming) {
				return fmt.Errorf("--naming %q: use one of %s", naming, strings.Join(config.NamingModes(), ", "))
			}
			if endpoint != "" && httpAddr != "" {
				return errors.New("--endpoint applies to stdio; over --http every endpoint block is served at /mcp/NAME")
			}
			if stateless && httpAddr == "" {
				return errors.New("--stateless applies to --http only")
			}
			cfg, err := a.loadConfig() // (its errors show before the client is awaited)
			if err != nil {
				return err
			}
			if endpoint != "" && cfg.Endpoint(endpoint) == nil {
				return unknownEndpoint(cfg, endpoint)
			}
			// An empty gateway says so, and where it looked (serve_empty.go).
			noServersNotice(a.stderr, cfg, config.Locate(a.lookupEnv, a.workDir), a.workDir)
			if httpAddr != "" && !noAuth && (cfg.Gateway == nil || cfg.Gateway.OAuth == nil) {
				if token, _ := a.lookupEnv("MCPHOST_SERVE_TOKEN"); token != "" {
					if err := checkServeToken(token); err != nil {
						return err
					}
				}
			}
			log := a.logger()
			// The gateway's clients answer what servers ask during calls:
			// offer servers all of it; each request goes to the client that
			// made the call, and is refused if that client cannot.
			offer := &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
				Sampling:    &mcp.SamplingCapabilities{},
				RootsV2:     &mcp.RootCapabilities{},
				// The extensions whose requests the gateway makes of
				// servers for its clients (skills/list, skills/get,
				// resources/directory/read).
				Extensions: gateway.ClientExtensions(),
			}
			var in io.ReadCloser
			var out io.WriteCloser
			upstreamVersion := cfg.Settings.ProtocolVersion // (set: the user's choice)
			if httpAddr == "" {
				var inPolled, outPolled bool
				in, inPolled = pollable(os.Stdin)
				out, outPolled = pollable(os.Stdout)
				defer in.Close() // (again: also when serving never starts)
				defer out.Close()
				if _, set := a.lookupEnv("GOMAXPROCS"); !set && inPolled && outPolled {
					// One client, whose messages the gateway handles one
					// at a time: with one P, a message handed between
					// goroutines (read loops, workers) needs no wake-up of
					// another thread. Measured (make bench, stdio front,
					// with polled stdio): about a tenth less CPU per call,
					// with no loss of calls/s, also with 50 servers.
					// (Process-wide: serve on stdio is the process's one
					// job.)
					runtime.GOMAXPROCS(1)
				}
				// The one client's first message says its protocol era: the
				// upstream sessions are opened in it (see stdio.Client),
				// unless settings { protocol_version } says otherwise; and
				// servers are told the client's capabilities at initialize.
				sc, err := stdio.ReadClient(ctx, in)
				if err != nil {
					return nil // stopped before the client said anything
				}
				in, offer = sc.Input, sc.Offer(offer)
				if upstreamVersion == "" {
					upstreamVersion = sc.UpstreamVersion
					if upstreamVersion != "" {
						log.Debug("the client's protocol era is before 2026-07-28: upstream sessions are opened in it", "protocol", upstreamVersion)
					}
				}
			}
			tel, stopTelemetry, err := a.startTelemetry(ctx, cfg)
			if err != nil {
				return err
			}
			defer stopTelemetry()
			// A server's roots/list outside any call: the gateway asks its
			// one client on stdio (gateway.ListRootsOutside), else
			// settings { roots } answers.
			var gw atomic.Pointer[gateway.Gateway] // (set once the gateway exists)
			h, err := a.hostOn(cfg, false, func(o *host.Options) {
				o.ProtocolVersion = upstreamVersion
				o.ClientCapabilities = offer
				o.Telemetry = tel
				o.OnListRoots = func(ctx context.Context, server string, u *conn.User) (*mcp.ListRootsResult, error) {
					if g := gw.Load(); g != nil {
						return g.ListRootsOutside(ctx, server, u)
					}
					return nil, nil
				}
			})
			if err != nil {
				return err
			}
			defer h.Close()
			tel.ObserveConnections(func(yield func(state string, n int)) {
				n := map[conn.State]int{}
				for _, st := range h.Connections().Status() {
					n[st.State]++
				}
				for state, count := range n {
					yield(state.String(), count)
				}
			})
			settings := h.Config().Settings
			auditLog, closeAudit, err := openAudit(cfg, log)
			if err != nil {
				return err
			}
			defer closeAudit()
			users := httpAddr != "" && cfg.Gateway != nil && cfg.Gateway.OAuth != nil
			st, keys, err := a.sharedState(ctx, cfg) // (opened by hostOn)
			if err != nil {
				return err
			}
			gopts := gateway.Options{Logger: log.Named("serve"), SoleClient: httpAddr == "", DrainTimeout: settings.DrainTimeout, Naming: naming, ToolSearch: toolSearch, Audit: auditLog, Users: users, Telemetry: tel, UserClients: &gateway.UserClients{},
				Keys: keys, State: st}
			own := gopts
			own.Endpoint = endpoint // (stdio only: then only its servers are connected, the others cannot be used)
			g := gateway.New(h, &own)
			defer g.Close() // (last: after the connects and the reloader have stopped)
			gw.Store(g)
			// Clients are served at once, not after the slowest server's
			// connect (up to its connect_timeout): their initialize is
			// answered, servers are served as they connect, and the
			// clients told by list_changed.
			cctx, stopConnecting := context.WithCancel(ctx)
			connected := g.ConnectAll(cctx, a.connectProgress(h))
			defer func() { stopConnecting(); <-connected }()
			problems := g.Sync(ctx)
			for _, p := range problems {
				log.Warn("registry problem", "server", p.Server, "detail", p.Detail)
			}
			var hopts *streamable.Options
			var eps *endpoints
			if httpAddr != "" {
				token := ""
				if !noAuth && (cfg.Gateway == nil || cfg.Gateway.OAuth == nil) {
					if token, _ = a.lookupEnv("MCPHOST_SERVE_TOKEN"); token == "" {
						var b [32]byte
						rand.Read(b[:])
						token = hex.EncodeToString(b[:])
					}
				}
				hopts = &streamable.Options{Token: token, AllowedOrigins: origins,
					SessionIdleTimeout: settings.SessionIdleTimeout, MaxSessions: settings.MaxSessions, Stateless: stateless}
				if err := gatewayOptions(cfg, st, hopts); err != nil {
					return err
				}
				// The named endpoints, at /mcp/NAME (serve_endpoints.go).
				eps = newEndpoints(h, gopts, hopts, log.Named("serve.endpoint"))
				defer eps.close() // (before g's Close: after the listener stopped)
				eps.apply(ctx, cfg)
			}
			// SIGHUP, or a change of a file the configuration is made of,
			// reloads it (reload.go).
			rl := newReloader(a, h, g, log.Named("reload"))
			rl.onReload = func(outcome string) { tel.RecordReload(ctx, outcome) }
			rl.onApplied = func(ctx context.Context, cfg *config.Config) {
				if eps == nil {
					g.Resync() // (serve --endpoint: its definition may have changed)
					return
				}
				eps.apply(ctx, cfg)
				for _, eg := range eps.gateways() {
					eg.SetDrainTimeout(cfg.Settings.DrainTimeout)
				}
			}
			a.sigs.onHangup(rl.request)
			defer a.sigs.onHangup(nil)
			rctx, stopReload := context.WithCancel(ctx)
			reloadDone := make(chan struct{})
			go func() { defer close(reloadDone); rl.run(rctx) }()
			defer func() { stopReload(); <-reloadDone }()
			if httpAddr == "" {
				return stdio.Serve(ctx, g, in, out)
			}
			return a.serveHTTP(ctx, g, h, httpAddr, connected, hopts, &streamable.HealthOptions{Reload: rl.Status}, tel.Handler(), eps)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8080) instead of stdio")
	cmd.Flags().BoolVar(&allowNonLoopback, "allow-non-loopback", false, "allow --http on an address other than loopback")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "serve HTTP without a bearer token (anyone who can connect may call every tool)")
	cmd.Flags().StringVar(&naming, "naming", "", "how tools and prompts are named: `prefixed` (mcp__SERVER__NAME), conditional (the servers' own names while exactly one server is active), bare (always their own names; a name several servers offer is served by none) or server (SERVER__NAME, for clients that prefix names themselves); default: settings { naming }, else prefixed")
	cmd.Flags().BoolVar(&stateless, "stateless", false, "serve HTTP with no per-session state: every request stands alone (2026-07-28 clients); older clients lose server requests during calls, subscriptions and notifications")
	cmd.Flags().BoolVar(&toolSearch, "tool-search", false, "list only search_tools and call_tool: clients find the registry's tools by searching instead of receiving the whole list")
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "serve the endpoint block `NAME` on stdio (its servers, tools and naming only); over --http every endpoint is served at /mcp/NAME")
	cmd.Flags().StringArrayVar(&origins, "allow-origin", nil, "accept browser requests from this `ORIGIN` (repeatable), e.g. http://localhost:6274")
	return cmd
}

// minServeTokenLen is the shortest MCPHOST_SERVE_TOKEN accepted: 16
// characters (the generated token has 64 hex digits, 256 bits).
const minServeTokenLen = 16

// errWeakServeToken classifies an MCPHOST_SERVE_TOKEN that is refused.
var errWeakServeToken = errors.New("MCPHOST_SERVE_TOKEN is not usable")

// checkServeToken refuses a static bearer token that is too short to guess
// at, or holds characters an Authorization header cannot carry as one
// token (space, control or non-ASCII). The error never quotes the token.
func checkServeToken(token string) error {
	if n := utf8.RuneCountInString(token); n < minServeTokenLen {
		return fmt.Errorf("%w: it has %d characters, at least %d are required; use a random one (e.g. openssl rand -hex 32), or unset it and mcphost serve generates and prints one", errWeakServeToken, n, minServeTokenLen)
	}
	for _, c := range token {
		if c <= ' ' || c > '~' {
			return fmt.Errorf("%w: it holds a space, control or non-ASCII character, which an Authorization header cannot carry; use letters, digits and -._~+/ (e.g. openssl rand -hex 32)", errWeakServeToken)
		}
	}
	return nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %q is not a loopback address; use 127.0.0.1:PORT, or pass --allow-non-loopback", addr)
	}
	return nil
}

// serveHTTP serves g on addr until ctx is done. It serves at once, while
// the servers connect; the banner is printed once settled is closed (every
// server connected or failed).
func (a *app) serveHTTP(ctx context.Context, g *gateway.Gateway, h *host.Host, addr string, settled <-chan struct{}, opts *streamable.Options, health *streamable.HealthOptions, metrics http.Handler, eps *endpoints) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// The server outlives ctx by the drain: requests in flight must not be
	// cancelled by the signal that starts the shutdown.
	sctx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	mux := http.NewServeMux()
	front := streamable.New(g) // (its sessions end with g's: CloseSessions)
	mux.Handle("/mcp", front.Handler(opts))
	mux.Handle(endpointsPrefix, eps) // (named endpoints: /mcp/NAME)
	mountGateway(mux, opts)
	front.MountHealth(mux, health)
	if metrics != nil {
		mux.Handle("/metrics", streamable.GuardHost(metrics)) // (telemetry { prometheus = true })
	}
	srv := &http.Server{
		Handler:           mux,
		BaseContext:       func(net.Listener) context.Context { return sctx },
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-settled:
		g.Sync(ctx) // (the banner's lists are those served)
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		return shutdownHTTP(srv, g, errc, eps)
	}

	statuses := h.Servers(ctx)
	connected := 0
	for _, s := range statuses {
		if s.State == conn.StateConnected {
			connected++
		}
	}
	a.printServers(statuses, nil)
	tools, _ := h.Tools(ctx)
	fmt.Fprintf(a.stdout, "\nUnified registry: %d tool(s)\n", len(tools))
	for _, t := range tools {
		fmt.Fprintf(a.stdout, "  %s\n", t.Name)
	}
	if g.ToolSearch() {
		fmt.Fprintf(a.stdout, "\nTool search: clients are listed %s and %s in place of these.\n", gateway.SearchToolName, gateway.CallToolName)
	}
	fmt.Fprintf(a.stdout, "\n%d of %d server(s) connected. Serving the unified registry at:\n  http://%s/mcp\n", connected, len(statuses), ln.Addr())
	fmt.Fprint(a.stdout, eps.banner(ln.Addr().String()))
	switch env, _ := a.lookupEnv("MCPHOST_SERVE_TOKEN"); {
	case opts.OAuth != nil:
		fmt.Fprint(a.stdout, describeGateway(h.Config(), opts))
	case opts.Token == "":
		fmt.Fprintln(a.stdout, "Warning: no bearer token is required (--no-auth).")
	case opts.Token == env:
		// The user's own secret: never echoed to the terminal or a log.
		fmt.Fprintln(a.stdout, "Send with every request:\n  Authorization: Bearer <the token in $MCPHOST_SERVE_TOKEN>")
	default: // generated for this run: the only way to learn it
		fmt.Fprintf(a.stdout, "Send with every request:\n  Authorization: Bearer %s\n", opts.Token)
	}
	if opts.OAuth == nil && opts.RateLimit != nil {
		fmt.Fprint(a.stdout, describeGateway(h.Config(), opts))
	}
	if f, ok := a.stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		return shutdownHTTP(srv, g, errc, eps)
	}
}

// shutdownHTTP drains the gateway: the listener closes (no new connections),
// requests in flight finish or, at the drain deadline, are answered with an
// error; then every session ends (closing standalone streams) and the
// remaining connections are closed.
func shutdownHTTP(srv *http.Server, g *gateway.Gateway, served <-chan error, eps *endpoints) error {
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }() // returns once every connection is idle
	done := make(chan struct{})
	go func() { defer close(done); eps.close() }() // (the endpoints' gateways drain alongside)
	g.Drain(context.Background())
	g.CloseSessions()
	<-done
	select {
	case <-shut:
	case <-time.After(2 * time.Second):
		srv.Close()
		<-shut
	}
	<-served
	return nil
}

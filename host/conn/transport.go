package conn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/internal/hclogslog"
)

// connect opens one session, bounded by the connect timeout and the
// concurrency limit for the server's kind.
func (c *Conn) connect(ctx context.Context) (*mcp.ClientSession, rawStarter, error) {
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
	cs, raw, err := c.dial(ctx, timeout, c.version)
	if err != nil && c.version != "" && c.version < NewProtocol && c.primary == nil && refusedInitialize(err) {
		// A server may speak only versions from NewProtocol on, and refuse
		// an initialize (Options.ProtocolVersion): it is connected at the
		// newest version instead, as without that option. (The second
		// session has its own fallback, legacy.go.)
		c.log.Warn("the server refused an initialize at the configured protocol version; connecting at the newest", "protocol", c.version, "error", err)
		cs, raw, err = c.dial(ctx, timeout, "")
	}
	return cs, raw, err
}

// refusedInitialize reports whether err is a server's JSON-RPC refusal of
// an initialize request: method not found, invalid params, or an
// unsupported protocol version — not a transport failure (which the go-sdk
// also reports as a JSON-RPC error, code -32005) or a server's internal
// error.
func refusedInitialize(err error) bool {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// dial opens one session at protocol version ("": the newest both sides
// speak), under ctx, which ends after timeout.
func (c *Conn) dial(ctx context.Context, timeout time.Duration, version string) (*mcp.ClientSession, rawStarter, error) {
	c.log.Debug("connecting", "transport", c.cfg.Transport)
	t, authSeen, err := c.transport(ctx)
	if err != nil {
		return nil, nil, err
	}
	opts := c.clientOptions()
	client := mcp.NewClient(c.m.opts.ClientInfo, opts)
	client.AddReceivingMiddleware(c.rootsMiddleware)
	addExtensionMethods(client)
	if f := c.m.opts.OnNewClient; f != nil {
		f(client)
	}
	user := ""
	if c.user != nil {
		user = c.user.user().ID()
	}
	rootsChange := opts.Capabilities != nil && (opts.Capabilities.RootsV2 != nil && opts.Capabilities.RootsV2.ListChanged || opts.Capabilities.Roots.ListChanged)
	forget := c.m.rootClients.adopt(client, user, rootsChange)
	tracked := false
	defer func() {
		if !tracked {
			forget() // (no session: the connect failed)
		}
	}()
	ct := t
	switch t.(type) {
	case *mcp.StreamableClientTransport: // routes in its HTTP client (sseRouter)
	case *stdioTransport: // routes on its read loop
	default:
		ct = routingTransport{t, c}
	}
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cctx, end := connectContext(ctx)
	cs, err := client.Connect(cctx, ct, so)
	end()
	if err != nil {
		pt, _ := t.(*pluginTransport)
		if aerr := c.authFailure(err, pt != nil && pt.authFailed, authSeen != nil && authSeen.Load()); aerr != nil {
			return nil, nil, aerr
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = c.timeoutError(t, timeout)
		}
		// (The go-sdk closes the connection when initialize fails, but not
		// on every error after it: a server's process must not outlive a
		// failed connect, least of all one that is retried.)
		switch t := t.(type) {
		case *stdioTransport:
			if t.conn != nil {
				t.conn.Close()
			}
			if t.proc != nil {
				t.proc.settle(500 * time.Millisecond)
			}
		case *pluginTransport:
			if t.conn != nil {
				t.conn.Close()
			}
		}
		if c.primary != nil && refusedInitialize(err) {
			c.noLegacy("the server refused an initialize at " + LegacyProtocol)
			return nil, nil, errNoLegacy
		}
		return nil, nil, c.describe(fmt.Errorf("connecting to %s: %w", c.cfg.Name, err))
	}
	if c.primary != nil && !c.legacyConnected(ctx, cs) {
		cs.Close()
		return nil, nil, errNoLegacy
	}
	c.log.Info("connected", "transport", c.cfg.Transport, "protocol", cs.InitializeResult().ProtocolVersion)
	tracked = true
	c.m.rootClients.connected(client, cs)
	c.m.wg.Go(func() {
		cs.Wait()
		forget()
	})
	var raw rawStarter
	switch t := t.(type) {
	case *stdioTransport:
		raw = t.conn
	case *pluginTransport:
		raw = t.conn
	case *mcp.StreamableClientTransport:
		if r, ok := t.HTTPClient.Transport.(*sseRouting); ok {
			raw = c.newHTTPLane(t, cs, r.meta, opts)
		}
	}
	return cs, raw, nil
}

// connectContext is ctx without its values, but for its trace span, and
// with its cancellation: what a connect is given. A connect is often made
// while a downstream request is served (a first use, a login through the
// gateway), and the go-sdk's streamable client takes the protocol version
// header of its requests from the same context key its server side sets on
// every request it serves (go-sdk v1.8.0): the upstream initialize would
// carry the downstream client's version and be refused by a server that
// does not speak it. end releases it.
func connectContext(ctx context.Context) (_ context.Context, end func()) {
	d := trace.ContextWithSpan(context.Background(), trace.SpanFromContext(ctx))
	d, cancel := context.WithCancelCause(d)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return d, func() {
		stop()
		cancel(nil)
	}
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
		if c.plug.Headers == nil {
			return nil, nil, fmt.Errorf("server %s has a headers_helper, but no headers plugin is available", s.Name)
		}
		dyn, err := c.plug.Headers.Headers(ctx, s)
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
	case config.TransportInProcess:
		srv := c.m.opts.InProcess[s.Name]
		if srv == nil {
			return nil, nil, fmt.Errorf("in-process server %s has no implementation (host.Options.InProcess)", s.Name)
		}
		return &inProcessTransport{server: srv, life: c.m.ctx}, nil, nil
	case config.TransportStdio:
		var fileEnv map[string]string
		if s.EnvFile != "" {
			var err error
			if fileEnv, err = readEnvFile(s.Name, s.EnvFile, s.EnvFileDigest()); err != nil {
				return nil, nil, err
			}
		}
		buf := newTailBuffer(stderrTail)
		c.mu.Lock()
		c.stderr = buf
		c.mu.Unlock()
		// The initialize's answer (one of the first responses: a
		// server/discover the server refused may come first) says whether
		// the server declares 2025-11-25's tasks, which the go-sdk client
		// does not decode (as routingConn reads it for other transports).
		// (Read on the connection's one read loop.)
		opening, opened := 0, false
		return &stdioTransport{
			route: func(msg jsonrpc.Message) jsonrpc.Message {
				if resp, ok := msg.(*jsonrpc.Response); ok && !opened && opening < 3 {
					opening++
					opened = c.noteCapabilities(resp.Result)
				}
				msg, _ = c.routeNote(msg, nil)
				return msg
			},
			sent:    c.toolsLists.sent,
			log:     c.log,
			command: s.Command,
			args:    s.Args,
			env:     childEnv(runtime.GOOS, c.m.opts.LookupEnv, s.InheritEnv, fileEnv, s.Env),
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
		if c.plug.Auth == nil {
			return nil, nil, fmt.Errorf("server %s uses auth scheme %q, but no auth plugin is available", s.Name, s.AuthScheme)
		}
		var err error
		if pa, err = c.newPluginAuth(ctx, c.m.opts.TokenStore); err != nil {
			return nil, nil, err
		}
	}
	switch s.Transport {
	case config.TransportHTTP, config.TransportSSE:
		seen := new(atomic.Bool)
		hc := newHTTPClient(s.Headers)
		// W3C trace context on every request (the base transport's).
		hc.Transport = c.m.opts.Telemetry.Transport(hc.Transport)
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
		// (One refused request must not end the session: requestRejections.)
		hc.Transport = &sseRouting{base: &tasksCapture{base: &requestRejections{base: hc.Transport, log: c.log}, c: c}, c: c, meta: new(rawMeta)}
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
	if c.plug.Transports != nil {
		return &pluginTransport{plugins: c.plug.Transports, server: s, auth: pa}, nil, nil
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
	caps := &mcp.ClientCapabilities{} // no roots unless offered
	// Roots outside a call (settings { roots }, OnListRoots) are offered
	// with listChanged: SetRoots tells the servers of a change, which the
	// go-sdk client sends only to servers told listChanged. Where the
	// embedder offers capabilities of its own, roots only when it does (a
	// stdio gateway's client without roots: servers are not told of any).
	outside := len(m.opts.Roots) > 0 || m.opts.OnListRoots != nil
	if m.opts.Capabilities != nil {
		b, _ := json.Marshal(m.opts.Capabilities)
		json.Unmarshal(b, caps)
		caps.RootsV2 = m.opts.Capabilities.RootsV2
		if caps.RootsV2 != nil && outside {
			rc := *caps.RootsV2
			rc.ListChanged = true
			caps.RootsV2 = &rc
		}
	} else if outside {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	o := &mcp.ClientOptions{
		Capabilities: caps,
		// The go-sdk's own warnings appear under the server's name.
		Logger: hclogslog.New(c.log),
		// Input-required results (2026-07-28) come back to the caller, who
		// answers through its Requester: the go-sdk's automatic answering
		// would ask this client's handlers, which know no call.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Either session's tools may now differ from the other's.
			c.root().legacy.forget()
			c.listChanged(ToolsChanged)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			c.listChanged(ResourcesChanged)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			c.listChanged(PromptsChanged)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			rt, routed := c.routes.take(req.Params.Meta)
			if !routed {
				if rt.call = c.progressCall(req.Params.ProgressToken); rt.call != nil {
					rt.call.pending.Add(1)
				}
			}
			if rt.call != nil {
				defer rt.call.done1()
				if rt.call.progress != nil {
					rt.call.progress(req.Params)
				}
			}
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			c.root().elicitations.complete(req.Params.ElicitationID)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			// Subscriptions are the first session's, and those of the
			// second sessions on a server's own pipe (see legacy.go),
			// and the host's own; a per-user connection's are its
			// user's, made through it (OnUserResourceUpdated).
			switch {
			case c.user != nil:
				if m.opts.OnUserResourceUpdated != nil {
					m.opts.OnUserResourceUpdated(name, c.user.user(), req.Params)
				}
			case m.opts.OnResourceUpdated != nil && (c.primary == nil || !c.sharedByCalls()):
				m.opts.OnResourceUpdated(name, req.Params)
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			rt, _ := c.routes.take(req.Params.Meta)
			if rt.call != nil {
				defer rt.call.done1()
			}
			switch {
			case m.opts.OnLog == nil:
			case rt.ambiguous:
				// Shown to no client rather than to one that did not cause it.
				c.log.Debug("a log message of the server names no call, and calls of several clients are in flight: not passed on", "level", req.Params.Level)
			case rt.call != nil:
				m.opts.OnLog(name, req.Params, rt.call.r)
			case c.user != nil:
				// Of a user's own connection, outside its calls: not for
				// every client of the gateway.
				c.log.Debug("a log message of a per-user connection outside its calls: not passed on", "level", req.Params.Level)
			default:
				m.opts.OnLog(name, req.Params, nil)
			}
		},
	}
	// A server's own requests (protocol versions before 2026-07-28) go to
	// the Requester of the calls in flight (see Requester).
	if m.opts.OnElicit != nil || caps.Elicitation != nil {
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			restoreSchema(req.Params) // (schema.go)
			r, err := c.requesterFor(req.Params.Meta)
			var res *mcp.ElicitResult
			switch {
			case err != nil:
				return nil, err
			case r != nil:
				res, err = across(ctx, req.Params, r.Elicit)
			case m.opts.OnElicit != nil:
				res, err = m.opts.OnElicit(ctx, name, req)
			default:
				return nil, errUnsupported("elicitation")
			}
			if err != nil {
				return nil, err
			}
			if err := checkContent(req.Params, res); err != nil {
				return nil, err
			}
			return res, nil
		}
	}
	if m.opts.OnCreateMessage != nil || caps.Sampling != nil {
		o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			r, err := c.requesterFor(req.Params.Meta)
			switch {
			case err != nil:
				return nil, err
			case r != nil:
				return across(ctx, req.Params, r.CreateMessage)
			case m.opts.OnCreateMessage != nil:
				return m.opts.OnCreateMessage(ctx, name, req.Params)
			}
			return nil, errUnsupported("sampling")
		}
	}
	return o
}

// rootsMiddleware routes a server's roots/list (protocol versions before
// 2026-07-28) to the Requester of the calls in flight, as the elicitation
// and sampling handlers do; the go-sdk client would answer it with its own
// roots. With no call in flight, listRootsOutside answers (roots.go); over
// streamable HTTP also when the request came on no call's stream.
func (c *Conn) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*mcp.ListRootsParams)
		if p == nil {
			p = &mcp.ListRootsParams{}
		}
		var r Requester
		var err error
		if c.sharedByCalls() {
			// Over streamable HTTP a roots/list of a call comes on the
			// call's response stream (tagged); an untagged one (the
			// standalone stream) belongs to no call, whoever's calls are in
			// flight: guessing the one client would hand its roots to a
			// server shared by every user.
			if rt, ok := c.routes.take(p.Meta); ok && rt.call != nil {
				r = rt.call.r
			}
		} else {
			r, err = c.requesterFor(p.Meta)
		}
		switch {
		case err != nil:
			return nil, err
		case r == nil:
			return c.listRootsOutside(ctx, method, req, next)
		}
		res, err := fulfilOne(ctx, r, p)
		if err != nil {
			return nil, err
		}
		lr, _ := res.(*mcp.ListRootsResult)
		if lr == nil {
			return nil, errors.New("the client answered roots/list with no result")
		}
		return lr, nil
	}
}

// listChanged passes on a server's list_changed: the registry lists what
// the first session offers (see legacy.go).
func (c *Conn) listChanged(kind ChangeKind) {
	switch {
	case c.primary != nil:
	case c.user != nil:
		if f := c.m.opts.OnUserListChanged; f != nil {
			f(c.cfg.Name, c.user.user(), kind)
		}
	case c.m.opts.OnListChanged != nil:
		c.m.opts.OnListChanged(c.cfg.Name, kind)
	}
}

// requesterFor is the Requester a server's own request whose _meta is meta
// goes to: that of the call on whose response stream it came
// (routeRequest; nil: the host's own callbacks), else requester's. The
// route is removed from meta.
func (c *Conn) requesterFor(meta mcp.Meta) (Requester, error) {
	if rt, ok := c.routes.take(meta); ok && rt.call != nil {
		return rt.call.r, nil
	}
	return c.requester()
}

// requester is the Requester a server's own request goes to: that of the
// calls in flight, nil when there is none, an error when calls of several
// are in flight.
func (c *Conn) requester() (Requester, error) {
	fc, ok := c.inflight.only()
	if !ok {
		return nil, ErrAmbiguousRequest
	}
	if fc == nil {
		return nil, nil
	}
	return fc.r, nil
}

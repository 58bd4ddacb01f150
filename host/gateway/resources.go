package gateway

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// Prompts, resources, completions, subscriptions and logging: each request
// goes to the server that owns what it names.

// promptHandler serves the prompt exposed as exposed.
func (g *Gateway) promptHandler(exposed string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		g.mu.Lock()
		p, ok := g.exposed.prompts[exposed]
		g.mu.Unlock()
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", exposed)}
		}
		// (One decision for the call, ctx's DecisionNote's: decisionMiddleware.
		// Its audit line's is the host's, and its telemetry label's.)
		return g.getPrompt(ctx, req, p.Name)
	}
}

// getPrompt gets the prompt of registry name name for req from its
// server, with its audit line, and strips the protocol's own keys from the
// result's _meta.
func (g *Gateway) getPrompt(ctx context.Context, req *mcp.GetPromptRequest, name string) (*mcp.GetPromptResult, error) {
	ctx = g.withCallInfo(ctx, sessionID(req.Session), frontOf(req)) // (for its hooks and interceptors)
	a := g.auditCall(ctx, audit.EventPromptGet, name, sessionID(req.Session), "", 0)
	ctx = a.with(ctx) // (its checks, for the line)
	res, err := g.h.GetPromptResult(ctx, name, req.Params)
	if a != nil {
		a.done(err, 0)
	}
	if err != nil {
		return nil, asRefusalRPC(err) // (a check's refusal: its code and text)
	}
	stripProtocolMeta(res.Meta)
	return res, nil
}

// resourceHandler reads a listed resource from its server (uri is the
// server's own URI, whatever URI it is served under).
func (g *Gateway) resourceHandler(server, uri string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return g.auditedRead(ctx, req, server, uri)
	}
}

// auditedRead is read with its audit line.
func (g *Gateway) auditedRead(ctx context.Context, req *mcp.ReadResourceRequest, server, uri string) (*mcp.ReadResourceResult, error) {
	ctx = g.withCallInfo(ctx, sessionID(req.Session), frontOf(req)) // (for its hooks and interceptors)
	a := g.auditCall(ctx, audit.EventResourceRead, req.Params.URI, sessionID(req.Session), "", 0)
	if a == nil {
		res, err := g.read(ctx, server, uri, req.Params)
		return res, asRefusalRPC(err)
	}
	a.rec.Server = server
	res, err := g.read(a.with(ctx), server, uri, req.Params) // (its checks, for the line)
	a.done(err, 0)
	return res, asRefusalRPC(err) // (a check's refusal: its code and text)
}

// templateHandler reads a resource of a server's template; qualified
// says the template is served qualified (qualifyURI).
func (g *Gateway) templateHandler(server string, qualified bool) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		own := req.Params.URI
		if s, o, ok := unqualifyURI(own); qualified && ok && s == server {
			own = o
		}
		return g.auditedRead(ctx, req, server, own)
	}
}

// appsMiddleware reads the qualified MCP Apps URIs the served tools name
// that no listed resource is served under (exposure.routed) from the
// tool's own server.
func (g *Gateway) appsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "resources/read" {
			return next(ctx, method, req)
		}
		rr, ok := req.(*mcp.ReadResourceRequest)
		if !ok || rr.Params == nil {
			return next(ctx, method, req)
		}
		g.mu.Lock()
		k, routed := g.exposed.routed[rr.Params.URI]
		g.mu.Unlock()
		if !routed {
			return next(ctx, method, req)
		}
		return g.auditedRead(ctx, rr, k.server, k.uri)
	}
}

// read reads uri from server, passing on a retry's input responses and
// request state (input-required results pass through to the client).
func (g *Gateway) read(ctx context.Context, server, uri string, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	up := &mcp.ReadResourceParams{URI: uri, InputResponses: p.InputResponses, RequestState: p.RequestState, Meta: forwardMeta(p.Meta)}
	res, err := g.h.ReadResourceResult(ctx, server, up)
	if err != nil {
		return nil, err
	}
	stripProtocolMeta(res.Meta)
	return res, nil
}

// complete routes completion/complete to the server of the prompt or
// resource template it names (a caller's per-user server's: userRef).
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := *req.Params
	if p.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	ref := *p.Ref
	var server string
	g.mu.Lock()
	switch ref.Type {
	case "ref/prompt":
		if pr, ok := g.exposed.prompts[ref.Name]; ok {
			server, ref.Name = pr.Server, pr.Original
			if c := host.CallerOf(ctx); c != nil && g.h.Serving().DecideFor(c.Principal, pr.Name).Behavior == permissions.Deny {
				server = "" // a prompt hidden from the caller: as none
			}
		}
	case "ref/resource":
		if t, ok := g.exposed.templates[ref.URI]; ok {
			server, ref.URI = t.server, t.def.URITemplate
		} else if r, ok := g.exposed.resources[ref.URI]; ok {
			server, ref.URI = r.server, r.def.URI
		}
	}
	g.mu.Unlock()
	if server == "" {
		server, ref = g.userRef(ctx, ref)
	}
	if server == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no served prompt or resource template matches the completion ref %s %q", ref.Type, ref.Name+ref.URI)}
	}
	p.Ref = &ref
	p.Meta = forwardMeta(p.Meta) // (not the client's protocol _meta: the server is spoken to in its own version)
	res, err := g.h.Complete(ctx, server, &p)
	if err != nil {
		return nil, err
	}
	stripProtocolMeta(res.Meta)
	return res, nil
}

// subscriptions keeps which downstream sessions subscribe to each upstream
// resource: the upstream is subscribed while at least one does — from the
// first subscription to the last unsubscribe, or to the end of the last
// subscribed session (a client may go away without unsubscribing). The
// go-sdk server keeps the same per session and delivers
// notifications/resources/updated to those sessions only.
type subscriptions struct {
	mu      sync.Mutex
	by      map[subKey]map[*mcp.ServerSession]bool
	watched map[*mcp.ServerSession]bool // sessions whose end is watched
	// who is the principal of each subscribed session's latest
	// subscribe, if any (inbound OAuth): whom its updates are checked for
	// (revokedUpdates). Under whoMu, never held across I/O (mu is held
	// across upstream subscribes, and updates are sent on an upstream's
	// notification goroutine).
	whoMu sync.Mutex
	who   map[*mcp.ServerSession]*inbound.Principal
	// mine are the subscriptions to per-user servers' resources, each
	// its user's own (made through the user's own connection), with the
	// URI each session subscribed as; under both mu and whoMu (read under
	// whoMu alone where updates are delivered).
	mine map[userSub]*userSubs
}

// userSub is a subscription to a per-user server's resource of the
// gateway user whose conn.User ID is user.
type userSub struct {
	subKey
	user string
}

// userSubs are the subscribers of a userSub: the sessions (with the URI
// each subscribed as), and the user to unsubscribe upstream as.
type userSubs struct {
	u        *conn.User
	sessions map[*mcp.ServerSession]string
}

type subKey struct{ server, uri string }

// owner returns the server and original URI of a served resource URI: a
// listed resource, a tool's MCP Apps URI routed to its server
// (exposure.routed), a qualified URI (qualifyURI), or a URI of exactly one
// server's template.
func (g *Gateway) owner(uri string) (subKey, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.exposed.resources[uri]; ok {
		return subKey{r.server, r.def.URI}, true
	}
	if k, ok := g.exposed.routed[uri]; ok {
		return k, true
	}
	if server, orig, ok := unqualifyURI(uri); ok && g.h.Connections().Get(server) != nil && g.inEndpoint(server) {
		return subKey{server, orig}, true
	}
	var found []subKey
	for ut, t := range g.exposed.templates {
		if t.served != nil && matchesTemplate(t.served.URITemplate, uri) {
			own := uri
			if s, o, ok := unqualifyURI(uri); ok && s == t.server && ut != t.def.URITemplate {
				own = o
			}
			found = append(found, subKey{t.server, own})
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return subKey{}, false
}

// upstreamUnsubscribeTimeout bounds an upstream unsubscribe made when the
// downstream request (or session) that caused it has already ended.
const upstreamUnsubscribeTimeout = 10 * time.Second

func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	p := principalIn(ctx)
	k, _, err := g.subscribable(p, req.Params.URI)
	if err != nil {
		return err
	}
	if g.users.Load() && g.h.Serving().PerUser(k.server) {
		if err := g.joinMine(ctx, k, req.Session, req.Params.URI); err != nil {
			return err
		}
		g.subscribed(ctx, req, req.Session, req.Params.URI, true) // (fronts.go: the session fronts)
		return nil
	}
	if err := g.join(ctx, k, req.Session, p); err != nil {
		return err
	}
	g.subscribed(ctx, req, req.Session, req.Params.URI, true) // (fronts.go: the session fronts)
	return nil
}

// subscribable returns the server and its resource that uri names for a
// subscription of p (nil: nobody in particular), or the error a client
// gets when no server offers it or the permission rules deny its server
// to p (the same error: nothing tells a client a denied resource from a
// missing one; denied tells the gateway). A per-user server's resource is
// subscribed to by its user (joinMine).
func (g *Gateway) subscribable(p *inbound.Principal, uri string) (k subKey, denied bool, err error) {
	k, ok := g.owner(uri)
	denied = ok && p != nil && g.h.Serving().ServerDeniedFor(p, k.server)
	if !ok || denied {
		// (Checked here too, not only when listing or reading: with a
		// subscriber already, the upstream is not asked again.)
		return subKey{}, denied, &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("no server offers the resource %q", uri)}
	}
	return k, false, nil
}

// joinMine subscribes ss, as uri, to k, a per-user server's resource, for
// ctx's gateway user: through the user's own connection (the host renews
// it when that connection reconnects), its updates passed to that user's
// sessions subscribed only (userResourceUpdated): a session of a client
// before 2026-07-28, or a 2026-07-28 client's subscriptions/listen stream
// (on the go-sdk session it runs on). Sessions held by other replicas are
// not told.
func (g *Gateway) joinMine(ctx context.Context, k subKey, ss *mcp.ServerSession, uri string) error {
	u := conn.UserOf(ctx)
	if u == nil || ss == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("the resource %q is a per-user server's: subscriptions to it are its authenticated user's", uri)}
	}
	us := userSub{k, u.ID()}
	g.subs.mu.Lock()
	defer g.subs.mu.Unlock()
	if g.subs.mine[us] == nil {
		if err := g.h.Subscribe(ctx, k.server, k.uri); err != nil {
			return err
		}
	}
	if g.subs.watched == nil {
		g.subs.watched = map[*mcp.ServerSession]bool{}
	}
	g.subs.whoMu.Lock()
	if g.subs.mine == nil {
		g.subs.mine = map[userSub]*userSubs{}
	}
	s := g.subs.mine[us]
	if s == nil {
		s = &userSubs{sessions: map[*mcp.ServerSession]string{}}
		g.subs.mine[us] = s
	}
	s.u = u // (the newest token)
	s.sessions[ss] = uri
	g.subs.whoMu.Unlock()
	if !g.subs.watched[ss] {
		g.subs.watched[ss] = true
		// Ends with the session (the gateway's Close ends every session).
		go func() {
			ss.Wait()
			g.sessionEnded(ss)
		}()
	}
	return nil
}

// leaveMine removes ss from us's subscribers, unsubscribing upstream, as
// its user, after the last. The caller holds g.subs.mu.
func (g *Gateway) leaveMine(ctx context.Context, us userSub, ss *mcp.ServerSession) error {
	g.subs.whoMu.Lock()
	s := g.subs.mine[us]
	if s == nil {
		g.subs.whoMu.Unlock()
		return nil
	}
	if _, ok := s.sessions[ss]; !ok {
		g.subs.whoMu.Unlock()
		return nil
	}
	delete(s.sessions, ss)
	last := len(s.sessions) == 0
	if last {
		delete(g.subs.mine, us)
	}
	g.subs.whoMu.Unlock()
	if !last {
		return nil
	}
	ctx, cancel := context.WithTimeout(conn.WithUser(context.WithoutCancel(ctx), s.u), upstreamUnsubscribeTimeout)
	defer cancel()
	return g.h.Unsubscribe(ctx, us.server, us.uri)
}

// userResourceUpdated passes a per-user server's
// notifications/resources/updated, from the connection of the gateway user
// whose conn.User ID is user, to that user's sessions here subscribed to
// the resource, each under the URI it subscribed as; never to another
// user's. It runs on the upstream connection's notification path, so it
// only hands the update on (userUpdates sends it).
func (g *Gateway) userResourceUpdated(server, user string, p *mcp.ResourceUpdatedNotificationParams) {
	if !g.users.Load() || !g.inEndpoint(server) {
		return
	}
	g.userUpdates.post(userChange{server: server, user: user, method: "notifications/resources/updated", uri: p.URI}, g.userUpdateTargets, g.sendUserChange)
}

// userUpdateTargets are the sessions c, a per-user server's resource
// update, is sent to (userResourceUpdated).
func (g *Gateway) userUpdateTargets(c userChange) map[changeTarget]bool {
	g.subs.whoMu.Lock()
	defer g.subs.whoMu.Unlock()
	out := map[changeTarget]bool{}
	if s := g.subs.mine[userSub{subKey{c.server, c.uri}, c.user}]; s != nil {
		for ss, uri := range s.sessions {
			t := changeTarget{ss: ss, method: c.method, uri: uri}
			if ip := ss.InitializeParams(); ip == nil || ip.ProtocolVersion >= conn.NewProtocol {
				// A listen stream's: tagged with its request id, once
				// acknowledged.
				if t.id = g.userListens.idOf(ss); t.id == nil {
					continue
				}
			}
			out[t] = true
		}
	}
	return out
}

// join adds ss, subscribing as p, to k's subscribers, subscribing upstream
// for the first.
func (g *Gateway) join(ctx context.Context, k subKey, ss *mcp.ServerSession, p *inbound.Principal) error {
	g.subs.mu.Lock()
	defer g.subs.mu.Unlock()
	if len(g.subs.by[k]) == 0 {
		if err := g.h.Subscribe(ctx, k.server, k.uri); err != nil {
			return err
		}
	}
	if g.subs.by == nil {
		g.subs.by = map[subKey]map[*mcp.ServerSession]bool{}
		g.subs.watched = map[*mcp.ServerSession]bool{}
	}
	if p != nil && ss != nil {
		g.subs.whoMu.Lock()
		if g.subs.who == nil {
			g.subs.who = map[*mcp.ServerSession]*inbound.Principal{}
		}
		g.subs.who[ss] = p
		g.subs.whoMu.Unlock()
	}
	if g.subs.by[k] == nil {
		g.subs.by[k] = map[*mcp.ServerSession]bool{}
	}
	g.subs.by[k][ss] = true
	if ss != nil && !g.subs.watched[ss] {
		g.subs.watched[ss] = true
		// Ends with the session (the gateway's Close ends every session).
		go func() {
			ss.Wait()
			g.sessionEnded(ss)
		}()
	}
	return nil
}

func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	k, ok := g.owner(req.Params.URI)
	if !ok {
		return nil
	}
	g.subs.mu.Lock()
	var err error
	if u := conn.UserOf(ctx); u != nil && g.users.Load() && g.h.Serving().PerUser(k.server) {
		err = g.leaveMine(ctx, userSub{k, u.ID()}, req.Session)
	} else {
		err = g.leave(ctx, k, req.Session)
	}
	g.subs.mu.Unlock()
	if err == nil {
		g.subscribed(ctx, req, req.Session, req.Params.URI, false) // (fronts.go: the session fronts)
	}
	return err
}

// leave removes ss from k's subscribers, unsubscribing upstream after the
// last. The caller holds g.subs.mu.
func (g *Gateway) leave(ctx context.Context, k subKey, ss *mcp.ServerSession) error {
	subs := g.subs.by[k]
	if !subs[ss] {
		return nil
	}
	delete(subs, ss)
	if len(subs) > 0 {
		return nil
	}
	delete(g.subs.by, k)
	// The request may have ended already (a 2026-07-28 client's
	// subscriptions/listen unsubscribes as it ends).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), upstreamUnsubscribeTimeout)
	defer cancel()
	return g.h.Unsubscribe(ctx, k.server, k.uri)
}

// sessionEnded drops the subscriptions of a session that ended.
func (g *Gateway) sessionEnded(ss *mcp.ServerSession) {
	g.subs.mu.Lock()
	defer g.subs.mu.Unlock()
	delete(g.subs.watched, ss)
	g.subs.whoMu.Lock()
	delete(g.subs.who, ss)
	g.subs.whoMu.Unlock()
	for k, subs := range g.subs.by {
		if subs[ss] {
			if err := g.leave(context.Background(), k, ss); err != nil {
				g.log.Debug("unsubscribing upstream after its last subscriber ended", "server", k.server, "error", err)
			}
		}
	}
	g.subs.whoMu.Lock()
	var mine []userSub
	for us, s := range g.subs.mine {
		if _, ok := s.sessions[ss]; ok {
			mine = append(mine, us)
		}
	}
	g.subs.whoMu.Unlock()
	for _, us := range mine {
		if err := g.leaveMine(context.Background(), us, ss); err != nil {
			g.log.Debug("unsubscribing upstream after its user's last subscriber ended", "server", us.server, "error", err)
		}
	}
}

// resourceUpdated delivers an upstream's notifications/resources/updated to
// the sessions subscribed to the resource, under the URI it is served as:
// only if that URI is server's resource here (owner) — an update of a
// server outside the endpoint, or of a resource served under its URI for
// another server, reaches nobody.
func (g *Gateway) resourceUpdated(server string, p *mcp.ResourceUpdatedNotificationParams) {
	if !g.inEndpoint(server) {
		return
	}
	uri := p.URI
	g.mu.Lock()
	if r, ok := g.exposed.resources[qualifyURI(server, uri)]; ok && r.server == server {
		uri = r.served.URI
	} else if r, ok := g.exposed.resources[uri]; !ok || r.server != server {
		// A resource of one of the server's templates that is served
		// qualified is subscribed to, and updated, qualified too.
		for ut, t := range g.exposed.templates {
			if t.server == server && ut != t.def.URITemplate && matchesTemplate(t.def.URITemplate, uri) {
				uri = qualifyURI(server, uri)
				break
			}
		}
	}
	g.mu.Unlock()
	if k, ok := g.owner(uri); !ok || k.server != server {
		return
	}
	fwd := *p
	fwd.URI = uri
	stripProtocolMeta(fwd.Meta)
	g.srv.ResourceUpdated(context.Background(), &fwd)
}

// revokedUpdates is a sending middleware of the go-sdk server: it drops a
// notifications/resources/updated for a session whose principal the
// permission rules now deny the resource's server to. A subscription is
// checked when it is made; a reload (or the principal's groups changing)
// may come to deny it while it is in place, and its updates then stop
// reaching the client (as its reads are refused). The go-sdk keeps the
// session subscribed, so updates come again if the rules allow the
// resource again; the upstream subscription stays until its subscribers
// leave.
func (g *Gateway) revokedUpdates(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		params, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if ss == nil || params == nil {
			return next(ctx, method, req)
		}
		if p := g.subscriberOf(ss); p != nil {
			if _, denied, _ := g.subscribable(p, params.URI); denied {
				g.log.Debug("a resource update not sent: the rules now deny the resource to the session's principal",
					"session", LogSessionID(ss.ID()), "uri", params.URI)
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// subscriberOf is the principal ss's resource updates are checked for:
// for an HTTP session, whom its client's latest request here was
// authenticated as; else whom its latest subscribe was; nil without
// inbound OAuth.
func (g *Gateway) subscriberOf(ss *mcp.ServerSession) *inbound.Principal {
	if p := g.sessionPrincipal(ss); p != nil {
		return p
	}
	g.subs.whoMu.Lock()
	defer g.subs.whoMu.Unlock()
	return g.subs.who[ss]
}

// upstreamLog forwards an upstream's notifications/message, tagged with the
// server (logger "SERVER" or "SERVER/LOGGER"): to the session whose call it
// belongs to when that is known, else to every session. Each session's own
// log level filters it.
func (g *Gateway) upstreamLog(server string, p *mcp.LoggingMessageParams, r conn.Requester) {
	fwd := *p
	fwd.Logger = server
	if p.Logger != "" {
		fwd.Logger = server + "/" + registry.Sanitize(p.Logger)
	}
	stripProtocolMeta(fwd.Meta)
	r = unwrapRequester(r) // (a call's Elicitation hooks wrap its requester: host.withElicitHooks)
	if sr, ok := r.(sessionRequester); ok && sr.ss != nil {
		if sr.g != nil && sr.g != g {
			return // (a call through another of the host's gateways: it forwards it)
		}
		ctx, done := sr.within(context.Background())
		defer done()
		sr.ss.Log(ctx, &fwd)
		return
	}
	if _, ok := r.(RelayedRequester); ok {
		return // a relayed call's, whose client set no log level
	}
	if hr, ok := r.(*heldRequester); ok {
		if hr.g != nil && hr.g != g {
			return
		}
		hr.hc.log(&fwd) // a held call's: to its client's request in progress
		return
	}
	if !g.inEndpoint(server) {
		return
	}
	for ss := range g.srv.Sessions() {
		ss.Log(context.Background(), &fwd)
	}
}

// unwrapRequester returns the Requester r wraps (Unwrap, as the host's
// Elicitation hooks do), through every layer; r itself if it wraps none.
func unwrapRequester(r conn.Requester) conn.Requester {
	for {
		u, ok := r.(interface{ Unwrap() conn.Requester })
		if !ok {
			return r
		}
		r = u.Unwrap()
	}
}

// logLevelMiddleware passes a downstream logging/setLevel on to the
// upstream servers (after the go-sdk has recorded it for the session), so
// that they send messages at that level.
func (g *Gateway) logLevelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "logging/setLevel" {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					g.levels.set(ss, p.Level, g.srv.Sessions)
					g.levelSet(ctx, req, ss, p.Level) // (fronts.go: the session fronts)
				}
				g.h.SetLogLevel(ctx, p.Level)
			}
		}
		return res, err
	}
}

// logLevels are the levels downstream sessions set with logging/setLevel.
type logLevels struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]mcp.LoggingLevel
}

// set records a session's level and forgets those of sessions that ended
// (live lists the open ones).
func (l *logLevels) set(ss *mcp.ServerSession, level mcp.LoggingLevel, live func() iter.Seq[*mcp.ServerSession]) {
	open := map[*mcp.ServerSession]bool{ss: true}
	for s := range live() {
		open[s] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[*mcp.ServerSession]mcp.LoggingLevel{}
	}
	for s := range l.m {
		if !open[s] {
			delete(l.m, s)
		}
	}
	l.m[ss] = level
}

func (l *logLevels) of(ss *mcp.ServerSession) mcp.LoggingLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[ss]
}

// instructionsMiddleware puts the current instructions into the answers to
// initialize and server/discover: the gateway's own, then each connected
// upstream's (sanitized and capped by the registry), by server. A server
// that connects later (see ConnectAll) is not in them: MCP has no
// notification of changed instructions.
func (g *Gateway) instructionsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = g.instructions(ctx)
		case *mcp.DiscoverResult:
			r.Instructions = g.instructions(ctx)
		}
		return res, err
	}
}

func (g *Gateway) instructions(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("mcphost gateway")
	if g.endpoint != "" {
		fmt.Fprintf(&b, " (endpoint %s)", g.endpoint)
	}
	b.WriteString(": the tools, prompts and resources of several MCP servers")
	switch styleOf(g.namingMode(), len(g.activeServers())) {
	case namesOwn:
		b.WriteString(", under their own names.")
	case namesServer:
		b.WriteString(", named SERVER__NAME.")
	default:
		b.WriteString(", named mcp__SERVER__NAME.")
	}
	if g.search != nil {
		fmt.Fprintf(&b, " The tools are not listed: find them with %s (describe the task in words) and call them with %s.", SearchToolName, CallToolName)
	}
	var principal *inbound.Principal
	if c := host.CallerOf(ctx); c != nil {
		principal = c.Principal
	}
	for _, st := range g.h.Servers(ctx) {
		if st.Instructions == "" || g.h.InterceptorServer(st.Name) || principal != nil && g.h.Serving().ServerDeniedFor(principal, st.Name) || !g.inEndpoint(st.Name) {
			continue // (a server denied to the caller is not named)
		}
		fmt.Fprintf(&b, "\n\n## %s\n%s", st.Name, st.Instructions)
	}
	return b.String()
}

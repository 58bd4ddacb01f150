package gateway

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// The prompts, resources and resource templates of per-user servers, as
// their tools (users.go): listed, for each user, from that user's own
// connections, added to the last page of the user's prompts/list,
// resources/list and resources/templates/list (served "private"), and got
// or read through the same connections.
//
//   - A prompt is served under its registry name (mcp__SERVER__PROMPT;
//     SERVER__PROMPT under naming "server"), as the per-user servers' tools:
//     never under its own name (the servers a user sees are not those
//     served to all, so no style of naming counts them), and not when a
//     prompt served to all has that name.
//   - A resource (or template) is always served qualified (qualifyURI:
//     ui://mcphost/SERVER/… for an MCP Apps ui:// URI, mcphost://SERVER/URI
//     for any other), whoever else offers its URI: what a URI names must not
//     depend on what another list holds, and the MCP Apps URIs of the
//     server's tools name it so (addUserTools). A read of such a URI (of a
//     template's resource too) goes to the server through the reader's own
//     connection (userResource, readUserResource).
//
// Permission rules apply as to the servers served to all: a server the
// rules deny a user whole is neither listed nor asked for that user, a
// prompt the rules deny is hidden (and answered as unknown), and an
// endpoint serves its own servers only.

// visibleUserServers are the per-user servers of ctx's gateway user p:
// those the rules do not deny p whole.
func (g *Gateway) visibleUserServers(p *inbound.Principal) []string {
	return slices.DeleteFunc(g.userServers(), func(s string) bool { return g.h.Serving().ServerDeniedFor(p, s) })
}

// userServedPrompt is the name a per-user server's prompt is served under:
// its registry name, under naming "server" without the mcp__ prefix (""
// when that reads as a registry name: not served, as for the shared
// prompts).
func (g *Gateway) userServedPrompt(pr *registry.Prompt) string {
	if g.namingMode() != config.NamingServer {
		return pr.Name
	}
	served := strings.TrimPrefix(pr.Name, registry.Prefix)
	if _, _, ok := registry.ParseName(served); ok {
		return ""
	}
	return served
}

// perUserName maps name, as a client names a prompt or tool, to the
// registry name it reads as (under naming "server" with the mcp__ prefix
// put back) and that name's server. ok is false when the gateway serves no
// per-user servers, when the name reads as no registry name, and when its
// server is not a per-user server of this gateway's endpoint. (Whether a
// name served to all shadows it is the caller's check.)
func (g *Gateway) perUserName(name string) (canonical, server string, ok bool) {
	if !g.users.Load() {
		return "", "", false
	}
	canonical = name
	if g.namingMode() == config.NamingServer {
		canonical = registry.Prefix + name
	}
	server, _, parsed := registry.ParseName(canonical)
	if !parsed || !g.h.Serving().PerUser(server) || !g.inEndpoint(server) {
		return "", "", false
	}
	return canonical, server, true
}

// userPromptName maps name, as a client gets it, to the registry name of
// the per-user server's prompt it is the served name of
// (userServedPrompt). ok is false for any other name, and for the name of
// a prompt served to all.
func (g *Gateway) userPromptName(name string) (canonical string, ok bool) {
	canonical, _, ok = g.perUserName(name)
	if !ok {
		return "", false
	}
	g.mu.Lock()
	_, shared := g.exposed.prompts[name]
	g.mu.Unlock()
	return canonical, !shared
}

// addUserPrompts adds to the last page of a prompts/list result for p the
// prompts of p's per-user servers, as p's own connections list them, less
// those the rules deny p.
func (g *Gateway) addUserPrompts(ctx context.Context, p *inbound.Principal, r *mcp.ListPromptsResult) {
	prompts := userListing(ctx, g, p, r.NextCursor, "prompts", g.h.PromptsOf)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, pr := range prompts {
		served := g.userServedPrompt(pr)
		if served == "" || g.h.Serving().DecideFor(p, pr.Name).Behavior == permissions.Deny {
			continue
		}
		if _, shared := g.exposed.prompts[served]; shared {
			g.log.Debug("a per-user server's prompt is not served: a prompt served to all has its name", "prompt", pr.Name)
			continue
		}
		r.Prompts = append(r.Prompts, &mcp.Prompt{Name: served, Title: pr.Title, Description: pr.Description,
			Arguments: pr.Arguments, Icons: slices.Clone(pr.Icons), Meta: maps.Clone(pr.Meta)})
	}
}

// getUserPrompt gets, for p, the per-user server's prompt of registry name
// name through p's own connection. A prompt of a server the rules deny p,
// or that the rules deny, or that p's connection does not list, is
// answered as an unknown prompt (as one no server offers); one the rules
// deny gets its audit line all the same (outcome denied). The request is
// decided once (its DecisionNote: this runs outside decisionMiddleware),
// and its audit line records that decision, the one the host applies.
func (g *Gateway) getUserPrompt(ctx context.Context, p *inbound.Principal, req *mcp.GetPromptRequest, name string) (*mcp.GetPromptResult, error) {
	if host.DecisionNoteOf(ctx) == nil {
		ctx = host.WithDecisionNote(ctx, new(host.DecisionNote))
	}
	unknown := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	server, _, _ := registry.ParseName(name)
	if g.h.Serving().ServerDeniedFor(p, server) || g.h.Serving().Decision(ctx, name).Behavior == permissions.Deny {
		if a := g.auditCall(ctx, audit.EventPromptGet, name, sessionID(req.Session), "", 0); a != nil {
			a.done(fmt.Errorf("%w: prompt %s", host.ErrDenied, name), 0)
		}
		return nil, unknown
	}
	prompts, _ := g.h.PromptsOf(ctx, []string{server})
	if !slices.ContainsFunc(prompts, func(pr *registry.Prompt) bool { return pr.Name == name }) {
		return nil, unknown
	}
	return g.getPrompt(ctx, req, name)
}

// addUserResources adds to the last page of a resources/list result for p
// the resources of p's per-user servers, as p's own connections list them,
// under their qualified URIs.
func (g *Gateway) addUserResources(ctx context.Context, p *inbound.Principal, r *mcp.ListResourcesResult) {
	resources := userListing(ctx, g, p, r.NextCursor, "resources", g.h.ResourcesOf)
	seen := map[string]bool{}
	for _, res := range resources {
		if res.Resource == nil || !g.userURI(res.Server, res.URI, seen) {
			continue
		}
		c := *res.Resource // (a copy: the view's stays untouched)
		c.URI = qualifyURI(res.Server, res.URI)
		r.Resources = append(r.Resources, &c)
	}
}

// addUserTemplates is addUserResources for resources/templates/list.
func (g *Gateway) addUserTemplates(ctx context.Context, p *inbound.Principal, r *mcp.ListResourceTemplatesResult) {
	templates := userListing(ctx, g, p, r.NextCursor, "resource templates", g.h.ResourceTemplatesOf)
	seen := map[string]bool{}
	for _, t := range templates {
		if t.ResourceTemplate == nil || !g.userURI(t.Server, t.URITemplate, seen) {
			continue
		}
		c := *t.ResourceTemplate
		c.URITemplate = qualifyURI(t.Server, t.URITemplate)
		r.ResourceTemplates = append(r.ResourceTemplates, &c)
	}
}

// userListing lists, for the last page of a list result (cursor, its
// NextCursor, is ""), what p's per-user servers p may see offer, as p's own
// connections list them (list: the host's PromptsOf, ResourcesOf, ...),
// logging what could not be listed (logUserProblems, with what). It is nil
// for any other page and when p sees no per-user server.
func userListing[T any](ctx context.Context, g *Gateway, p *inbound.Principal, cursor, what string,
	list func(context.Context, []string) ([]T, []registry.Problem)) []T {
	servers := g.visibleUserServers(p)
	if len(servers) == 0 || cursor != "" {
		return nil
	}
	items, problems := list(ctx, servers)
	g.logUserProblems(what, problems)
	return items
}

// userURI reports whether server's own URI (or URI template) uri is
// served: once per server (seen), and not in the gateway's own namespaces
// (reservedURI, as exposeOwned).
func (g *Gateway) userURI(server, uri string, seen map[string]bool) bool {
	q := qualifyURI(server, uri)
	if seen[q] {
		return false
	}
	seen[q] = true
	if reservedURI(uri) {
		g.log.Debug("a per-user server's resource is not served: its URI is in the gateway's namespaces", "server", server, "uri", uri)
		return false
	}
	return true
}

// logUserProblems logs what listing the per-user servers' what for a user
// found (the user's own connections: not the gateway's problems).
func (g *Gateway) logUserProblems(what string, problems []registry.Problem) {
	for _, pr := range problems {
		g.log.Debug("a per-user server's "+what+" are not listed", "server", pr.Server, "detail", pr.Detail)
	}
}

// userRef maps a completion ref that names a per-user server's prompt (by
// its served name) or template (by its qualified URI template) to that
// server and the ref in the server's own terms, for ctx's gateway user;
// server is "" for any other ref, and for one of a server or prompt the
// rules deny the user. (The completion goes through the user's own
// connection.)
func (g *Gateway) userRef(ctx context.Context, ref mcp.CompleteReference) (server string, own mcp.CompleteReference) {
	p := principalIn(ctx)
	if p == nil {
		return "", ref
	}
	switch ref.Type {
	case "ref/prompt":
		name, ok := g.userPromptName(ref.Name)
		if !ok || g.h.Serving().DecideFor(p, name).Behavior == permissions.Deny {
			return "", ref
		}
		s, _, _ := registry.ParseName(name)
		if g.h.Serving().ServerDeniedFor(p, s) {
			return "", ref
		}
		prompts, _ := g.h.PromptsOf(ctx, []string{s})
		for _, pr := range prompts {
			if pr.Name == name {
				ref.Name = pr.Original
				return s, ref
			}
		}
	case "ref/resource":
		if s, uri, ok := g.userResource(ref.URI); ok && !g.h.Serving().ServerDeniedFor(p, s) {
			ref.URI = uri
			return s, ref
		}
	}
	return "", ref
}

// A per-user server's list_changed comes on one user's connection: the
// host drops that user's view of the list and tells the gateway
// (host.NotificationHandlers.UserListChanged), which passes the
// list_changed on to that user's sessions here only (userListChanged) —
// not to every session, as a change of what is served to all is.
//
// The go-sdk server sends a list_changed to every session, and only when
// its own lists change; one session is sent one by a notification the
// session can be sent (NotifyProgress) that the sending middleware
// listChangedSender turns into the list_changed, as its context says. A
// session of a client before 2026-07-28 is sent it as is; a 2026-07-28
// client gets list_changed on its subscriptions/listen streams only, those
// that opted in to it, tagged with the stream's request id: the gateway
// learns both from the stream's notifications/subscriptions/acknowledged
// (userListens). Sessions held by other replicas are not told.

// listChangedKey is the context key of the list_changed method a
// NotifyProgress stands for (listChangedSender).
type listChangedKey struct{}

// userListChangedTimeout bounds the sending of a per-user server's
// list_changed to its user's sessions (as the go-sdk bounds its own).
const userListChangedTimeout = 10 * time.Second

// changedMethods are the list_changed notifications of each kind of list.
var changedMethods = map[conn.ChangeKind]string{
	conn.ToolsChanged:     "notifications/tools/list_changed",
	conn.PromptsChanged:   "notifications/prompts/list_changed",
	conn.ResourcesChanged: "notifications/resources/list_changed",
}

// userListChanged tells the sessions here of the gateway user whose
// conn.User ID is user that server's list kind changed for them: those of
// clients before 2026-07-28 whose principal is the user and may see the
// server. (With tool search, tools/list does not change.) It runs on the
// user's upstream connection's notification path, so it only hands the
// change on (userChanges): which sessions are told is worked out, and each
// is sent its list_changed, elsewhere, each session on its own, so that a
// client that does not read holds up neither the connection nor anyone
// else.
func (g *Gateway) userListChanged(server, user string, kind conn.ChangeKind) {
	method := changedMethods[kind]
	if method == "" || !g.users.Load() || !g.inEndpoint(server) || kind == conn.ToolsChanged && g.search != nil {
		return
	}
	g.userChanges.post(userChange{server: server, user: user, method: method}, g.userChangeTargets, g.sendUserChange)
}

// userChangeTargets are the sessions here that c is sent to, with the
// request id of the listen stream each is sent on (nil: a session of a
// client before 2026-07-28).
func (g *Gateway) userChangeTargets(c userChange) map[changeTarget]bool {
	kind := conn.ToolsChanged
	for k, m := range changedMethods {
		if m == c.method {
			kind = k
		}
	}
	out := map[changeTarget]bool{}
	for ss, id := range g.userListens.of(c.user, c.server, kind, g.h.Serving().ServerDeniedFor) {
		out[changeTarget{ss: ss, method: c.method, id: id}] = true
	}
	for ss := range g.srv.Sessions() {
		ip := ss.InitializeParams()
		if ip == nil || ip.ProtocolVersion >= conn.NewProtocol {
			continue
		}
		p := g.sessionPrincipal(ss)
		if p == nil || (&conn.User{Issuer: p.Issuer, Subject: p.Subject}).ID() != c.user || g.h.Serving().ServerDeniedFor(p, c.server) {
			continue
		}
		out[changeTarget{ss: ss, method: c.method}] = true
	}
	return out
}

// sendUserChange sends t its list_changed (as a NotifyProgress that
// listChangedSender turns into it), within userListChangedTimeout.
func (g *Gateway) sendUserChange(t changeTarget) {
	ctx, cancel := context.WithTimeout(context.WithValue(g.life, listChangedKey{}, t.method), userListChangedTimeout)
	defer cancel()
	if t.id != nil {
		ctx = context.WithValue(ctx, subscriptionIDKey{}, t.id)
	}
	if t.uri != "" {
		ctx = context.WithValue(ctx, updatedURIKey{}, t.uri)
	}
	if err := t.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{}); err != nil {
		g.log.Debug("a per-user server's list_changed not passed on", "method", t.method, "session", LogSessionID(t.ss.ID()), "error", err)
	}
}

// userChange is a per-user server's list_changed for one user: of server,
// for the user with conn.User ID user, method the list_changed.
type userChange struct {
	server, user, method string
	uri                  string // a resources/updated's (userResourceUpdated)
}

// changeTarget is one list_changed to send to one session (id: on the
// listen stream of that request id; nil: as is).
type changeTarget struct {
	ss     *mcp.ServerSession
	method string
	id     any
	uri    string // a resources/updated's, as the session subscribed
}

// maxSessionChanges caps the list_changed waiting to be sent to one
// session (each kind is waiting once per stream at most: a cap is reached
// only by a client with that many listen streams).
const maxSessionChanges = 64

// userChanges passes the per-user servers' list_changed on, off the
// upstream connections that tell them: post only records the change (the
// same change waiting already counts once); one goroutine works out whom
// the changes waiting are for, and one per session with list_changed
// waiting sends them, so that a session whose client does not read holds
// up only its own. The goroutines belong to the gateway: each ends once
// nothing waits, and close waits for them. The zero value is ready to use.
type userChanges struct {
	mu       sync.Mutex
	closed   bool
	pending  map[userChange]bool // not yet walked
	walking  bool                // the walker runs
	sessions map[*mcp.ServerSession]*sessionChanges
	wg       sync.WaitGroup
}

// sessionChanges are the list_changed waiting to be sent to one session.
type sessionChanges struct {
	waiting []changeTarget
}

// post records c; targets works out whom it is sent to, send sends it to
// one (both called on the gateway's goroutines, never post's).
func (u *userChanges) post(c userChange, targets func(userChange) map[changeTarget]bool, send func(changeTarget)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	if u.pending == nil {
		u.pending = map[userChange]bool{}
	}
	u.pending[c] = true
	if u.walking {
		return
	}
	u.walking = true
	u.wg.Add(1)
	go u.walk(targets, send) // owned by u: close waits for it
}

// walk works out, for each change waiting, whom it is sent to, and queues
// it there, until none waits.
func (u *userChanges) walk(targets func(userChange) map[changeTarget]bool, send func(changeTarget)) {
	defer u.wg.Done()
	for {
		u.mu.Lock()
		pending := u.pending
		u.pending = nil
		if len(pending) == 0 || u.closed {
			u.walking = false
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
		for c := range pending {
			for t := range targets(c) {
				u.queue(t, send)
			}
		}
	}
}

// queue adds t to its session's list_changed waiting, unless it waits
// already, and starts the session's sender if none runs.
func (u *userChanges) queue(t changeTarget, send func(changeTarget)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	if u.sessions == nil {
		u.sessions = map[*mcp.ServerSession]*sessionChanges{}
	}
	sc := u.sessions[t.ss]
	if sc == nil {
		sc = &sessionChanges{}
		u.sessions[t.ss] = sc
		u.wg.Add(1)
		go u.sendAll(t.ss, sc, send) // owned by u: close waits for it
	}
	if slices.Contains(sc.waiting, t) || len(sc.waiting) >= maxSessionChanges {
		return // (the same list_changed, not yet sent: once is enough)
	}
	sc.waiting = append(sc.waiting, t)
}

// sendAll sends ss the list_changed waiting for it, in order, until none
// waits.
func (u *userChanges) sendAll(ss *mcp.ServerSession, sc *sessionChanges, send func(changeTarget)) {
	defer u.wg.Done()
	for {
		u.mu.Lock()
		if len(sc.waiting) == 0 || u.closed {
			delete(u.sessions, ss)
			u.mu.Unlock()
			return
		}
		t := sc.waiting[0]
		sc.waiting = slices.Delete(sc.waiting, 0, 1)
		u.mu.Unlock()
		send(t)
	}
}

// close ends the passing on: nothing more is sent, and close waits for the
// goroutines, as long as a send may take (userListChangedTimeout: a write
// to a client that does not read is ended by its session's end).
func (u *userChanges) close(log hclog.Logger) {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	done := make(chan struct{})
	go func() { // (ends with the goroutines it waits for)
		u.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(userListChangedTimeout):
		log.Warn("a per-user server's list_changed still being sent at close")
	}
}

// sendingMiddlewares are the go-sdk server's sending middlewares, the
// outermost first (as AddSendingMiddleware takes them). listChangedSender
// is the outermost: every other one sees a per-user list_changed as the
// list_changed it is, never as the notifications/progress it is sent as.
// (The go-sdk wraps a middleware added later outside these: none is.)
func (g *Gateway) sendingMiddlewares() []mcp.Middleware {
	return []mcp.Middleware{g.listChangedSender, g.fronts.sending, g.revokedUpdates, g.listenActivity}
}

// listChangedSender is a sending middleware of the go-sdk server: a
// notification sent by userListChanged is sent as the list_changed its
// context names (one naming no kind of list is logged, and not sent).
func (g *Gateway) listChangedSender(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/subscriptions/acknowledged" {
			g.userListens.acknowledged(req)
		}
		if method != "notifications/progress" {
			return next(ctx, method, req)
		}
		changed, ok := ctx.Value(listChangedKey{}).(string)
		ss, isServer := req.GetSession().(*mcp.ServerSession)
		if !ok || !isServer {
			return next(ctx, method, req)
		}
		var meta mcp.Meta
		if id, ok := ctx.Value(subscriptionIDKey{}).(any); ok && id != nil {
			meta = mcp.Meta{mcp.MetaKeySubscriptionID: id} // (a listen stream's)
		}
		switch changed {
		case "notifications/tools/list_changed":
			return next(ctx, changed, &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{Meta: meta}})
		case "notifications/prompts/list_changed":
			return next(ctx, changed, &mcp.ServerRequest[*mcp.PromptListChangedParams]{Session: ss, Params: &mcp.PromptListChangedParams{Meta: meta}})
		case "notifications/resources/list_changed":
			return next(ctx, changed, &mcp.ServerRequest[*mcp.ResourceListChangedParams]{Session: ss, Params: &mcp.ResourceListChangedParams{Meta: meta}})
		case "notifications/resources/updated": // (userResourceUpdated)
			uri, _ := ctx.Value(updatedURIKey{}).(string)
			return next(ctx, changed, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: ss, Params: &mcp.ResourceUpdatedNotificationParams{Meta: meta, URI: uri}})
		}
		g.log.Warn("a per-user list_changed of an unknown kind not sent", "method", changed)
		return nil, nil
	}
}

// subscriptionIDKey is the context key of the request id of the listen
// stream a list_changed is sent on (listChangedSender).
type subscriptionIDKey struct{}

// updatedURIKey is the context key of the URI of a per-user server's
// resources/updated sent to one session (userResourceUpdated).
type updatedURIKey struct{}

// userListens are the subscriptions/listen streams of gateway users
// running here, by the go-sdk session each runs on, with what each opted
// in to (as acknowledged). The zero value is ready to use.
type userListens struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]*userListen
}

type userListen struct {
	p     *inbound.Principal
	user  string // p's conn.User ID
	id    any    // the stream's request id (nil until acknowledged)
	notes mcp.NotificationSubscriptions
}

// add records the listen stream of p running on ss; remove forgets it, as
// it ends.
func (l *userListens) add(ss *mcp.ServerSession, p *inbound.Principal) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[*mcp.ServerSession]*userListen{}
	}
	ul := &userListen{p: p, user: (&conn.User{Issuer: p.Issuer, Subject: p.Subject}).ID()}
	l.m[ss] = ul
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.m[ss] == ul {
			delete(l.m, ss)
		}
	}
}

// acknowledged takes a listen stream's notifications/subscriptions/acknowledged
// (req, being sent): its request id and what it opted in to.
func (l *userListens) acknowledged(req mcp.Request) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	params, _ := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams)
	if ss == nil || params == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ul := l.m[ss]; ul != nil {
		ul.id, ul.notes = params.Meta[mcp.MetaKeySubscriptionID], params.Notifications
	}
}

// idOf is the request id of the listen stream running on ss, nil until
// it is acknowledged (or for none).
func (l *userListens) idOf(ss *mcp.ServerSession) any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ul := l.m[ss]; ul != nil {
		return ul.id
	}
	return nil
}

// of are the acknowledged listen streams of the user with conn.User ID
// user that opted in to the list_changed of kind, and whose principal the
// rules do not deny server (denied), with their request ids.
func (l *userListens) of(user, server string, kind conn.ChangeKind, denied func(*inbound.Principal, string) bool) map[*mcp.ServerSession]any {
	type found struct {
		ss *mcp.ServerSession
		id any
		p  *inbound.Principal
	}
	var fs []found
	l.mu.Lock()
	for ss, ul := range l.m {
		wants := kind == conn.ToolsChanged && ul.notes.ToolsListChanged || kind == conn.PromptsChanged && ul.notes.PromptsListChanged ||
			kind == conn.ResourcesChanged && ul.notes.ResourcesListChanged
		if ul.user == user && ul.id != nil && wants {
			fs = append(fs, found{ss, ul.id, ul.p})
		}
	}
	l.mu.Unlock()
	out := map[*mcp.ServerSession]any{}
	for _, f := range fs { // (the rules asked outside mu)
		if !denied(f.p, server) {
			out[f.ss] = f.id
		}
	}
	return out
}

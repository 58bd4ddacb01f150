package host

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// What servers offer besides tools — resource templates, raw reads,
// completions, subscriptions, logging — for callers that pass it on, such as
// the gateway.

// NotificationHandlers receive what servers send outside any one call.
type NotificationHandlers struct {
	// ResourceUpdated receives notifications/resources/updated of a
	// resource subscribed with Subscribe. OPTIONAL.
	ResourceUpdated func(server string, p *mcp.ResourceUpdatedNotificationParams)
	// Log receives notifications/message; r is the Requester of the call it
	// belongs to when that is known (see conn.Requester), else nil. OPTIONAL.
	Log func(server string, p *mcp.LoggingMessageParams, r conn.Requester)
	// UserListChanged is told that a per-user server's list (kind) changed
	// on the connection of the gateway user with ID user (conn.User.ID):
	// that user's view of it was dropped, and is listed again when next
	// asked for. OPTIONAL.
	UserListChanged func(server, user string, kind conn.ChangeKind)
	// UserResourceUpdated receives notifications/resources/updated of a
	// per-user server's resource subscribed with Subscribe for the gateway
	// user with ID user (conn.User.ID), through that user's own
	// connection: for that user's subscribers only. OPTIONAL.
	UserResourceUpdated func(server, user string, p *mcp.ResourceUpdatedNotificationParams)
}

// notifications are the registered NotificationHandlers, and what is
// re-established on every new session of a server: its subscriptions and
// the log level.
type notifications struct {
	mu       sync.Mutex
	handlers []*NotificationHandlers
	subs     map[string]map[string]int // subsKey -> subscribed URIs -> how many subscribers (Subscribe's callers: each of a host's gateways)
	level    mcp.LoggingLevel
}

// OnServerNotification registers handlers for what servers send outside any
// one call, until remove is called.
func (h *Host) OnServerNotification(nh *NotificationHandlers) (remove func()) {
	h.notes.mu.Lock()
	h.notes.handlers = append(h.notes.handlers, nh)
	h.notes.mu.Unlock()
	return func() {
		h.notes.mu.Lock()
		h.notes.handlers = slices.DeleteFunc(h.notes.handlers, func(x *NotificationHandlers) bool { return x == nh })
		h.notes.mu.Unlock()
	}
}

func (h *Host) noteHandlers() []*NotificationHandlers {
	h.notes.mu.Lock()
	defer h.notes.mu.Unlock()
	return append([]*NotificationHandlers(nil), h.notes.handlers...)
}

func (h *Host) resourceUpdated(server string, p *mcp.ResourceUpdatedNotificationParams) {
	for _, nh := range h.noteHandlers() {
		if nh.ResourceUpdated != nil {
			nh.ResourceUpdated(server, p)
		}
	}
}

// userListChanged drops the list kind of server in the view of user u
// and tells the handlers.
func (h *Host) userListChanged(server string, u *conn.User, kind conn.ChangeKind) {
	h.views.invalidate(u.ID(), server, kind)
	for _, nh := range h.noteHandlers() {
		if nh.UserListChanged != nil {
			nh.UserListChanged(server, u.ID(), kind)
		}
	}
}

func (h *Host) logMessage(server string, p *mcp.LoggingMessageParams, r conn.Requester) {
	for _, nh := range h.noteHandlers() {
		if nh.Log != nil {
			nh.Log(server, p, r)
		}
	}
}

// ResourceTemplates returns the resource templates of the active servers.
func (h *Host) ResourceTemplates(ctx context.Context) ([]*registry.ResourceTemplate, []registry.Problem) {
	return h.ResourceTemplatesOf(ctx, h.ActiveServers())
}

// ResourceTemplatesOf is ResourceTemplates for the given servers.
func (h *Host) ResourceTemplatesOf(ctx context.Context, servers []string) ([]*registry.ResourceTemplate, []registry.Problem) {
	shared, own, view := h.splitServers(ctx, servers)
	ts, problems := h.reg.ResourceTemplates(ctx, shared)
	if view != nil {
		t2, p2 := view.ResourceTemplates(ctx, own)
		ts, problems = append(ts, t2...), append(problems, p2...)
	}
	return ts, problems
}

// ReadResourceResult reads a resource from server and returns the server's
// result as is (ReadResource decodes it and writes blobs to files).
// p.URI is the server's own URI; the rest of p (a retry's input responses
// and request state, _meta but for its protocol-reserved members: see
// mcpmeta.Forwardable) is sent as is.
func (h *Host) ReadResourceResult(ctx context.Context, server string, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	if err := h.serverAllowed(ctx, server); err != nil {
		return nil, err
	}
	up := *p
	up.Meta = mcpmeta.Forwardable(p.Meta) // (spoken to in the server's own version)
	plan := h.chain().ForEvent(intercept.EventResourcesRead, server, p.URI, principalOf(ctx))
	var call *intercept.Call
	var start time.Time
	if plan != nil {
		start = time.Now()
		call = h.eventCall(ctx, intercept.EventResourcesRead, server, p.URI, p.URI)
		if plan.HasRequest() {
			if err := h.checkReadRequest(ctx, plan, call, &up); err != nil {
				return nil, err
			}
		}
	}
	var res *mcp.ReadResourceResult
	err := h.conns.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.ReadResource(ctx, &up)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading resource %s from %s: %w", p.URI, server, err)
	}
	if plan != nil && plan.HasResponse() && res.InputRequests == nil {
		// (An input-required result is not the resource: its retry's is.)
		call.Duration = time.Since(start)
		return checkEventResponse(ctx, h, plan, call, res)
	}
	return res, nil
}

// GetPromptResult gets the prompt with registry name name, sending p (its
// arguments, a retry's input responses and request state) with the
// server's own prompt name. An input-required result is returned as is.
func (h *Host) GetPromptResult(ctx context.Context, name string, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	server, _, _ := registry.ParseName(name)
	pr, err := h.regFor(ctx, server).LookupPrompt(ctx, name)
	if err != nil {
		return nil, err
	}
	if c := CallerOf(ctx); c != nil {
		// A prompt is decided by its registry name, as a tool (an ask
		// is not put to anyone: a prompt runs nothing), once per call:
		// the decision ctx's DecisionNote holds (the gateway's telemetry
		// label, its audit line) is this one.
		if d := h.decision(ctx, DecisionNoteOf(ctx), pr.Name); d.Behavior == permissions.Deny {
			return nil, fmt.Errorf("%w: %s is %s", ErrDenied, pr.Name, d.Explain())
		}
	}
	up := *p
	up.Name = pr.Original
	up.Meta = nil
	plan := h.chain().ForEvent(intercept.EventPromptsGet, pr.Server, pr.Name, principalOf(ctx))
	var call *intercept.Call
	var start time.Time
	if plan != nil {
		start = time.Now()
		call = h.eventCall(ctx, intercept.EventPromptsGet, pr.Server, pr.Name, pr.Original)
		if plan.HasRequest() {
			if err := h.checkPromptRequest(ctx, plan, call, &up); err != nil {
				return nil, err
			}
		}
	}
	var res *mcp.GetPromptResult
	err = h.conns.Do(ctx, pr.Server, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.GetPrompt(ctx, &up)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("getting prompt %s: %w", name, err)
	}
	if plan != nil && plan.HasResponse() && res.InputRequests == nil {
		// (An input-required result is not the prompt: its retry's is.)
		call.Duration = time.Since(start)
		return checkEventResponse(ctx, h, plan, call, res)
	}
	return res, nil
}

// Complete asks server for completions (completion/complete); p names the
// prompt or resource template by the server's own name or URI template. Its
// _meta is sent without its protocol-reserved members (mcpmeta.Forwardable).
func (h *Host) Complete(ctx context.Context, server string, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if err := h.serverAllowed(ctx, server); err != nil {
		return nil, err
	}
	up := *p
	up.Meta = mcpmeta.Forwardable(p.Meta)
	p = &up
	var res *mcp.CompleteResult
	err := h.conns.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Completions == nil {
			res = &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
			return nil // nothing to complete: an empty answer
		}
		var err error
		res, err = cs.Complete(ctx, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("completing at %s: %w", server, err)
	}
	return res, nil
}

// Subscribe subscribes to updates of a server's resource; they reach the
// NotificationHandlers. The subscription is renewed whenever the server is
// reconnected, until Unsubscribe. Subscriptions are counted: the server is
// unsubscribed from at the last Unsubscribe of as many as were made (each
// of a host's gateways, its named endpoints', subscribes for its own
// clients).
func (h *Host) Subscribe(ctx context.Context, server, uri string) error {
	if err := h.serverAllowed(ctx, server); err != nil {
		return err
	}
	err := h.conns.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Resources == nil || !caps.Resources.Subscribe {
			return fmt.Errorf("%s does not offer resource subscriptions", server)
		}
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		return fmt.Errorf("subscribing to %s at %s: %w", uri, server, err)
	}
	h.onSecondSessions(ctx, server, func(cs *mcp.ClientSession) error { return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}) })
	key := h.subsKey(ctx, server)
	h.notes.mu.Lock()
	if h.notes.subs == nil {
		h.notes.subs = map[string]map[string]int{}
	}
	if h.notes.subs[key] == nil {
		h.notes.subs[key] = map[string]int{}
	}
	h.notes.subs[key][uri]++
	h.notes.mu.Unlock()
	return nil
}

// Unsubscribe ends a subscription made with Subscribe.
func (h *Host) Unsubscribe(ctx context.Context, server, uri string) error {
	key := h.subsKey(ctx, server)
	h.notes.mu.Lock()
	n := h.notes.subs[key][uri] - 1
	if n > 0 {
		h.notes.subs[key][uri] = n
	} else {
		delete(h.notes.subs[key], uri)
		if len(h.notes.subs[key]) == 0 {
			delete(h.notes.subs, key)
		}
	}
	h.notes.mu.Unlock()
	if n > 0 {
		return nil // (another subscriber still wants the updates)
	}
	err := h.conns.Do(ctx, server, func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	h.onSecondSessions(ctx, server, func(cs *mcp.ClientSession) error { return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}) })
	if err != nil {
		return fmt.Errorf("unsubscribing from %s at %s: %w", uri, server, err)
	}
	return nil
}

// SetLogLevel asks every connected server that offers logging to send log
// messages at level and above; servers connected later are asked when they
// connect.
func (h *Host) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) {
	h.notes.mu.Lock()
	h.notes.level = level
	h.notes.mu.Unlock()
	for _, st := range h.conns.Status() {
		for _, cs := range h.conns.Sessions(st.Name) { // per-user ones too
			h.setLevel(ctx, st.Name, cs, level)
		}
	}
}

// withLogLevel returns a request's _meta with the level set by SetLogLevel
// added, unless it names a level itself: a 2026-07-28 server takes the log
// level of a request that carries its protocol version from its _meta alone
// (logging/setLevel does not apply to it), so without it the server logs
// nothing during the call. Servers of earlier versions ignore the key.
func (h *Host) withLogLevel(m mcp.Meta) mcp.Meta {
	m = mcpmeta.Forwardable(m) // (spoken to in the server's own version)
	h.notes.mu.Lock()
	level := h.notes.level
	h.notes.mu.Unlock()
	if level == "" {
		return m
	}
	if _, ok := m[mcp.MetaKeyLogLevel]; ok {
		return m
	}
	out := make(mcp.Meta, len(m)+1)
	maps.Copy(out, m)
	out[mcp.MetaKeyLogLevel] = level
	return out
}

func (h *Host) setLevel(ctx context.Context, server string, cs *mcp.ClientSession, level mcp.LoggingLevel) {
	if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Logging == nil {
		return
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		h.log.Debug("setting the log level failed", "server", server, "error", err)
	}
}

// subsKey is the key of notifications.subs that a subscription to server
// made with ctx is counted under: the server's, or for a per-user server
// and a gateway user (conn.WithUser) that user's own connection's.
func (h *Host) subsKey(ctx context.Context, server string) string {
	if u := conn.UserOf(ctx); u != nil && h.perUser(server) {
		return server + "\x00" + u.ID()
	}
	return server
}

// onSecondSessions does do on the second sessions of server on its own
// pipe (see conn.SecondSessionsOnPipe), where a subscription is made too;
// a failure is logged.
func (h *Host) onSecondSessions(ctx context.Context, server string, do func(*mcp.ClientSession) error) {
	for _, cs := range h.conns.SecondSessionsOnPipe(server) {
		if err := do(cs); err != nil {
			h.log.Debug("a resource subscription on a second session failed", "server", server, "error", err)
		}
	}
}

// sessionStarted renews, on a server's new session (and on a second
// session on the server's own pipe: conn.IsSecondSession), what the previous one
// had: its resource subscriptions and the log level.
func (h *Host) sessionStarted(ctx context.Context, server string, cs *mcp.ClientSession) {
	h.notes.mu.Lock()
	level := h.notes.level
	var uris []string
	// (A per-user session's subscriptions are its user's, made through
	// it: kept apart, renewed on that user's sessions only.)
	for u := range h.notes.subs[h.subsKey(ctx, server)] {
		uris = append(uris, u)
	}
	h.notes.mu.Unlock()
	if level != "" && !conn.IsSecondSession(ctx) {
		h.setLevel(ctx, server, cs, level)
	}
	for _, u := range uris {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
			h.log.Warn("renewing a resource subscription failed", "server", server, "uri", u, "error", err)
		}
	}
}

// ProtocolVersion is the protocol version of server's live session ("" when
// it has none): it tells, for example, whether the server asks by requests
// of its own during a call (before 2026-07-28) or by input-required results.
func (s *Serving) ProtocolVersion(ctx context.Context, server string) string {
	cs := s.h.conns.Current(ctx, server)
	if cs == nil || cs.InitializeResult() == nil {
		return ""
	}
	return cs.InitializeResult().ProtocolVersion
}

// serverAllowed refuses, for a gateway caller (CallerOf), what belongs to a
// server the permission rules deny it whole (see Serving.ServerDeniedFor): its
// resources, templates and completions; and, for anyone, what belongs to an
// interceptor server (config.Server.InterceptorOnly).
func (h *Host) serverAllowed(ctx context.Context, server string) error {
	if h.interceptorOnly(server) {
		return errInterceptorOnly(server)
	}
	c := CallerOf(ctx)
	if c == nil || !h.policy.Load().ServerDenied(server, Who(c.Principal)) {
		return nil
	}
	return fmt.Errorf("%w: the permission rules deny server %s to %s", ErrDenied, server, c.Principal.Subject)
}

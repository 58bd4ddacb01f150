package host

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// userViews are the registries of the gateway users' own connections to
// per-user servers (config.Server.PerUser): a user's tools, prompts and
// resources of such a server are those its own session lists, and a user
// who must log in sees the server's authenticate pseudo-tool, alone. Each
// is a cache, bounded like the connections (conn.DefaultMaxUserConns):
// the least recently used is dropped first.
type userViews struct {
	mu   sync.Mutex
	regs map[string]*userView // by conn.User.ID
}

type userView struct {
	reg  *registry.Registry
	used time.Time
}

// PerUser reports whether server's credentials are kept per gateway user
// (oauth { per_user } or token_exchange, auth { per_user }): for a gateway
// user (WithCaller) its tools are listed and called through that user's own
// connection.
func (s *Serving) PerUser(server string) bool { return s.h.perUser(server) }

// perUser is Serving.PerUser.
func (h *Host) perUser(server string) bool {
	c := h.conns.Get(server)
	return c != nil && c.Config().PerUser()
}

// regFor returns the registry that lists server for ctx's caller: its
// own view for a per-user server, else the shared one.
func (h *Host) regFor(ctx context.Context, server string) *registry.Registry {
	if u := conn.UserOf(ctx); u != nil && h.perUser(server) {
		return h.views.get(h, u.ID())
	}
	return h.reg
}

// splitServers separates, for ctx's caller, the servers listed by the
// shared registry from the per-user servers listed by the caller's view
// (nil when there are none).
func (h *Host) splitServers(ctx context.Context, servers []string) (shared, own []string, view *registry.Registry) {
	u := conn.UserOf(ctx)
	if u == nil {
		return servers, nil, nil
	}
	for _, s := range servers {
		if h.perUser(s) {
			own = append(own, s)
		} else {
			shared = append(shared, s)
		}
	}
	if len(own) == 0 {
		return shared, nil, nil
	}
	return shared, own, h.views.get(h, u.ID())
}

// get returns the view of the user with id, made on first use.
func (v *userViews) get(h *Host, id string) *registry.Registry {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	if uv := v.regs[id]; uv != nil {
		uv.used = now
		return uv.reg
	}
	if v.regs == nil {
		v.regs = map[string]*userView{}
	}
	if len(v.regs) >= conn.DefaultMaxUserConns { // (the bound of the connections)
		oldest := ""
		for k, uv := range v.regs {
			if oldest == "" || uv.used.Before(v.regs[oldest].used) {
				oldest = k
			}
		}
		delete(v.regs, oldest)
	}
	r := registry.New(source{h})
	v.regs[id] = &userView{reg: r, used: now}
	return r
}

// invalidate drops the lists of server in the view of the user with id, if
// it has one.
func (v *userViews) invalidate(id, server string, kind conn.ChangeKind) {
	v.mu.Lock()
	uv := v.regs[id]
	v.mu.Unlock()
	if uv != nil {
		invalidate(uv.reg, server, kind)
	}
}

// invalidate drops the list of server that kind names from reg.
func invalidate(reg *registry.Registry, server string, kind conn.ChangeKind) {
	switch kind {
	case conn.ToolsChanged:
		reg.InvalidateTools(server)
	case conn.PromptsChanged:
		reg.InvalidatePrompts(server)
	case conn.ResourcesChanged:
		reg.InvalidateResources(server)
	}
}

// mergeTools adds a view's tools to the shared registry's, in name order.
func mergeTools(ctx context.Context, tools []*registry.Tool, problems []registry.Problem, view *registry.Registry, own []string) ([]*registry.Tool, []registry.Problem) {
	if view == nil {
		return tools, problems
	}
	t2, p2 := view.Tools(ctx, own)
	tools = append(tools, t2...)
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, append(problems, p2...)
}

// ToolVisible reports whether name is the registry name of a tool that
// ctx's caller is served: held by the registry that lists its server for
// the caller (its own view for a per-user server), and, for a gateway user
// (WithCaller), not denied to it by the rules. It never lists a server: a tool whose server's list
// is not held is reported as not visible. (Telemetry names only such tools:
// any other name a client sends is not a label value.)
func (s *Serving) ToolVisible(ctx context.Context, name string) bool {
	h := s.h
	server, _, ok := registry.ParseName(name)
	if !ok {
		return false
	}
	if _, ok := h.regFor(ctx, server).LookupHeldOn(server, name); !ok {
		return false
	}
	// (Without a caller — no inbound OAuth — a denied tool is listed, and
	// its calls refused as denied.) The decision is the call's, taken once
	// (its DecisionNote): the gate applies this one.
	return whoOf(ctx) == nil || h.decision(ctx, DecisionNoteOf(ctx), name).Behavior != permissions.Deny
}

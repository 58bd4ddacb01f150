package gateway

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// Per-user servers (Options.Users). A server whose credentials are per
// gateway user is reached, for each user, through a connection of that
// user's own (conn.WithUser): its tools are listed from that connection
// (the server's authenticate pseudo-tool alone while the user must log
// in) and called through it. They are not among the tools served to all
// (Sync leaves the server out): each user's tools/list gets its own added,
// under their registry names (mcp__SERVER__TOOL, whatever the naming), and
// a call of one is routed by callerMiddleware. Their prompts and resources
// are not served.

// sharedServers are the active servers whose lists are served to all: with
// Options.Users, the per-user servers are left out.
func (g *Gateway) sharedServers() []string {
	active := g.h.ActiveServers()
	if !g.users.Load() {
		return active
	}
	out := active[:0:0]
	for _, s := range active {
		if !g.h.Serving().PerUser(s) {
			out = append(out, s)
		}
	}
	return out
}

// userServers are the active per-user servers (none without Options.Users).
func (g *Gateway) userServers() []string {
	if !g.users.Load() {
		return nil
	}
	var out []string
	for _, s := range g.h.ActiveServers() {
		if g.h.Serving().PerUser(s) {
			out = append(out, s)
		}
	}
	return out
}

// userTool reports whether name is the registry name of a per-user
// server's tool (served per user).
func (g *Gateway) userTool(name string) bool {
	if !g.users.Load() {
		return false
	}
	server, _, ok := registry.ParseName(name)
	if !ok || !g.h.Serving().PerUser(server) {
		return false
	}
	g.mu.Lock()
	_, shared := g.exposed.tools[name]
	g.mu.Unlock()
	return !shared
}

// addUserTools adds to the last page of a tools/list result for p the
// tools of the per-user servers, as p's own connections list them, less
// those the rules deny p. (With tool search, tools/list holds the mode's
// two tools only.)
func (g *Gateway) addUserTools(ctx context.Context, p *inbound.Principal, r *mcp.ListToolsResult) {
	servers := g.userServers()
	if len(servers) == 0 || r.NextCursor != "" || g.search != nil {
		return
	}
	// A server denied to p whole is not even connected for p.
	servers = slices.DeleteFunc(servers, func(s string) bool { return g.h.Serving().ServerDeniedFor(p, s) })
	tools, problems := g.h.ToolsOf(ctx, servers)
	for _, pr := range problems {
		g.log.Debug("a per-user server's tools are not listed", "server", pr.Server, "detail", pr.Detail)
	}
	list := make([]*mcp.Tool, 0, len(r.Tools)+len(tools))
	list = append(list, r.Tools...)
	for _, t := range tools {
		if g.h.Serving().DecideFor(p, t.Name).Behavior == permissions.Deny {
			continue
		}
		// (Served under its registry name: an override's name is not
		// applied here, its title, description and annotations are.)
		list = append(list, overridden(serverTool(t.Name, t), g.toolOverride(t).Unnamed()))
	}
	r.Tools = list
}

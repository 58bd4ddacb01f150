package gateway

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
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
// under their registry names (mcp__SERVER__TOOL; SERVER__TOOL under naming
// "server"; a tool override's name in place of TOOL), and a call of one is
// routed by callerMiddleware. Their prompts, resources and resource
// templates are listed and served likewise (userlists.go): prompts under
// their registry names, resources and templates under their qualified URIs
// (qualifyURI: ui://mcphost/SERVER/… for ui://…, mcphost://SERVER/… for any
// other), which the MCP Apps resource URIs of their tools name too, read by
// readUserResource. A list_changed on a user's connection reaches that
// user's sessions only (userListChanged).

// sharedServers are the active servers whose lists are served to all: with
// Options.Users, the per-user servers are left out.
func (g *Gateway) sharedServers() []string {
	active := g.activeServers()
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
	for _, s := range g.activeServers() {
		if g.h.Serving().PerUser(s) {
			out = append(out, s)
		}
	}
	return out
}

// userTool reports whether name is the served name of a per-user
// server's tool (served per user).
func (g *Gateway) userTool(ctx context.Context, name string) bool {
	_, ok := g.userToolName(ctx, name)
	return ok
}

// userToolName maps name, as a client calls it, to the registry name of the
// per-user server's tool it is the served name of (addUserTools): the
// registry name itself, or under naming "server" SERVER__TOOL, or the
// served name a tool override's name gives (mapped back through the
// server's overrides, never by parsing the tool part). ok is false if name
// is no per-user server's tool, the name of a tool served to all, or the
// name of a tool an override renames (it is served under the new name).
func (g *Gateway) userToolName(ctx context.Context, name string) (canonical string, ok bool) {
	canonical, server, ok := g.perUserName(name)
	if !ok {
		return "", false
	}
	g.mu.Lock()
	_, shared := g.exposed.tools[name]
	g.mu.Unlock()
	if shared {
		return "", false
	}
	if cfg := g.h.Config(); cfg != nil {
		if s := cfg.Server(server); s != nil && s.Tools != nil {
			renamedAway := false
			for tool, o := range s.Tools.Overrides {
				if o == nil || o.Name == "" {
					continue
				}
				if registry.ToolName(server, o.Name) == canonical {
					return registry.ToolName(server, tool), g.endpointAllows(ctx, registry.ToolName(server, tool))
				}
				if registry.ToolName(server, tool) == canonical {
					renamedAway = true
				}
			}
			if renamedAway {
				return "", false
			}
		}
	}
	return canonical, g.endpointAllows(ctx, canonical)
}

// userServedName is the name a per-user server's tool t is served under:
// its registry name, or that of its override's name (registry.ToolName of
// the server and the override's name), under naming "server" without the
// mcp__ prefix ("" when that reads as a registry name: not served, as
// exposeNames refuses it for the tools served to all).
func (g *Gateway) userServedName(t *registry.Tool) string {
	canonical := t.Name
	if n := g.toolOverride(t).GetName(); n != "" {
		canonical = registry.ToolName(t.Server, n)
	}
	if g.namingMode() != config.NamingServer {
		return canonical
	}
	served := strings.TrimPrefix(canonical, registry.Prefix)
	if _, _, ok := registry.ParseName(served); ok {
		return ""
	}
	return served
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
	// A tool an override renames takes its new name even where the server
	// has a tool of that name (userToolName maps the name to the renamed
	// tool): that other tool is left out, and logged.
	renamed := map[string]bool{}
	for _, t := range tools {
		if n := g.toolOverride(t).GetName(); n != "" {
			renamed[registry.ToolName(t.Server, n)] = true
		}
	}
	for _, t := range tools {
		if g.h.Serving().DecideFor(p, t.Name).Behavior == permissions.Deny || !g.endpointAllows(ctx, t.Name) {
			continue
		}
		if g.toolOverride(t).GetName() == "" && renamed[t.Name] {
			g.log.Warn("a per-user server's tool is not served: an override gives another of its tools its name", "tool", t.Name)
			continue
		}
		served := g.userServedName(t)
		if served == "" {
			continue
		}
		mt := overridden(serverTool(served, t), g.toolOverride(t).Unnamed())
		// Its MCP Apps resource is read through p's own connection, by its
		// qualified URI (readUserResource).
		mt.Meta = appsMeta(mt.Meta, func(uri string) string { return qualifyURI(t.Server, uri) })
		list = append(list, mt)
	}
	r.Tools = list
}

// userResource maps uri, a resource URI a client reads, to the per-user
// server and that server's own URI it names: the qualified form
// (qualifyURI: ui://mcphost/SERVER/… for ui://…) of a per-user server's resource, as the MCP Apps
// resource URIs of its tools are served (addUserTools). ok is false for
// any other URI.
func (g *Gateway) userResource(uri string) (server, own string, ok bool) {
	if !g.users.Load() {
		return "", "", false
	}
	server, own, ok = unqualifyURI(uri)
	if !ok || !g.h.Serving().PerUser(server) || !g.inEndpoint(server) {
		return "", "", false
	}
	return server, own, true
}

// readUserResource reads, for p, a per-user server's resource by its
// qualified URI (userResource) through p's own connection; a server denied
// to p is answered as a resource that does not exist.
func (g *Gateway) readUserResource(ctx context.Context, p *inbound.Principal, req *mcp.ReadResourceRequest, server, own string) (*mcp.ReadResourceResult, error) {
	if g.h.Serving().ServerDeniedFor(p, server) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	res, err := g.auditedRead(ctx, req, server, own)
	if err == nil && res != nil {
		setCacheScope(res, cachePrivate) // (read through p's own connection)
	}
	return res, err
}

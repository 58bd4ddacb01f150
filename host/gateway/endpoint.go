package gateway

import (
	"context"
	"slices"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// Named endpoints (Options.Endpoint, endpoint "NAME" blocks). Each is
// served by a Gateway of its own over the one Host: its own go-sdk server,
// exposure and naming, so what its clients are served — and what they can
// call, read or get — is only what Sync exposed for its servers and tools
// filter; everything else is looked up in that exposure and is unknown.
// The Host's call pipeline (permission rules, pins, limits, logins) and
// connections are shared, and the gateway's /mcp is not touched: nothing of
// this runs for a gateway without an endpoint but a comparison with "".
//
// The definition is read from the host's configuration at each Sync, so a
// reload that changes its servers, tools block or naming applies at the
// next Sync (Resync): its sessions stay open, are told the lists changed,
// and list the new names.
// An endpoint gone from the configuration keeps its last definition here.

// endpointDef is the gateway's endpoint, or nil for the whole gateway.
func (g *Gateway) endpointDef() *config.Endpoint {
	if g.endpoint == "" {
		return nil
	}
	return g.ep.Load()
}

// refreshEndpoint reads the endpoint's definition from the configuration
// again (Sync), and returns the naming the Sync is to serve: the
// endpoint's own, else the base (baseNaming); for the whole gateway, the
// one served. Sync publishes it (publishNaming) with the exposure it
// names, so that no reader sees the new naming with the old lists.
func (g *Gateway) refreshEndpoint() (naming string) {
	if g.endpoint == "" {
		return g.namingMode()
	}
	if e := g.h.Config().Endpoint(g.endpoint); e != nil {
		naming = e.Naming
		if naming == "" {
			naming = g.baseNaming()
		}
		g.ep.Store(e)
		g.epGone.Store(false)
		return naming
	}
	if !g.epGone.Swap(true) {
		g.log.Warn("the endpoint is no longer configured: its last definition is still served", "endpoint", g.endpoint)
	}
	return g.namingMode()
}

// baseNaming is the naming of an endpoint that sets none: the --naming
// flag's (Options.Naming) when given, else the settings' naming of the
// host's current configuration (a reload may change it).
func (g *Gateway) baseNaming() string {
	if g.flagNaming != "" {
		return g.flagNaming
	}
	return g.h.Config().Settings.Naming
}

// publishNaming makes naming the one served, with g.mu held by the Sync
// that swaps the exposure named so: the sessions are told the lists
// changed by that swap.
func (g *Gateway) publishNaming(naming string) {
	if old := g.namingMode(); naming != old {
		g.naming.Store(&naming)
		g.log.Info("the endpoint's naming changed", "endpoint", g.endpoint, "from", old, "to", naming)
	}
}

// namingMode is the naming mode the gateway serves (Options.Naming, an
// endpoint's own naming, as of the latest Sync).
func (g *Gateway) namingMode() string { return *g.naming.Load() }

// Endpoint returns the name of the endpoint the gateway serves ("" for the
// whole gateway).
func (g *Gateway) Endpoint() string { return g.endpoint }

// Resync asks the gateway's loop for a Sync, as a registry change does:
// after a reload changed what an endpoint serves.
func (g *Gateway) Resync() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// inEndpoint reports whether server is one of the servers the gateway
// serves (every server, for the whole gateway).
func (g *Gateway) inEndpoint(server string) bool {
	e := g.endpointDef()
	return e == nil || e.HasServer(server)
}

// endpointAllows reports whether the tool of registry name name is served
// by the gateway's endpoint (every tool, for the whole gateway), for the
// caller of ctx: the login pseudo-tool of one of its servers that needs
// the caller to log in (host.IsAuthTool) always is; a server's own tool
// named authenticate is filtered as any other.
func (g *Gateway) endpointAllows(ctx context.Context, name string) bool {
	e := g.endpointDef()
	if e == nil {
		return true
	}
	server, tool, ok := registry.ParseName(name)
	return ok && e.Allows(server, name, g.h.IsAuthTool(ctx, server, tool))
}

// endpointTools leaves out of tools those the endpoint does not serve
// (endpointAllows).
func (g *Gateway) endpointTools(ctx context.Context, tools []*registry.Tool) []*registry.Tool {
	e := g.endpointDef()
	if e == nil {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), func(t *registry.Tool) bool {
		return !e.Allows(t.Server, t.Name, g.h.IsAuthTool(ctx, t.Server, t.Original))
	})
}

// activeServers are the host's active servers the gateway serves.
func (g *Gateway) activeServers() []string {
	active := g.h.ActiveServers()
	if g.endpointDef() == nil {
		return active
	}
	return slices.DeleteFunc(active, func(s string) bool { return !g.inEndpoint(s) })
}

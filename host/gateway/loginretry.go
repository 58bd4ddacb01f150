package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// A 2026-07-28 client retries an authenticate pseudo-tool's call with the
// answer to the gateway's login request once the user has logged in. By
// then the login may have made the pseudo-tool go: the credentials it
// stored reach every replica through the shared state, and each one that
// adopts them reconnects the server and serves its real tools instead. The
// go-sdk server has no handler left for the pseudo-tool's name then, so a
// retry reaching a replica that has synced already (or this replica, after
// its watch loop synced) would be answered "unknown tool" although its
// login succeeded. loginRetryMiddleware hands such a retry to the call
// path itself, which waits for the login the retry names (its request
// state is sealed to the call and names the login's nonce: login.go) and
// answers with the server's tools.

// loginRetryMiddleware serves the retry of an authenticate pseudo-tool's
// call whose pseudo-tool is no longer served (see above). Any other request
// goes on to next.
func (g *Gateway) loginRetryMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cr, ok := req.(*mcp.CallToolRequest)
		if !ok || cr.Params == nil {
			return next(ctx, method, req)
		}
		name, ok := g.goneLoginRetry(ctx, cr.Params)
		if !ok {
			return next(ctx, method, req)
		}
		res, err := g.call(ctx, cr, name)
		return asUnknown(cr.Params.Name, res, err)
	}
}

// goneLoginRetry reports whether a tools/call of p is the retry of an
// authenticate pseudo-tool's call (it answers the gateway's login request)
// whose pseudo-tool the gateway no longer serves, and the pseudo-tool's
// registry name. The name called is a registry name, or under naming
// "server" one without its mcp__ prefix; under the servers' own names a
// gone pseudo-tool cannot be told apart (every server's is "authenticate"),
// and the retry is answered as an unknown tool as before.
func (g *Gateway) goneLoginRetry(ctx context.Context, p *mcp.CallToolParamsRaw) (string, bool) {
	if _, answered := p.InputResponses[loginKey]; !answered {
		return "", false
	}
	if g.servesTool(ctx, p.Name) {
		return "", false // (served: the go-sdk server's handler takes it)
	}
	name := p.Name
	if g.namingMode() == config.NamingServer {
		name = registry.Prefix + name
	}
	server, tool, ok := registry.ParseName(name)
	if !ok || tool != host.AuthToolName || !g.inEndpoint(server) || g.h.Connections().Get(server) == nil {
		return "", false
	}
	return name, true
}

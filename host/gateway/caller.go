package gateway

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
)

// The caller of each request the go-sdk server handles: its principal (set
// by a front's authentication, inbound OAuth), the rules decided for it,
// and the lists filtered to what it may use.

// principalOf returns the principal of a request the go-sdk server
// handles (its TokenInfo, as the bearer middleware set it), or nil.
func principalOf(req mcp.Request) *inbound.Principal {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	return principalOfToken(extra.TokenInfo)
}

// principalIn returns the principal of ctx's caller, or nil.
func principalIn(ctx context.Context) *inbound.Principal {
	if c := host.CallerOf(ctx); c != nil {
		return c.Principal
	}
	return nil
}

// principalOfToken returns the principal of a verified token's TokenInfo:
// inbound's, or for another verifier one made of its UserID, which the
// session binds to all the same.
func principalOfToken(ti *auth.TokenInfo) *inbound.Principal {
	if p := inbound.PrincipalOf(ti); p != nil {
		return p
	}
	return &inbound.Principal{Subject: ti.UserID, Scopes: ti.Scopes, Expiry: ti.Expiration}
}

// callerMiddleware gives every request the go-sdk server handles its
// caller (host.WithCaller), so that the permission rules for that principal
// decide its calls, reads and prompts; and shows each principal, in
// tools/list, prompts/list, resources/list and resources/templates/list,
// only what it may use (denied: hidden; ask: listed).
func (g *Gateway) callerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p := principalOf(req)
		if p == nil {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			return g.checkList(ctx, method, req, res)
		}
		ctx = host.WithCaller(ctx, p, bearerOf(req.GetExtra()))
		g.noteUserClient(p, req)
		if cr, ok := req.(*mcp.CallToolRequest); ok {
			if name, ok := g.userToolName(ctx, cr.Params.Name); ok {
				res, err := g.call(ctx, cr, name) // (not among the tools served to all)
				return asUnknown(cr.Params.Name, res, err)
			}
		}
		if rr, ok := req.(*mcp.ReadResourceRequest); ok && rr.Params != nil {
			if server, own, ok := g.userResource(rr.Params.URI); ok {
				return g.readUserResource(ctx, p, rr, server, own) // (not among the resources served to all)
			}
		}
		if gr, ok := req.(*mcp.GetPromptRequest); ok && gr.Params != nil {
			if name, ok := g.userPromptName(gr.Params.Name); ok {
				return g.getUserPrompt(ctx, p, gr, name) // (not among the prompts served to all)
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		g.filterFor(p, res)
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			g.addUserTools(ctx, p, r)
		case *mcp.ListPromptsResult:
			g.addUserPrompts(ctx, p, r)
		case *mcp.ListResourcesResult:
			g.addUserResources(ctx, p, r)
		case *mcp.ListResourceTemplatesResult:
			g.addUserTemplates(ctx, p, r)
		}
		if g.perPrincipal(res) {
			setCacheScope(res, cachePrivate)
		}
		return g.checkList(ctx, method, req, res)
	}
}

// checkList runs the hooks' and interceptors' checks of a list result res
// of req as served to ctx's caller (host.Serving.CheckList: they may filter or
// replace it); a list they refuse is answered with its JSON-RPC error
// (-32603). Any other result, and a list when no check is configured,
// pass as they are.
func (g *Gateway) checkList(ctx context.Context, method string, req mcp.Request, res mcp.Result) (mcp.Result, error) {
	switch res.(type) {
	case *mcp.ListToolsResult, *mcp.ListPromptsResult, *mcp.ListResourcesResult, *mcp.ListResourceTemplatesResult:
	default:
		return res, nil
	}
	if !g.h.Serving().HasChecks() {
		return res, nil
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	ctx = g.withCallInfo(ctx, sessionID(ss), frontOf(req))
	if err := g.h.Serving().CheckList(ctx, method, res); err != nil {
		return nil, asRefusalRPC(err)
	}
	return res, nil
}

// The cache scopes of a list result (2026-07-28: cacheScope).
const (
	cachePublic  = "public"
	cachePrivate = "private"
)

// perPrincipal reports whether res, a list answered for a principal, may
// differ from one principal to another: when some permission rules apply
// to some principals only (filterFor), and when per-user servers' tools,
// prompts, resources and templates are added (addUserTools,
// addUserPrompts, addUserResources, addUserTemplates). Such a list is served with
// cacheScope "private": only the requesting user's client may cache it.
func (g *Gateway) perPrincipal(res mcp.Result) bool {
	switch res.(type) {
	case *mcp.ListToolsResult, *mcp.ListPromptsResult, *mcp.ListResourcesResult, *mcp.ListResourceTemplatesResult:
		return g.h.Serving().HasPrincipalRules() || len(g.userServers()) > 0
	}
	return false
}

// setCacheScope sets the cacheScope of a list or read result (other
// results are left as they are).
func setCacheScope(res mcp.Result, scope string) {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		r.CacheScope = scope
	case *mcp.ListPromptsResult:
		r.CacheScope = scope
	case *mcp.ListResourcesResult:
		r.CacheScope = scope
	case *mcp.ListResourceTemplatesResult:
		r.CacheScope = scope
	case *mcp.ReadResourceResult:
		r.CacheScope = scope
	}
}

// filterFor removes from a list result what p may not use.
func (g *Gateway) filterFor(p *inbound.Principal, res mcp.Result) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		r.Tools = filtered(r.Tools, func(t *mcp.Tool) bool {
			rt, ok := g.exposed.tools[t.Name]
			return !ok || g.h.Serving().DecideFor(p, rt.Name).Behavior != permissions.Deny
		})
	case *mcp.ListPromptsResult:
		r.Prompts = filtered(r.Prompts, func(pr *mcp.Prompt) bool {
			rp, ok := g.exposed.prompts[pr.Name]
			return !ok || g.h.Serving().DecideFor(p, rp.Name).Behavior != permissions.Deny
		})
	case *mcp.ListResourcesResult:
		r.Resources = filtered(r.Resources, func(res *mcp.Resource) bool {
			o, ok := g.exposed.resources[res.URI]
			return !ok || !g.h.Serving().ServerDeniedFor(p, o.server)
		})
	case *mcp.ListResourceTemplatesResult:
		r.ResourceTemplates = filtered(r.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
			o, ok := g.exposed.templates[t.URITemplate]
			return !ok || !g.h.Serving().ServerDeniedFor(p, o.server)
		})
	}
}

// filtered keeps the elements keep accepts, in a new slice (the go-sdk's
// list is not changed in place).
func filtered[T any](list []T, keep func(T) bool) []T {
	out := make([]T, 0, len(list))
	for _, x := range list {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// bearerOf returns the bearer token of a request's Authorization header,
// or "".
func bearerOf(extra *mcp.RequestExtra) string {
	if extra == nil || extra.Header == nil {
		return ""
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(extra.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

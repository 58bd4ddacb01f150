package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loginKey names the gateway's login request among a call's input requests.
const loginKey = "mcphost-login"

// login answers a call of a server's authenticate pseudo-tool. The login
// runs in the host (its loopback callback, its token store); the downstream
// client only shows the authorization URL to its user. A client that
// supports URL-mode elicitation gets it as an input-required result (the
// go-sdk turns that into elicitation/create for older protocol versions);
// the retried call, carrying the request state issued for this call, waits
// for the login to finish and returns the server's tools. A client without
// it gets the URL as text, and the login completes in the background.
func (g *Gateway) login(ctx context.Context, req *mcp.CallToolRequest, name, server string) *mcp.CallToolResult {
	p := req.Params
	if resp, ok := p.InputResponses[loginKey]; ok {
		if !g.validState(p.RequestState, name, p.Arguments) {
			return errorResult(errors.New("the login answer does not belong to this call"))
		}
		if er, ok := resp.(*mcp.ElicitResult); !ok || er.Action != "accept" {
			return errorResult(fmt.Errorf("the login to %s was declined", server))
		}
		pl := g.h.PendingLoginOf(server)
		if pl == nil {
			return errorResult(fmt.Errorf("no login to %s is in progress; call %s again", server, name))
		}
		select {
		case <-pl.Done():
		case <-ctx.Done():
			return errorResult(ctx.Err())
		}
		if err := pl.Err(); err != nil {
			return errorResult(fmt.Errorf("logging in to %s: %w", server, err))
		}
		g.Sync(ctx) // the real tools are served before the client hears of them
		return g.h.LoginResult(ctx, server)
	}
	// The login outlives this request (the user completes it in a browser,
	// then the client retries); hauth.FlowTimeout bounds it.
	pl, err := g.h.StartLogin(context.WithoutCancel(ctx), server)
	if err != nil {
		return errorResult(fmt.Errorf("logging in to %s: %w", server, err))
	}
	if pl.URL == "" {
		g.Sync(ctx) // the login needed no user
		return g.h.LoginResult(ctx, server)
	}
	if !clientCanElicitURL(req) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("To log in to %s, open this URL in a browser and complete the login:\n%s\nThen list the tools again: the server's tools replace %s.", server, pl.URL, name),
		}}}
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{loginKey: &mcp.ElicitParams{
			Mode:          "url",
			Message:       fmt.Sprintf("Log in to the MCP server %s to use its tools.", server),
			URL:           pl.URL,
			ElicitationID: g.askState(server, nil),
		}},
		RequestState: g.askState(name, p.Arguments),
	}
}

// clientCanElicitURL reports whether the downstream client declared
// URL-mode elicitation.
func clientCanElicitURL(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil && ip.Capabilities.Elicitation.URL != nil
}

package serve

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// sessionRequester answers an upstream server's requests during a call
// (elicitation, sampling, roots) by asking the downstream session that made
// the call. It is comparable: the calls of one session share one.
type sessionRequester struct{ ss *mcp.ServerSession }

func (r sessionRequester) Capabilities() *mcp.ClientCapabilities {
	if r.ss == nil {
		return nil
	}
	if ip := r.ss.InitializeParams(); ip != nil {
		return ip.Capabilities
	}
	return nil
}

func (r sessionRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return r.ss.Elicit(ctx, p)
}

func (r sessionRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return r.ss.CreateMessage(ctx, p)
}

func (r sessionRequester) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return r.ss.ListRoots(ctx, p)
}

// matchesTemplate reports whether uri is an expansion of the RFC 6570 URI
// template tmpl.
func matchesTemplate(tmpl, uri string) bool {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return false
	}
	return t.Regexp().MatchString(uri)
}

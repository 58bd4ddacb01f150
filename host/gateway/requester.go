package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// sessionRequester answers an upstream server's requests during a call
// (elicitation, sampling, roots) by asking the downstream session that made
// the call, within the call's request (over HTTP, on the call's own stream).
// Its Client is the session: the calls of one session are one client.
type sessionRequester struct {
	ss   *mcp.ServerSession
	ctx  context.Context         // the downstream request's
	caps *mcp.ClientCapabilities // the downstream request's client's
	g    *Gateway                // whose session ss is (nil: not known)
}

func (r sessionRequester) Client() any { return r.ss }

func (r sessionRequester) Capabilities() *mcp.ClientCapabilities {
	if r.caps != nil {
		return r.caps
	}
	if r.ss == nil {
		return nil
	}
	if ip := r.ss.InitializeParams(); ip != nil {
		return ip.Capabilities
	}
	return nil
}

func (r sessionRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ctx, done := r.within(ctx)
	defer done()
	return r.ss.Elicit(ctx, p)
}

func (r sessionRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	ctx, done := r.within(ctx)
	defer done()
	return r.ss.CreateMessage(ctx, p)
}

func (r sessionRequester) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	ctx, done := r.within(ctx)
	defer done()
	return r.ss.ListRoots(ctx, p)
}

// within is ctx's cancellation with the downstream request's values (which
// tie what is sent to the request: its HTTP stream, its log level); done
// releases it.
func (r sessionRequester) within(ctx context.Context) (context.Context, func()) {
	if r.ctx == nil {
		return ctx, func() {}
	}
	c, cancel := context.WithCancel(r.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() {
		stop()
		cancel()
	}
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

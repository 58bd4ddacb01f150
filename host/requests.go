package host

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
)

// hostRequester answers a server's requests during the CLI's and the
// library's calls with Options.OnElicit and Options.OnCreateMessage. It is
// comparable: the calls to one server share one (see conn.Requester).
type hostRequester struct {
	h      *Host
	server string
}

func (h *Host) requester(server string) conn.Requester { return hostRequester{h, server} }

func (r hostRequester) Capabilities() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if r.h.onElicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	}
	if r.h.onCreateMessage != nil {
		caps.Sampling = &mcp.SamplingCapabilities{}
	}
	return caps
}

func (r hostRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if r.h.onElicit == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support elicitation"}
	}
	return r.h.onElicit(ctx, r.server, &mcp.ElicitRequest{Params: p})
}

func (r hostRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if r.h.onCreateMessage == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support sampling"}
	}
	return r.h.onCreateMessage(ctx, r.server, p)
}

func (r hostRequester) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errors.New("mcphost offers no roots")
}

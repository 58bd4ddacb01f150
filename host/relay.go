package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
)

// RelayOptions says for whom RelayCall makes a call.
type RelayOptions struct {
	// ProtocolVersion is the client's.
	ProtocolVersion string
	// Caps are the client's capabilities (the JSON object of a 2026-07-28
	// request's _meta "io.modelcontextprotocol/clientCapabilities"): the
	// server is offered only those. nil offers this host's.
	Caps []byte
	// Requester gets what the server sends during the call; Asks: it can
	// put the server's own requests to the client (see conn.RawCall).
	Requester conn.Requester
	Asks      bool
}

// RelayCall is the gateway's fast path for tools/call. It resolves name like
// CallTool, and if the tool's server is a stdio server whose session speaks
// protocolVersion, sends the call with the raw JSON arguments and returns the
// server's raw JSON-RPC response line without decoding it. A response long
// enough that its text could exceed MaxResultChars is decoded and processed as
// in CallTool, then re-encoded.
//
// o says for whom the call is made (see RelayOptions).
//
// handled is false when the call cannot take this path; the caller then
// uses CallTool (see conn.Manager.CallRaw for the one case where the call
// was sent). With handled true, either resp or err is set.
func (h *Host) RelayCall(ctx context.Context, name string, args json.RawMessage, o RelayOptions) (resp []byte, handled bool, err error) {
	g, err := h.gate(ctx, name, false, 0, gateNoPerson)
	if err != nil {
		return nil, false, nil // CallTool reports it, asks, refuses or logs in
	}
	t := g.tool
	// The relay asks for no progress, so tool_timeout bounds the whole call
	// (max_tool_duration is never shorter).
	timeout := g.idle
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errIdle)
	defer cancel()
	gen := g.gen
	resp, handled, err = h.conns.CallRaw(ctx, t.Server, conn.RawCall{ // on another session, CallTool checks t again
		Tool: t.Original, Args: args, ProtocolVersion: o.ProtocolVersion, Gen: gen, Caps: o.Caps, Requester: o.Requester, Asks: o.Asks})
	if !handled {
		return nil, false, nil
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), errIdle) {
			return nil, true, &TimeoutError{Tool: name, Limit: timeout} // notifications/cancelled was sent
		}
		return nil, true, fmt.Errorf("calling %s: %w", name, err)
	}
	if len(resp) <= MaxResultChars {
		return resp, true, nil // its text cannot exceed the limit
	}
	// Large: decode, process as CallTool does, and encode again.
	msg, err := jsonrpcmsg.Decode(resp)
	if err != nil {
		return nil, true, fmt.Errorf("calling %s: invalid response: %w", name, err)
	}
	jr, ok := msg.(*jsonrpc.Response)
	if !ok || jr.Error != nil {
		return resp, true, nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(jr.Result, &res); err != nil {
		return nil, true, fmt.Errorf("calling %s: invalid result: %w", name, err)
	}
	out, err := h.processResult(t, &res)
	if err != nil {
		return nil, true, err
	}
	if jr.Result, err = json.Marshal(out); err != nil {
		return nil, true, err
	}
	b, err := jsonrpc.EncodeMessage(jr)
	return b, true, err
}

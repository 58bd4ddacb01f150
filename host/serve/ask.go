package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/permissions"
)

// askKey names the gateway's permission question among a call's input requests.
const askKey = "mcphost-permission"

// Asking the downstream client uses the multi-round-trip request pattern
// (SEP-2322): the first call returns an input-required result carrying an
// elicitation; the client retries with the answer. The go-sdk turns this into
// an elicitation/create request for clients of protocol versions before
// 2026-07-28, so both kinds of client can answer.
//
// The retry must carry the request state the gateway issued for this very
// call (an HMAC over the tool name and arguments with a per-gateway key), so
// an answer cannot be supplied without the question having been asked, nor
// reused for other arguments.

var errNoElicitation = errors.New("the client cannot be asked (it does not support elicitation)")

// askRequest returns the input-required result that asks about a call.
func (g *Gateway) askRequest(name string, args []byte, d permissions.Decision) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{askKey: &mcp.ElicitParams{
			Mode:    "form",
			Message: fmt.Sprintf("Allow the tool %s to run? (%s)", name, d.Explain()),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"decision": map[string]any{"type": "string", "enum": []string{"allow", "deny"}, "description": "allow once, or deny"},
				},
				"required": []string{"decision"},
			},
		}},
		RequestState: g.askState(name, args),
	}
}

// askAnswer reads the client's answer from a retried call: approved, or an
// error saying why not.
func (g *Gateway) askAnswer(p *mcp.CallToolParamsRaw, name string) (bool, error) {
	resp, ok := p.InputResponses[askKey]
	if !ok {
		return false, nil
	}
	if !g.validState(p.RequestState, name, p.Arguments) {
		return false, errors.New("the answer does not belong to this call")
	}
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return false, errors.New("the answer is not an elicitation result")
	}
	if er.Action != "accept" || er.Content["decision"] != "allow" {
		return false, fmt.Errorf("the client declined (%s)", er.Action)
	}
	return true, nil
}

func (g *Gateway) askState(name string, args []byte) string {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(append(nonce, g.mac(nonce, name, args)...))
}

func (g *Gateway) validState(state, name string, args []byte) bool {
	b, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(b) != 16+sha256.Size {
		return false
	}
	return hmac.Equal(b[16:], g.mac(b[:16], name, args))
}

func (g *Gateway) mac(nonce []byte, name string, args []byte) []byte {
	m := hmac.New(sha256.New, g.askSecret)
	m.Write(nonce)
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write(args)
	return m.Sum(nil)
}

// clientCanElicit reports whether the downstream client declared elicitation.
func clientCanElicit(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

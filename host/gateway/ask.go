package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/redact"
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
// call: an HMAC, with a per-gateway key, over what the state is for (the
// gateway's question, a login, or an upstream server's own input requests),
// the tool name, the arguments and the upstream server's own state. An
// answer cannot be supplied without the question having been asked, nor
// reused for other arguments, nor an upstream's state be forged or moved to
// another call.

var errNoElicitation = errors.New("the client cannot be asked (it does not support elicitation)")

// stateKind says what a request state the gateway issued is for.
type stateKind byte

const (
	stateAsk      stateKind = 1 // the gateway's permission question
	stateLogin    stateKind = 2 // a login through the authenticate pseudo-tool
	stateUpstream stateKind = 3 // the upstream server's input requests
	stateHeld     stateKind = 4 // a held call's question (held.go)
)

const nonceLen = 16

// askRequest returns the input-required result that asks about a call:
// the tool, the rule, and the call's arguments (redact.Arguments: bounded,
// secrets masked).
func (g *Gateway) askRequest(ctx context.Context, name string, args []byte, d permissions.Decision) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{askKey: &mcp.ElicitParams{
			Mode:    "form",
			Message: fmt.Sprintf("Allow the tool %s to run? (%s)\nArguments:\n%s", name, d.Explain(), redact.Arguments(args, "  ")),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"decision": map[string]any{"type": "string", "enum": []string{"allow", "deny"}, "description": "allow once, or deny"},
				},
				"required": []string{"decision"},
			},
		}},
		RequestState: g.sealState(ctx, stateAsk, name, args, nil),
	}
}

// askAnswer reads the client's answer from a retried call: approved, or an
// error saying why not.
func (g *Gateway) askAnswer(ctx context.Context, p *mcp.CallToolParamsRaw, name string) (bool, error) {
	resp, ok := p.InputResponses[askKey]
	if !ok {
		return false, nil
	}
	if _, ok := g.openState(ctx, p.RequestState, stateAsk, name, p.Arguments); !ok {
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

// sealState issues a request state of kind for the call of name with args,
// carrying the upstream server's own state (if any). It is sealed to ctx's
// caller too (host.CallerOf): with inbound OAuth, a state issued to one
// principal is refused from another.
func (g *Gateway) sealState(ctx context.Context, kind stateKind, name string, args, upstream []byte) string {
	b := make([]byte, nonceLen, nonceLen+sha256.Size+1+len(upstream))
	rand.Read(b)
	b = append(b, g.mac(g.askKeys[0], b[:nonceLen], kind, callerID(ctx), name, args, upstream)...)
	b = append(b, byte(kind))
	b = append(b, upstream...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// openState checks a request state against the call it comes back with and
// returns the upstream server's state it carries.
func (g *Gateway) openState(ctx context.Context, state string, kind stateKind, name string, args []byte) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(b) < nonceLen+sha256.Size+1 || stateKind(b[nonceLen+sha256.Size]) != kind {
		return nil, false
	}
	upstream := b[nonceLen+sha256.Size+1:]
	for _, key := range g.askKeys { // (the first signs; each verifies, for a rotation)
		if hmac.Equal(b[nonceLen:nonceLen+sha256.Size], g.mac(key, b[:nonceLen], kind, callerID(ctx), name, args, upstream)) {
			return upstream, true
		}
	}
	return nil, false
}

func (g *Gateway) mac(key, nonce []byte, kind stateKind, who, name string, args, upstream []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(nonce)
	m.Write([]byte{byte(kind)})
	m.Write([]byte(who))
	m.Write([]byte{0})
	m.Write([]byte(name))
	m.Write([]byte{0})
	var n [8]byte
	for i, l := 0, uint64(len(args)); i < 8; i++ {
		n[i] = byte(l >> (8 * i))
	}
	m.Write(n[:]) // the length keeps args and upstream apart
	m.Write(args)
	m.Write(upstream)
	return m.Sum(nil)
}

// callerID is the ID of ctx's caller ("" for none): what a request state
// is sealed to besides its call.
func callerID(ctx context.Context) string {
	if c := host.CallerOf(ctx); c != nil {
		return c.Principal.ID()
	}
	return ""
}

// canElicit reports whether the downstream client declared elicitation.
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

package stdio

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/host/gateway"
)

// Telemetry of the stdio front (with telemetry on; with it off, only the
// decision a relayed call handed over carries, see carry): a relayed call
// has its span from the relay (gateway.Gateway.StartRelaySpan); a request
// handed to the go-sdk server is spanned there by the core's middleware,
// which learns its id, that it came over stdio, and the span a relayed
// call the raw lane did not take carries, from the RequestExtra that
// decoded attaches (gateway.PipeExtra).

// decoded attaches to each request the go-sdk server gets over stdio a
// RequestExtra with the gateway's internal headers: its id, the stdio
// mark, and the token of its carried span if the relay passed it on. Only
// with telemetry on, or for a relayed call whose decision the relay
// carries (hooks or interceptors configured: gateway.Gateway.CarrySpan)
// (lineconn.Config.Decoded).
func (c *relayConn) decoded(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Extra != nil {
		return msg
	}
	key := gateway.RequestIDKey(req.ID)
	c.mu.Lock()
	tok := c.carried[key]
	c.mu.Unlock()
	if tok == "" && !c.g.TelemetryEnabled() {
		return msg
	}
	req.Extra = gateway.PipeExtra(key, tok)
	return msg
}

// carry passes span, of the relayed call with id key, on to the go-sdk
// server, which is given the call's line next (nothing without telemetry
// and checks).
func (c *relayConn) carry(key string, span gateway.RelaySpan) {
	tok := c.g.CarrySpan(span)
	if tok == "" {
		return
	}
	c.mu.Lock()
	if c.carried == nil {
		c.carried = map[string]string{}
	}
	c.carried[key] = tok
	c.mu.Unlock()
}

// answered ends, when the go-sdk server writes the response to a request
// whose span the relay carried to it, that span if the middleware did not
// take it (the request was refused before any handler).
func (c *relayConn) answered(resp *jsonrpc.Response) {
	key := gateway.RequestIDKey(resp.ID)
	c.mu.Lock()
	tok, ok := c.carried[key]
	delete(c.carried, key)
	c.mu.Unlock()
	if ok {
		var err error
		if resp.Error != nil {
			err = resp.Error
		}
		c.g.AbandonSpan(tok, err)
	}
}

// dropCarried ends the carried spans still waiting when the connection
// closes.
func (c *relayConn) dropCarried() {
	c.mu.Lock()
	toks := make([]string, 0, len(c.carried))
	for _, tok := range c.carried {
		toks = append(toks, tok)
	}
	c.carried = nil
	c.mu.Unlock()
	for _, tok := range toks {
		c.g.AbandonSpan(tok, context.Canceled)
	}
}

package wire

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// ToolCall is what a tools/call request is made of, as the relay reads it.
type ToolCall struct {
	// Name is the tool's name as the client sent it (decoded); "" if
	// params has no name, or it is not a string.
	Name string
	// Arguments are the raw arguments (nil: none).
	Arguments []byte
	// ProtocolVersion is the protocol version the request's _meta names
	// and HasProtocolVersion whether it names one (an empty one too);
	// Capabilities are the client capabilities it names (raw; nil if
	// none).
	ProtocolVersion    string
	HasProtocolVersion bool
	Capabilities       []byte
	// Trace are the request's W3C trace context members of _meta
	// (traceparent, tracestate, baggage) as encoded JSON members without
	// braces, or nil.
	Trace []byte
	// Plain reports that nothing about the call needs the go-sdk: its id
	// is a string or a number; params is an object of just name (a
	// string), arguments (an object) and _meta; _meta holds only W3C
	// trace context (strings) and protocol-reserved members other than
	// the log level, each of the type the go-sdk takes (no progress
	// token, no log level, no multi-round-trip state, no other metadata).
	Plain bool
}

// Call returns the parts of a tools/call request (ok false for any other
// message).
func (m *Message) Call() (c *ToolCall, ok bool) {
	if !m.isCall {
		return nil, false
	}
	return &m.call, true
}

// SetTool records the tool the call's name resolves to (its canonical
// name; "" for a tool not served), once the gateway, which owns the
// naming, has resolved it, so that later steps do not resolve it again.
func (m *Message) SetTool(canonical string) {
	m.resolved, m.hasTool = canonical, true
}

// Tool is the canonical name SetTool recorded ("" for a tool not served);
// resolved is false before SetTool.
func (m *Message) Tool() (canonical string, resolved bool) { return m.resolved, m.hasTool }

// readCall reads the parts of a tools/call request m.
func readCall(m *Message) (c ToolCall) {
	c.Plain = true
	if id := m.ID; len(id) == 0 || !(id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		c.Plain = false
	}
	if v, ok := rawjson.Find(m.env.list(), "jsonrpc"); !ok || string(v.Value) != `"2.0"` {
		// Not a JSON-RPC 2.0 message as written (or spelled with
		// escapes): the go-sdk path answers it as it answers any other.
		c.Plain = false
	}
	for _, p := range m.params.list() {
		switch string(p.Key) {
		case "name":
			var ok bool
			if c.Name, ok = rawjson.String(p.Value); !ok {
				c.Plain = false
			}
		case "arguments":
			if p.Value[0] != '{' {
				c.Plain = false
			}
			c.Arguments = p.Value
		case "_meta":
			if !m.hasMeta {
				c.Plain = false // (not an object)
				continue
			}
			for _, e := range m.meta.list() {
				if !c.meta(e) {
					c.Plain = false
				}
			}
		default:
			c.Plain = false
		}
	}
	return c
}

// meta reads one member of a tools/call's _meta and reports whether it
// leaves the call plain.
func (c *ToolCall) meta(e rawjson.Member) bool {
	if traceKey(e.Key) {
		if len(e.Value) == 0 || e.Value[0] != '"' {
			return false // (not a string: the go-sdk path decides)
		}
		if c.Trace != nil {
			c.Trace = append(c.Trace, ',')
		}
		c.Trace = append(append(append(append(c.Trace, '"'), e.Key...), `":`...), e.Value...)
		return true
	}
	if !mcpmeta.IsReserved(string(e.Key)) || string(e.Key) == mcp.MetaKeyLogLevel {
		// A progress token, a log level (the server's messages during
		// the call go to the call's stream) or other metadata.
		return false
	}
	switch string(e.Key) {
	case mcp.MetaKeyProtocolVersion:
		v, ok := rawjson.String(e.Value)
		c.ProtocolVersion, c.HasProtocolVersion = v, true
		return ok
	case mcp.MetaKeyClientCapabilities:
		if e.Value[0] != '{' {
			return false
		}
		c.Capabilities = e.Value
	case mcp.MetaKeyClientInfo:
		var info mcp.Implementation
		if e.Value[0] != '{' || json.Unmarshal(e.Value, &info) != nil {
			return false // (the go-sdk refuses it)
		}
	}
	return true
}

// traceKey reports whether a _meta member is W3C trace context, which the
// MCP conventions of OpenTelemetry carry there.
func traceKey(k []byte) bool {
	switch string(k) {
	case "traceparent", "tracestate", "baggage":
		return true
	}
	return false
}

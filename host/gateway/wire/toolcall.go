package wire

import (
	"bytes"
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
	// Task is the raw task parameter of a 2025-11-25 task-augmented call
	// (an object; nil: none), forwarded as it is.
	Task []byte
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
		case "task":
			if p.Value[0] != '{' {
				c.Plain = false
			}
			c.Task = p.Value
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
	if !bytes.HasPrefix(e.Key, []byte(mcpmeta.Prefix)) || string(e.Key) == mcp.MetaKeyLogLevel {
		// A progress token, a log level (the server's messages during
		// the call go to the call's stream) or other metadata.
		return false
	}
	switch string(e.Key) {
	case mcp.MetaKeyProtocolVersion:
		v, ok := protocolVersion(e.Value)
		c.ProtocolVersion, c.HasProtocolVersion = v, true
		return ok
	case mcp.MetaKeyClientCapabilities:
		if e.Value[0] != '{' {
			return false
		}
		c.Capabilities = e.Value
	case mcp.MetaKeyClientInfo:
		if !clientInfoOK(e.Value) {
			return false // (the go-sdk refuses it)
		}
	}
	return true
}

// protocolVersion decodes a protocol version (a JSON string), without
// allocating for the versions clients send.
func protocolVersion(v []byte) (string, bool) {
	if len(v) > 2 && v[0] == '"' && v[len(v)-1] == '"' {
		switch string(v[1 : len(v)-1]) {
		case "2026-07-28":
			return "2026-07-28", true
		case "2025-11-25":
			return "2025-11-25", true
		case "2025-06-18":
			return "2025-06-18", true
		}
	}
	return rawjson.String(v)
}

// clientInfoOK reports whether the go-sdk takes v, a request's _meta
// clientInfo, as an mcp.Implementation: a JSON object that encoding/json
// decodes into one. The usual object — names spelled as the struct's tags
// spell them, each a string or null, and other members of any value (which
// encoding/json ignores) — is checked on the raw bytes; anything else
// (icons, a name that differs from a field's only in case, a duplicate
// name, an escaped or non-ASCII one) is decoded, as before.
func clientInfoOK(v []byte) bool {
	if len(v) == 0 || v[0] != '{' {
		return false // (null too: the go-sdk refuses it)
	}
	var arr [8]rawjson.Member
	if ms, err := rawjson.Members(arr[:0], v); err == nil {
		plain := true
		for _, m := range ms {
			switch string(m.Key) {
			case "name", "title", "description", "version", "websiteUrl":
				if m.Value[0] != '"' && m.Value[0] != 'n' {
					return false // (not a string, nor null: a type error)
				}
			default:
				if implementationField(m.Key) {
					plain = false
				}
			}
		}
		if plain {
			return true
		}
	}
	var info mcp.Implementation
	return json.Unmarshal(v, &info) == nil
}

// implementationField reports whether encoding/json matches the (ASCII)
// member name k to a field of mcp.Implementation: its names differ only
// in case, and icons, whose elements the fast check does not read.
func implementationField(k []byte) bool {
	for _, f := range [...]string{"name", "title", "description", "version", "websiteUrl", "icons"} {
		if bytes.EqualFold(k, []byte(f)) {
			return true
		}
	}
	return false
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

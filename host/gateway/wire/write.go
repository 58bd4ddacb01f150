package wire

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/mcpmeta"
	"github.com/mcphost/mcphost/internal/rawjson"
)

const head = `{"jsonrpc":"2.0","id":`

// appendID appends the raw id, or null for nil (a message whose id is
// unknown).
func appendID(b, id []byte) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	return append(b, id...)
}

// Error is the JSON-RPC error response to the request with the raw id
// (nil: null, unknown): code and message, and data (raw JSON) unless nil.
func Error(id []byte, code int64, message string, data []byte) []byte {
	msg, _ := json.Marshal(message)
	b := make([]byte, 0, len(head)+len(id)+44+len(msg)+len(data))
	b = append(b, head...)
	b = appendID(b, id)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = append(b, msg...)
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, "}}"...)
}

// Result is the JSON-RPC response to the request with the raw id, with
// result (raw JSON).
func Result(id []byte, result []byte) []byte {
	b := make([]byte, 0, len(head)+len(id)+11+len(result))
	b = append(b, head...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// ErrorResult is a tools/call result with isError set and msg as its text.
func ErrorResult(msg string) json.RawMessage {
	b, _ := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}})
	return b
}

// Request is a JSON-RPC request with the raw id, method and params (raw
// JSON; nil: none).
func Request(id []byte, method string, params []byte) []byte {
	b := make([]byte, 0, len(head)+len(id)+len(method)+len(params)+24)
	b = append(b, head...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// Notification is a JSON-RPC notification with method and params (raw
// JSON; nil: none).
func Notification(method string, params []byte) []byte {
	b := make([]byte, 0, len(method)+len(params)+48)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// Cancelled is the notifications/cancelled of the request with the raw
// id, for reason.
func Cancelled(id []byte, reason string) []byte {
	r, _ := json.Marshal(reason)
	p := make([]byte, 0, len(id)+len(r)+26)
	p = append(p, `{"requestId":`...)
	p = append(p, id...)
	p = append(p, `,"reason":`...)
	p = append(p, r...)
	return Notification("notifications/cancelled", append(p, '}'))
}

// JSON-RPC error codes the gateway answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// The messages of the gateway's refusals of malformed messages.
const (
	msgDuplicateID = "invalid request: a request with this id is already in flight"
	msgInvalidID   = "invalid request: the id must be a string or an integer"
	msgNotJSONRPC  = "invalid request: not a JSON-RPC 2.0 message"
)

// DuplicateID answers a request whose id (raw) is already in flight.
func DuplicateID(id []byte) []byte { return Error(id, CodeInvalidRequest, msgDuplicateID, nil) }

// InvalidID answers a request whose id is neither a string nor an integer.
func InvalidID() []byte { return Error(nil, CodeInvalidRequest, msgInvalidID, nil) }

// NotJSONRPC answers a message, with the raw id (nil if unknown), that is
// valid JSON but not a JSON-RPC 2.0 message.
func NotJSONRPC(id []byte) []byte { return Error(id, CodeInvalidRequest, msgNotJSONRPC, nil) }

// StrictError is the answer to a message that fails Parse with err.
func StrictError(err error) []byte {
	switch {
	case errors.Is(err, ErrDuplicate):
		return Error(nil, CodeInvalidRequest, "invalid request: duplicate or case-variant member names", nil)
	case errors.Is(err, ErrName):
		return Error(nil, CodeInvalidRequest, "invalid request: member names must be ASCII, without escapes", nil)
	case errors.Is(err, ErrNotObject):
		return Error(nil, CodeInvalidRequest, "invalid request: a message must be one JSON object", nil)
	}
	return Error(nil, CodeParseError, "parse error", nil)
}

// RewriteResponse puts the client's raw id into an upstream response and
// drops the upstream's protocol-reserved result _meta (its serverInfo):
// downstream, the gateway is the server. Everything else is passed through
// byte for byte. ok is false for a response that is not a JSON object
// with an id.
func RewriteResponse(resp, clientID []byte) (out []byte, ok bool) {
	var arr [inline]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return nil, false
	}
	id, ok := rawjson.Find(ms, "id")
	if !ok {
		return nil, false
	}
	out = make([]byte, 0, len(resp)+len(clientID))
	result, hasResult := rawjson.Find(ms, "result")
	if !hasResult || !mcpmeta.MayHave(result.Value) {
		out = append(out, resp[:id.Start]...)
		out = append(out, clientID...)
		return append(out, resp[id.End:]...), true
	}
	// Rebuild the envelope with a cleaned result, in the same buffer.
	out = append(append(append(out, head...), clientID...), `,"result":`...)
	if out, ok = mcpmeta.AppendStripRaw(out, result.Value); !ok {
		return nil, false
	}
	return append(out, '}'), true
}

// ErrorCode returns the raw code of an error response (nil if resp is not
// one).
func ErrorCode(resp []byte) []byte {
	var arr [inline]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return nil
	}
	e, ok := rawjson.Find(ms, "error")
	if !ok {
		return nil
	}
	var earr [4]rawjson.Member
	es, err := rawjson.Members(earr[:0], e.Value)
	if err != nil {
		return nil
	}
	code, _ := rawjson.Find(es, "code")
	return code.Value
}

// CallRequest is a tools/call request, written in one buffer: the raw id,
// the tool's name as a JSON string (encoded), the raw arguments (nil: none)
// and its _meta: the members meta and trace (encoded JSON members without
// braces; nil: none) and, if caps is not nil, the client's capabilities
// (a JSON object) under the key of MCP's reserved _meta for them.
func CallRequest(id, name, args, meta, caps, trace []byte) []byte {
	b := make([]byte, 0, 96+len(id)+len(name)+len(args)+len(meta)+len(capsKey)+len(caps)+len(trace))
	b = append(b, head...)
	b = append(b, id...)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = append(b, name...)
	if len(args) > 0 {
		b = append(b, `,"arguments":`...)
		b = append(b, args...)
	}
	if hasMeta(meta, caps, trace) {
		b = append(b, ',')
		b = appendMeta(b, meta, caps, trace)
	}
	return append(b, "}}"...)
}

// appendString appends s as a JSON string (encoding/json's encoding: Go's
// quoting is not JSON's for control characters and invalid UTF-8).
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// MethodRequest is a request of method with the raw id and params given as
// their members without braces (members, "" for none), with meta, caps
// and trace added to params._meta as CallRequest adds them: the raw lane's
// requests other than tools/call (the tasks methods).
func MethodRequest(id []byte, method string, members, meta, caps, trace []byte) []byte {
	b := make([]byte, 0, 64+len(id)+len(method)+len(members)+len(meta)+len(capsKey)+len(caps)+len(trace))
	b = append(b, head...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":{`...)
	b = append(b, members...)
	if hasMeta(meta, caps, trace) {
		if len(members) > 0 {
			b = append(b, ',')
		}
		b = appendMeta(b, meta, caps, trace)
	}
	return append(b, "}}"...)
}

// capsKey is the key of MCP's reserved _meta for the client's
// capabilities, as a JSON member's key and colon.
const capsKey = `"` + mcp.MetaKeyClientCapabilities + `":`

// hasMeta tells whether appendMeta has anything to write.
func hasMeta(meta, caps, trace []byte) bool {
	return len(meta) > 0 || caps != nil || len(trace) > 0
}

// appendMeta appends the member "_meta" of CallRequest and MethodRequest:
// the members meta and trace and, if caps is not nil, caps under capsKey.
func appendMeta(b, meta, caps, trace []byte) []byte {
	b = append(b, `"_meta":{`...)
	b = append(b, meta...)
	sep := len(meta) > 0
	if caps != nil {
		if sep {
			b = append(b, ',')
		}
		b = append(b, capsKey...)
		b = append(b, caps...)
		sep = true
	}
	if len(trace) > 0 {
		if sep {
			b = append(b, ',')
		}
		b = append(b, trace...)
	}
	return append(b, '}')
}

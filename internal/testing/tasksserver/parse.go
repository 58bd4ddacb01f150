package tasksserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// request is one parsed JSON-RPC request or notification, with the fields of
// its params the server reads.
type request struct {
	id     jsonrpc.ID // invalid for notifications
	method string
	params json.RawMessage

	// caps are the client capabilities in the request's _meta
	// ("io.modelcontextprotocol/clientCapabilities"), nil when absent.
	caps *clientCaps
	// name is params.name (tools/call, prompts/get), uri params.uri
	// (resources/read), taskID params.taskId (tasks/*): what an Mcp-Name
	// header must match.
	name, uri, taskID string
	// arguments, inputResponses and requestState of tools/call (MRTR) and
	// tasks/update.
	arguments      json.RawMessage
	inputResponses map[string]json.RawMessage
	requestState   string
}

// clientCaps is the part of a client's capabilities the server reads.
type clientCaps struct {
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// hasTasks reports whether the capabilities declare the tasks extension.
func (c *clientCaps) hasTasks() bool {
	if c == nil {
		return false
	}
	v, ok := c.Extensions[Extension]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// parseMessage parses one JSON-RPC message read from a client. It returns
// (nil, nil) for a response (the server sends no requests, so responses are
// ignored), and a *jsonrpc.Error for a malformed message; req is then
// non-nil when the message was a request whose id is known, so that the
// error can be answered.
func parseMessage(data []byte) (*request, *jsonrpc.Error) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + err.Error()}
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil, nil
	}
	req := &request{id: r.ID, method: r.Method, params: r.Params}
	if r.Method == "" {
		return req, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: no method"}
	}
	if jerr := req.parseParams(); jerr != nil {
		return req, jerr
	}
	return req, nil
}

// parseParams reads the fields of params that the server uses, checking
// their types; the methods' required fields are checked too.
func (req *request) parseParams() *jsonrpc.Error {
	p := bytes.TrimSpace(req.params)
	var fields map[string]json.RawMessage
	if len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if err := json.Unmarshal(p, &fields); err != nil {
			return invalidParams("params must be an object: %v", err)
		}
	}
	if raw, ok := fields["_meta"]; ok && !isNull(raw) {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(raw, &meta); err != nil {
			return invalidParams("_meta must be an object: %v", err)
		}
		if c, ok := meta["io.modelcontextprotocol/clientCapabilities"]; ok && !isNull(c) {
			req.caps = new(clientCaps)
			if err := json.Unmarshal(c, req.caps); err != nil {
				return invalidParams("_meta clientCapabilities: %v", err)
			}
		}
	}
	str := func(key string, dst *string, required bool) *jsonrpc.Error {
		raw, ok := fields[key]
		if !ok || isNull(raw) {
			if required {
				return invalidParams("params.%s is required", key)
			}
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return invalidParams("params.%s must be a string", key)
		}
		return nil
	}
	var responses bool
	switch req.method {
	case "tools/call":
		if err := str("name", &req.name, true); err != nil {
			return err
		}
		if a, ok := fields["arguments"]; ok && !isNull(a) {
			req.arguments = a
		}
		responses = true
		if err := str("requestState", &req.requestState, false); err != nil {
			return err
		}
	case "prompts/get":
		if err := str("name", &req.name, false); err != nil {
			return err
		}
	case "resources/read":
		if err := str("uri", &req.uri, false); err != nil {
			return err
		}
	case "tasks/get", "tasks/cancel":
		if err := str("taskId", &req.taskID, true); err != nil {
			return err
		}
	case "tasks/update":
		if err := str("taskId", &req.taskID, true); err != nil {
			return err
		}
		if raw, ok := fields["inputResponses"]; !ok || isNull(raw) {
			return invalidParams("params.inputResponses is required")
		}
		responses = true
	}
	if raw, ok := fields["inputResponses"]; responses && ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &req.inputResponses); err != nil {
			return invalidParams("params.inputResponses must be an object: %v", err)
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// unmarshalParams decodes params (absent or null: nothing) into v.
func unmarshalParams(params json.RawMessage, v any) *jsonrpc.Error {
	if len(params) == 0 || isNull(params) {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("%v", err)
	}
	return nil
}

// nameHeader is the body value an Mcp-Name header must match for the
// request's method (SEP-2243, SEP-2663), and whether the method has one.
func (req *request) nameHeader() (string, bool) {
	switch req.method {
	case "tools/call", "prompts/get":
		return req.name, true
	case "resources/read":
		return req.uri, true
	case "tasks/get", "tasks/update", "tasks/cancel":
		return req.taskID, true
	}
	return "", false
}

// response encodes the answer to req: a result, or an error when err is
// non-nil.
func response(id jsonrpc.ID, result any, err error) ([]byte, error) {
	var resp *jsonrpc.Response
	if err != nil {
		resp = &jsonrpc.Response{ID: id, Error: err}
	} else {
		raw, merr := json.Marshal(result)
		if merr != nil {
			return nil, fmt.Errorf("encoding the result: %w", merr)
		}
		resp = &jsonrpc.Response{ID: id, Result: raw}
	}
	data, eerr := jsonrpc.EncodeMessage(resp)
	if eerr != nil {
		return nil, fmt.Errorf("encoding the response: %w", eerr)
	}
	return data, nil
}

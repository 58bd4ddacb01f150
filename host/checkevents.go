package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/intercept"
)

// The checks (hooks and interceptors) of the operations other than
// tools/call: prompts/get and resources/read, request and response
// (GetPromptResult, ReadResourceResult), and the list methods, response
// only (Serving.CheckList: checklists.go). The checks are the engine's
// (intercept.Plan); an operation no check matches costs one nil test.
//
// Refusals are *intercept.RefusedError with a JSON-RPC code: one refused
// at its request gets CodeRefusedRequest (-32602, invalid params), one
// refused at its response CodeRefusedResponse (-32603).

// The JSON-RPC error codes of operations other than tools/call that a
// check refused (a tools/call refused by a hook or an interceptor is a tool
// error result, unless the check names a code: validate_input's -32602).
const (
	CodeRefusedRequest  = jsonrpc.CodeInvalidParams // -32602
	CodeRefusedResponse = jsonrpc.CodeInternalError // -32603
)

// eventCall is the intercept.Call of an operation of event on the item
// name of server (original: its name on the server) for ctx's caller, with
// its call info as a tools/call's (fillCallInfo).
func (h *Host) eventCall(ctx context.Context, event, server, name, original string) *intercept.Call {
	c := &intercept.Call{Event: event, Server: server, Name: name, Original: original}
	h.fillCallInfo(ctx, c)
	return c
}

// refusedWith returns err, and for a *intercept.RefusedError without a
// code a copy with code.
func refusedWith(err error, code int64) error {
	var re *intercept.RefusedError
	if errors.As(err, &re) && re.Code == 0 {
		c := *re
		c.Code = code
		return &c
	}
	return err
}

// checkEventRequest runs plan's request checks on c with the request payload
// and returns the payload they leave.
func (h *Host) checkEventRequest(ctx context.Context, plan *intercept.Plan, c *intercept.Call, payload any) (json.RawMessage, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("%s %s: encoding the request for its checks: %w", c.Event, c.Name, err)
	}
	c.Args, c.Payload = b, b
	out, recs, err := plan.Request(ctx, c)
	h.noteChecks(ctx, recs)
	if err != nil {
		return nil, refusedWith(err, CodeRefusedRequest)
	}
	c.Args = out
	return out, nil
}

// checkEventResponse runs plan's response checks on c with res, and, if they
// changed it, decodes the result they leave into a new T.
func checkEventResponse[T any](ctx context.Context, h *Host, plan *intercept.Plan, c *intercept.Call, res *T) (*T, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("%s %s: encoding the result for its checks: %w", c.Event, c.Name, err)
	}
	c.Payload = b
	out, changed, recs, err := plan.Response(ctx, c)
	h.noteChecks(ctx, recs)
	if err != nil {
		return nil, refusedWith(err, CodeRefusedResponse)
	}
	if !changed {
		return res, nil
	}
	var next T
	if err := json.Unmarshal(out, &next); err != nil {
		return nil, badMutation(c, "a result that is not one")
	}
	return &next, nil
}

// badMutation is the error of an operation whose checks left what (its
// payload is not the operation's): the operation fails (-32603), it is not
// sent on. (No check's text is quoted: the payload may hold secrets.)
func badMutation(c *intercept.Call, what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the checks of %s %s left %s", c.Event, c.Name, what)}
}

// promptPayload is the payload of a prompts/get request's checks: its
// params as sent to the server.
type promptPayload struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// checkPromptRequest runs plan's request checks of prompts/get on up, the
// request to the server, and applies the arguments they leave. The checks
// may not change which prompt is got.
func (h *Host) checkPromptRequest(ctx context.Context, plan *intercept.Plan, c *intercept.Call, up *mcp.GetPromptParams) error {
	out, err := h.checkEventRequest(ctx, plan, c, promptPayload{Name: up.Name, Arguments: up.Arguments})
	if err != nil {
		return err
	}
	var p promptPayload
	if err := json.Unmarshal(out, &p); err != nil {
		return badMutation(c, "a request that is not one")
	}
	if p.Name != up.Name {
		return badMutation(c, "another prompt's name, which they may not")
	}
	up.Arguments = p.Arguments
	return nil
}

// resourcePayload is the payload of a resources/read request's checks.
type resourcePayload struct {
	URI string `json:"uri"`
}

// checkReadRequest runs plan's request checks of resources/read on up, the
// request to the server, and applies the URI they leave (of the same
// server).
func (h *Host) checkReadRequest(ctx context.Context, plan *intercept.Plan, c *intercept.Call, up *mcp.ReadResourceParams) error {
	out, err := h.checkEventRequest(ctx, plan, c, resourcePayload{URI: up.URI})
	if err != nil {
		return err
	}
	var p resourcePayload
	if err := json.Unmarshal(out, &p); err != nil || p.URI == "" {
		return badMutation(c, "a request without a uri")
	}
	up.URI = p.URI
	return nil
}

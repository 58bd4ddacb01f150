package llmtools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Errors of Export.ToolCall.
var (
	// ErrUnknownTool: the model named a tool the export does not hold.
	ErrUnknownTool = errors.New("no such tool in the export")
	// ErrBadArguments: the model's arguments are not a JSON object (or, for
	// a wrapped schema, lack WrapProperty).
	ErrBadArguments = errors.New("tool arguments are not what the schema says")
)

// ToolCall is a tool call a model made, mapped back to the registry: what
// Host.CallTool takes.
type ToolCall struct {
	// Name is the tool's registry name.
	Name string
	// Arguments are the arguments for the server: the model's, or, for a
	// tool whose schema was wrapped, the value of their WrapProperty.
	Arguments json.RawMessage
}

// ToolCall maps a tool call a model made (the name it was given, the
// arguments it wrote) to the registry name and the server's arguments.
// Empty arguments (some models send "" for a tool without parameters) are
// {}. The error is an ErrUnknownTool or ErrBadArguments, with context.
func (e *Export) ToolCall(vendorName string, args json.RawMessage) (*ToolCall, error) {
	name, ok := e.Names.Canonical(vendorName)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTool, vendorName)
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("%w: %s (%q) must be called with a JSON object", ErrBadArguments, name, vendorName)
	}
	if !e.wrapped[name] {
		return &ToolCall{Name: name, Arguments: args}, nil
	}
	inner, ok := obj[WrapProperty]
	if !ok {
		return nil, fmt.Errorf("%w: %s (%q) takes its input as the property %q", ErrBadArguments, name, vendorName, WrapProperty)
	}
	return &ToolCall{Name: name, Arguments: inner}, nil
}

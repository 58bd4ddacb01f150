package llmtools

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcphost/mcphost/host/registry"
)

func TestToolCall(t *testing.T) {
	t.Parallel()
	tools := []*registry.Tool{
		{Name: "mcp__s__object", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
		{Name: "mcp__s__text", InputSchema: map[string]any{"type": "string"}},
		{Name: "mcp__s__choice", InputSchema: map[string]any{"oneOf": []any{map[string]any{"type": "object"}, map[string]any{"type": "array"}}}},
		{Name: "mcp__s__none"},
	}
	e, err := Convert(tools, OpenAI)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		tool     string
		args     string
		wantName string
		wantArgs string
		wantErr  error
	}{
		{"an object schema passes the arguments on", "mcp__s__object", `{"q":"x"}`, "mcp__s__object", `{"q":"x"}`, nil},
		{"a wrapped string schema is unwrapped", "mcp__s__text", `{"input":"hello"}`, "mcp__s__text", `"hello"`, nil},
		{"a wrapped oneOf is unwrapped", "mcp__s__choice", ` {"input": {"id": 7}} `, "mcp__s__choice", `{"id": 7}`, nil},
		{"empty arguments are an empty object", "mcp__s__none", "", "mcp__s__none", `{}`, nil},
		{"blank arguments are an empty object", "mcp__s__none", " \n", "mcp__s__none", `{}`, nil},
		{"arguments that are not an object", "mcp__s__object", `["q"]`, "", "", ErrBadArguments},
		{"arguments that are null", "mcp__s__object", `null`, "", "", ErrBadArguments},
		{"arguments that are not JSON", "mcp__s__object", `{"q":`, "", "", ErrBadArguments},
		{"a wrapped schema without its property", "mcp__s__text", `{"text":"hello"}`, "", "", ErrBadArguments},
		{"an unknown tool", "mcp__s__nope", `{}`, "", "", ErrUnknownTool},
		{"a registry name that is not the vendor's", "mcp__s__object ", `{}`, "", "", ErrUnknownTool},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			call, err := e.ToolCall(tc.tool, json.RawMessage(tc.args))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if call.Name != tc.wantName || string(call.Arguments) != tc.wantArgs {
				t.Errorf("ToolCall = %s %s, want %s %s", call.Name, call.Arguments, tc.wantName, tc.wantArgs)
			}
		})
	}
}

// TestToolCallRenamed: a call to a renamed tool reaches the registry name.
func TestToolCallRenamed(t *testing.T) {
	t.Parallel()
	e, err := Convert([]*registry.Tool{{Name: "9.lives", InputSchema: map[string]any{"type": "integer"}}}, Gemini)
	if err != nil {
		t.Fatal(err)
	}
	vendor, ok := e.Names.Vendor("9.lives")
	if !ok || vendor == "9.lives" {
		t.Fatalf("Vendor = %q, %v: want a new name", vendor, ok)
	}
	call, err := e.ToolCall(vendor, json.RawMessage(`{"input":9}`))
	if err != nil {
		t.Fatal(err)
	}
	if call.Name != "9.lives" || string(call.Arguments) != "9" {
		t.Errorf("ToolCall = %s %s", call.Name, call.Arguments)
	}
	if _, err := e.ToolCall("9.lives", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("the registry name is accepted as the vendor's: %v", err)
	}
}

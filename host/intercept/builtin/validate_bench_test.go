package builtin

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/registry"
)

// BenchmarkValidateInput is validate_input's cost on the demo echo tool's
// call, through the engine as the gate runs it (goal: ≤ 10 µs).
func BenchmarkValidateInput(b *testing.B) {
	e, err := New(&config.Interceptor{Name: "v", Builtin: ValidateInput})
	if err != nil {
		b.Fatal(err)
	}
	tool := &registry.Tool{Name: "mcp__demo__echo", Server: "demo", Original: "echo", Fingerprint: "echo",
		InputSchema: schemaOf(b, `{"type":"object","properties":{"message":{"type":"string"},"n":{"type":"integer"}},"required":["message"],"additionalProperties":false}`)}
	p := intercept.NewChain([]*intercept.Entry{e}).ForTool(tool.Name, tool.Server, nil)
	c := &intercept.Call{Event: intercept.EventToolsCall, Server: "demo", Name: tool.Name, Tool: tool,
		Payload: json.RawMessage(`{"message":"hello, world","n":3}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.Request(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
}

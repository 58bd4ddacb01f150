package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// TestAskArguments: Options.Ask is told the call's arguments (so that the
// prompt can show them), for arguments given as a map and as JSON.
func TestAskArguments(t *testing.T) {
	t.Parallel()
	var got json.RawMessage
	cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "ask"}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), Ask: func(ctx context.Context, _ *registry.Tool, _ permissions.Decision) (bool, error) {
		got = host.AskArguments(ctx)
		return true, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for _, args := range []any{map[string]any{"message": "hello"}, json.RawMessage(`{"message":"hello"}`)} {
		got = nil
		if _, err := h.CallTool(context.Background(), "mcp__one__echo", args, nil); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(got, &m); err != nil || m["message"] != "hello" {
			t.Errorf("AskArguments = %s (%v), want the call's arguments", got, err)
		}
	}
	if b := host.AskArguments(context.Background()); b != nil {
		t.Errorf("AskArguments outside Ask = %s", b)
	}
}

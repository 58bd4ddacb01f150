package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestToolsFormatLeavesOutDenied: tools --format offers a model only tools
// it may call: those the rules deny are left out, each with a warning;
// those the rules ask about stay.
func TestToolsFormatLeavesOutDenied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.hcl")
	os.WriteFile(cfg, []byte(`server "demo" {
  command = "mcphost-demo"
}
permissions {
  allow = ["mcp__demo"]
  deny  = ["mcp__demo__crash"]
  ask   = ["mcp__demo__add_tool"]
}
`), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, stdout, stderr := runMcphost(ctx, dir, "--config", cfg, "tools", "--format", "anthropic")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(stdout), &tools); err != nil {
		t.Fatal(err, stdout)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	if names["mcp__demo__crash"] || !names["mcp__demo__echo"] || !names["mcp__demo__add_tool"] {
		t.Errorf("exported %v: want echo and add_tool (ask), not crash (deny)", names)
	}
	if !strings.Contains(stderr, "warning: demo: tool mcp__demo__crash is left out: deny by rule") {
		t.Errorf("no warning for the denied tool:\n%s", stderr)
	}
}

package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCallTellsHooksTheCLI: a hook of a tool called by `mcphost call` is
// told the call came by the CLI (mcphost.front "cli"), with the process's
// session id. The hook is a real sh process that keeps its input.
func TestCallTellsHooksTheCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "input.json")
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, []byte(`server "demo" {
  command = "mcphost-demo"
}
permissions {
  allow = ["mcp__demo"]
}
hook "PreToolUse" {
  matcher = "mcp__demo__echo"
  shell   = "sh"
  command = "cat > \"$IN\""
  env     = { IN = "`+in+`" }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, stdout, stderr := runMcphost(ctx, dir, "--config", cfg, "call", "mcp__demo__echo", `{"message":"hi"}`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	var input struct {
		SessionID string `json:"session_id"`
		Mcphost   struct {
			Front string `json:"front"`
		} `json:"mcphost"`
	}
	if err := json.Unmarshal(b, &input); err != nil {
		t.Fatalf("hook input %s: %v", b, err)
	}
	if input.Mcphost.Front != "cli" || input.SessionID == "" {
		t.Errorf("hook input %s: want front \"cli\" and a session id", b)
	}
}

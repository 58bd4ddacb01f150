package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// TestAskOnTerminalShowsArguments: the prompt shows the call's arguments,
// secrets masked.
func TestAskOnTerminalShowsArguments(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	a := &app{stdin: strings.NewReader("n\n"), stderr: &stderr}
	tool := &registry.Tool{Name: "mcp__fs__write", DisplayName: "Write"}
	d := permissions.Decision{Behavior: permissions.Ask}
	if ok, err := a.askCall(context.Background(), tool, d, json.RawMessage(`{"path":"/etc/hosts","token":"s3cr3t"}`)); ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	out := stderr.String()
	for _, w := range []string{"arguments:", `"path": "/etc/hosts"`, `"token": "[REDACTED]"`, "Allow?"} {
		if !strings.Contains(out, w) {
			t.Errorf("prompt lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("prompt shows a secret:\n%s", out)
	}
}

package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// TestAskOnTerminal feeds answers to the terminal prompt (the pty itself is
// not simulated: the prompt reads whatever stdin holds).
func TestAskOnTerminal(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	a := &app{stdin: strings.NewReader("n\nyes\na\n"), stderr: &stderr}
	tool := &registry.Tool{Name: "mcp__gh__push", DisplayName: "Push"}
	d := permissions.Decision{Behavior: permissions.Ask, Rule: &permissions.Rule{Behavior: permissions.Ask, Pattern: "mcp__gh__push", Source: "user scope, u.hcl:3"}}
	ctx := context.Background()
	for i, want := range []bool{false, true, true, true} {
		ok, err := a.askOnTerminal(ctx, tool, d)
		if err != nil || ok != want {
			t.Fatalf("answer %d: %v %v, want %v", i, ok, err, want)
		}
	}
	// The fourth call was answered by "always": only three prompts were shown.
	if n := strings.Count(stderr.String(), "Allow?"); n != 3 {
		t.Errorf("%d prompts, want 3:\n%s", n, stderr.String())
	}
	if !strings.Contains(stderr.String(), `ask by rule "mcp__gh__push" (user scope, u.hcl:3)`) {
		t.Errorf("the prompt does not say why:\n%s", stderr.String())
	}
	// Another tool is asked about again.
	a.stdin, a.stdinReader = strings.NewReader(""), nil
	if ok, _ := a.askOnTerminal(ctx, &registry.Tool{Name: "mcp__gh__other"}, d); ok {
		t.Error("always leaked to another tool")
	}
}

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

// TestAskPromptSanitizesServerTitle: the tool's title (and name) come from
// the server; escape sequences and format characters in them are shown
// escaped, so they cannot clear the screen or fake the arguments block.
func TestAskPromptSanitizesServerTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, toolName, title string
		want                  []string
	}{
		{name: "clear screen and fake arguments", toolName: "mcp__fs__write",
			title: "Write\x1b[2J\x1b[H  arguments:\n    {}\nAllow?", want: []string{`Write\u001b[2J\u001b[H`, `\u000a`}},
		{name: "OSC title", toolName: "mcp__fs__write", title: "\x1b]0;pwned\x07Read", want: []string{`\u001b]0;pwned\u0007Read`}},
		{name: "C1 CSI", toolName: "mcp__fs__write", title: "a\u009b2Jb", want: []string{`a\u009b2Jb`}},
		{name: "bidi override", toolName: "mcp__fs__write", title: "safe\u202Eetirw", want: []string{`safe\u202eetirw`}},
		{name: "in the name too", toolName: "mcp__fs__w\x1b[8m", title: "W", want: []string{`mcp__fs__w\u001b[8m`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			a := &app{stdin: strings.NewReader("n\n"), stderr: &stderr}
			tool := &registry.Tool{Name: tc.toolName, DisplayName: tc.title}
			if _, err := a.askCall(context.Background(), tool, permissions.Decision{Behavior: permissions.Ask}, json.RawMessage(`{"path":"/etc/hosts"}`)); err != nil {
				t.Fatal(err)
			}
			out := stderr.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("prompt lacks %q:\n%q", w, out)
				}
			}
			if strings.ContainsAny(out, "\x1b\x07\u009b\u202e") {
				t.Errorf("prompt carries a control or format character:\n%q", out)
			}
			if n := strings.Count(out, "\n  arguments:"); n != 1 || strings.Count(out, "\n") != 6 {
				t.Errorf("%d arguments blocks, want 1 (the title cannot fake one):\n%s", n, out)
			}
		})
	}
}

package gateway_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
)

// TestToolSearchCallThroughHooks: tool search's call_tool goes through the
// one gate, hooks included: a Claude Code PreToolUse hook script (python3)
// refuses the call it denies, with its reason, on both fronts; a call it
// leaves alone runs.
func TestToolSearchCallThroughHooks(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to run the Claude Code hook script of this test (make test-deps)")
	}
	script, err := filepath.Abs(filepath.Join("..", "testdata", "hooks", "pre.py"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hk := &config.Hook{Event: "PreToolUse", Matcher: "mcp__a__echo", Command: "python3 " + script, Timeout: 30 * time.Second,
		Dir: t.TempDir(), Approved: true, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all", Hooks: []*config.Hook{hk}},
		&host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{ToolSearch: true})
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	sg := &searchGateway{g: g, h: h}
	for _, front := range []string{"stdio", "http"} {
		t.Run(front, func(t *testing.T) {
			var cs *mcp.ClientSession
			if front == "stdio" {
				cs = sg.stdio(t, "2025-11-25", nil)
			} else {
				cs = sg.http(t, "2025-11-25", nil)
			}
			before := calls(t, cs, "a", "echo")
			res := callFound(t, cs, "mcp__a__echo", map[string]any{"message": "forbidden"})
			if text := host.TextOf(res.Content); !res.IsError || !strings.Contains(text, "forbidden words are not allowed") {
				t.Errorf("a call the hook denies: %q (isError %v)", text, res.IsError)
			}
			if n := calls(t, cs, "a", "echo") - before; n != 0 {
				t.Errorf("echo was called %v times", n)
			}
			res = callFound(t, cs, "mcp__a__echo", map[string]any{"message": "rewrite"})
			if text := host.TextOf(res.Content); res.IsError || text != "rewritten by the hook" {
				t.Errorf("a call the hook rewrites: %q (isError %v)", text, res.IsError)
			}
		})
	}
}

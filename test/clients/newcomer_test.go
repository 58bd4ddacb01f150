//go:build unix

package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/mcpregistry/registrytest"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// TestNewcomerRegistryServerThroughClaudeCode is the first hour of issue
// 37 end to end, with a private home: a server found in an MCP Registry
// (a local one in the API's shapes: its only entry is a remote, the demo
// server on 127.0.0.1) is installed into the user scope with `server add
// --from-registry`, refused until approved, approved, and the gateway is
// connected to Claude Code with `client connect claude-code --yes`
// (no --config: the user scope is found from anywhere). Claude Code's own
// `mcp list` starts the gateway and shows it connected; the command
// Claude Code was given then serves the registry server's echo tool
// under the name Claude Code sees (naming "server": demo__echo), and a call
// of it returns the demo server's answer. (Claude Code itself calls tools
// only with a model behind it, which needs an account: the last step runs
// Claude Code's configured command with the go-sdk client instead.)
func TestNewcomerRegistryServerThroughClaudeCode(t *testing.T) {
	start := time.Now()
	s := newSandbox(t)
	port := testbin.FreePort(t)
	demo := exec.Command(filepath.Join(binDir, "mcphost-demo"), "-http", fmt.Sprintf("127.0.0.1:%d", port), "-name", "demo")
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { demo.Process.Kill(); demo.Wait() })
	testbin.WaitListening(t, port)

	entry := map[string]any{
		"server": map[string]any{
			"name": "io.example.test/demo", "description": "The demo server", "version": "1.0.0",
			"remotes": []any{map[string]any{"type": "streamable-http", "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}},
		},
		"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{
			"status": "active", "publishedAt": "2026-11-01T10:00:00Z", "updatedAt": "2026-11-01T10:00:00Z", "isLatest": true}},
	}
	doc, _ := json.Marshal(map[string]any{"servers": []any{entry}, "metadata": map[string]any{"count": 1}})
	list := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(list, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := registrytest.Load(t, list)
	env := []string{"MCPHOST_REGISTRY_URL=" + reg.URL}
	mcphost := filepath.Join(binDir, "mcphost")

	out := s.runEnv(t, time.Minute, env, mcphost, "registry", "search", "demo")
	if !strings.Contains(out, "io.example.test/demo") {
		t.Fatalf("registry search:\n%s", out)
	}
	s.runEnv(t, time.Minute, env, mcphost, "server", "add", "-s", "user", "demo", "--from-registry", "io.example.test/demo")
	out = s.runEnv(t, time.Minute, env, mcphost, "servers")
	if !regexp.MustCompile(`(?i)not approved`).MatchString(out) {
		t.Fatalf("a registry server before approval:\n%s", out)
	}
	s.run(t, time.Minute, mcphost, "config", "approve", "demo", "--yes")
	// Every tool asks first; the README's one line allows a server's tools.
	user := filepath.Join(s.home, ".config", "mcphost", "config.hcl")
	f, err := os.OpenFile(user, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `permissions { allow = ["mcp__demo"] }`)
	f.Close()
	out = s.run(t, time.Minute, mcphost, "client", "connect", "claude-code", "--yes")
	if !strings.Contains(out, "Connected ") {
		t.Fatalf("client connect:\n%s", out)
	}
	out = s.run(t, 3*time.Minute, filepath.Join(npmBin, "claude"), "mcp", "list")
	if !regexp.MustCompile(`(?m)^mcphost: \S+/mcphost serve --naming server - ✔ Connected`).MatchString(out) {
		t.Fatalf("claude mcp list does not show the gateway connected:\n%s", out)
	}

	// The command and arguments Claude Code was given, as it stored them.
	var raw []byte
	raw, err = os.ReadFile(filepath.Join(s.home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	gw, ok := file.MCPServers["mcphost"]
	if !ok {
		t.Fatalf("no mcphost entry in .claude.json:\n%s", raw)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.Command(gw.Command, gw.Args...)
	cmd.Dir, cmd.Env = s.work, s.env()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code-stand-in", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"message": "first call"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), "first call") {
		t.Fatalf("demo__echo through the gateway Claude Code runs: %+v", res)
	}
	t.Logf("time from an empty home to the first call (binaries built): %v", time.Since(start).Round(10*time.Millisecond))
}

//go:build unix

// Package hooks runs hook scripts written for Claude Code, unchanged,
// through the `mcphost serve` binary on both fronts: stdio (a 2026-07-28
// client) and streamable HTTP (a 2025-11-25 client), in front of the demo
// server. The scripts are python3 programs (host/testdata/hooks) that
// read Claude Code's hook input on stdin and answer with its output.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var binDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := exec.LookPath("python3"); err != nil {
		fmt.Fprintln(os.Stderr, "the hooks tests run python3 hook scripts: install python3 (make test-deps)")
		return 1
	}
	dir, err := os.MkdirTemp("", "mcphost-hooks")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if err := testbin.Build(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// config writes the gateway's configuration: the demo server, every call
// allowed by the rules, and the Claude Code hooks.
func config(t *testing.T, log string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	scripts, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "host", "testdata", "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
server "demo" {
  command = %[1]q
  args    = ["-passthrough"]
}
permissions {
  allow = ["mcp__demo"]
}
hook "PreToolUse" {
  matcher = "mcp__demo__echo"
  command = "python3 %[2]s/pre.py"
  env     = { HOOK_LOG = %[3]q }
}
hook "PostToolUse" {
  matcher = "mcp__demo__.*"
  command = "python3 %[2]s/post.py"
}
hook "Elicitation" {
  matcher = "demo"
  command = "python3 %[2]s/elicit.py"
}
interceptor "args" {
  builtin = "validate_input"
}
`, filepath.Join(binDir, "mcphost-demo"), scripts, log)
	path := filepath.Join(t.TempDir(), "config.hcl")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// gateway returns the environment of a gateway process: a home of its own
// and no managed configuration.
func gateway(t *testing.T, cfg string, args ...string) *exec.Cmd {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "mcphost"), append([]string{"--config", cfg}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "MCPHOST_MANAGED_CONFIG="+filepath.Join(home, "none.hcl"))
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

type front struct {
	name    string
	version string
	// ask is the demo tool that asks the client a question in this era.
	ask     string
	connect func(t *testing.T, cfg string) *mcp.ClientSession
}

var fronts = []front{
	{name: "stdio", version: "2026-07-28", ask: "ask", connect: func(t *testing.T, cfg string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "hooks-test"}, nil).Connect(context.Background(),
			&mcp.CommandTransport{Command: gateway(t, cfg, "serve")}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}},
	{name: "http", version: "2025-11-25", ask: "ask_old", connect: func(t *testing.T, cfg string) *mcp.ClientSession {
		port := testbin.FreePort(t)
		cmd := gateway(t, cfg, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		})
		testbin.WaitListening(t, port)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "hooks-test"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}},
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestClaudeCodeHooksThroughServe: PreToolUse deny (JSON), block (exit 2)
// and updatedInput; PostToolUse block and updatedMCPToolOutput; an
// Elicitation hook answering the server's question (the client, which
// cannot be asked, never is); validate_input refusing bad arguments with
// -32602 before the server sees them.
func TestClaudeCodeHooksThroughServe(t *testing.T) {
	for _, f := range fronts {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "hooks.log")
			cs := f.connect(t, config(t, log))
			ctx := context.Background()
			call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
				return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			}
			for _, tc := range []struct {
				name    string
				tool    string
				args    map[string]any
				isError bool
				want    string
			}{
				{"PreToolUse deny", "mcp__demo__echo", map[string]any{"message": "forbidden fruit"}, true, "forbidden words are not allowed"},
				{"PreToolUse exit 2", "mcp__demo__echo", map[string]any{"message": "rm -rf /"}, true, "Blocked: rm -rf"},
				{"PreToolUse updatedInput", "mcp__demo__echo", map[string]any{"message": "rewrite this"}, false, "rewritten by the hook"},
				{"PostToolUse block", "mcp__demo__echo", map[string]any{"message": "block me"}, true, "the output was blocked by a hook"},
				{"PostToolUse updatedMCPToolOutput", "mcp__demo__echo", map[string]any{"message": "please shout"}, false, "PLEASE SHOUT"},
				{"unmatched", "mcp__demo__echo", map[string]any{"message": "hello"}, false, "hello"},
				{"Elicitation answered by the hook", "mcp__demo__" + f.ask, map[string]any{"question": "Who?"}, false, "answer: from the hook (demo)"},
			} {
				res, err := call(tc.tool, tc.args)
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if res.IsError != tc.isError || !strings.Contains(text(res), tc.want) {
					t.Errorf("%s: isError %v, %q; want isError %v and %q", tc.name, res.IsError, text(res), tc.isError, tc.want)
				}
			}
			// validate_input: the arguments do not match the tool's
			// inputSchema: a JSON-RPC error naming the path.
			_, err := call("mcp__demo__add", map[string]any{"a": "one", "b": 2})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != -32602 || !strings.Contains(rpc.Message, "/a") {
				t.Errorf("add with a string: %v; want a -32602 error naming /a", err)
			}
			res, err := call("mcp__demo__stats", nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text(res), `"add"`) {
				t.Errorf("the server saw the refused call: stats %s", text(res))
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(b), "PreToolUse mcp__demo__echo"); got != 6 {
				t.Errorf("the PreToolUse hook ran %d times for 6 echo calls:\n%s", got, b)
			}
		})
	}
}

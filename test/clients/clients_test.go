//go:build unix

// Package clients tests `mcphost client connect` against the real MCP
// clients it writes for: the Claude Code and Gemini CLIs (npm packages
// pinned in test/interop/package.json, installed by `make test-deps`) read
// the file mcphost wrote, start the gateway and list it as connected.
// Neither needs an API key for `mcp list`.
package clients

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var (
	binDir string // mcphost and mcphost-demo, built for this run
	npmBin string // test/interop/node_modules/.bin
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	npmBin = filepath.Join(filepath.Dir(file), "..", "interop", "node_modules", ".bin")
	for _, name := range []string{"claude", "gemini"} {
		if _, err := os.Stat(filepath.Join(npmBin, name)); err != nil {
			fmt.Fprintf(os.Stderr, "client tests need %s: run `make test-deps` (npm ci in test/interop)\n", filepath.Join(npmBin, name))
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "mcphost-clients")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	for _, pkg := range []string{"./cmd/mcphost", "./cmd/mcphost-demo"} {
		if _, err := testbin.BuildOne(binDir, pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// sandbox is a private home and working directory: nothing the commands
// run here read or write is the user's.
type sandbox struct {
	home, work string
}

func newSandbox(t *testing.T) sandbox {
	t.Helper()
	s := sandbox{home: t.TempDir(), work: t.TempDir()}
	return s
}

// env is a minimal environment: PATH (node), the private home, and what
// keeps the clients quiet and non-interactive.
func (s sandbox) env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.home,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(s.home, ".local", "state"),
		"TMPDIR=" + os.TempDir(),
		// Claude Code: no update checks, telemetry or error reports.
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// Gemini CLI: a folder that is not trusted gets no MCP servers
		// (not even the user's); trusting it is this variable or an
		// interactive prompt.
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"NO_COLOR=1",
	}, extra...)
}

// run runs a command in the sandbox and returns its combined output.
func (s sandbox) run(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	return s.runEnv(t, timeout, nil, name, args...)
}

// runEnv is run with more environment variables.
func (s sandbox) runEnv(t *testing.T, timeout time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.work
	cmd.Env = s.env(env...)
	cmd.Stdin = nil
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestClientsListConnectedGateway connects the gateway (stdio, a config
// with the demo server) into Claude Code's and Gemini CLI's user files
// with `mcphost client connect --yes`; each client's own `mcp list` starts
// it and shows it connected. Disconnect then removes it (the clients
// may have rewritten their files meanwhile: then only the entry goes).
func TestClientsListConnectedGateway(t *testing.T) {
	tests := []struct {
		client    string
		list      []string
		connected *regexp.Regexp
		file      string
	}{
		{"claude-code", []string{filepath.Join(npmBin, "claude"), "mcp", "list"},
			regexp.MustCompile(`(?m)^mcphost: \S+/mcphost serve --naming server --config \S+/cfg\.hcl - ✔ Connected`), ".claude.json"},
		{"gemini", []string{filepath.Join(npmBin, "gemini"), "mcp", "list"},
			regexp.MustCompile(`(?m)^✓ mcphost: \S+/mcphost serve --naming server --config \S+/cfg\.hcl \(stdio\) - Connected`), filepath.Join(".gemini", "settings.json")},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			cfg := filepath.Join(s.work, "cfg.hcl")
			src := fmt.Sprintf("server \"demo\" {\n  command = %q\n}\n", filepath.Join(binDir, "mcphost-demo"))
			if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			mcphost := filepath.Join(binDir, "mcphost")
			out := s.run(t, time.Minute, mcphost, "--config", cfg, "client", "connect", tt.client, "--yes")
			if !strings.Contains(out, "Connected ") {
				t.Fatalf("client connect:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(s.home, tt.file)); err != nil {
				t.Fatal(err)
			}

			out = s.run(t, 3*time.Minute, tt.list[0], tt.list[1:]...)
			if !tt.connected.MatchString(out) {
				t.Fatalf("%s does not list the gateway as connected:\n%s", strings.Join(tt.list[1:], " "), out)
			}

			out = s.run(t, time.Minute, mcphost, "client", "disconnect", tt.client, "--yes")
			if !strings.Contains(out, "Disconnected ") {
				t.Fatalf("client disconnect:\n%s", out)
			}
			out = s.run(t, time.Minute, mcphost, "client", "list")
			if !regexp.MustCompile(`(?m)^` + tt.client + ` +user +\S+ +not connected( \(no file\))?$`).MatchString(out) {
				t.Errorf("client list after disconnect:\n%s", out)
			}
		})
	}
}

// TestClientsReachGatewayOverHTTP connects the clients to a running
// `mcphost serve --http` with `client connect --http`: each expands the
// token's variable (MCPHOST_SERVE_TOKEN, never written in its file) into
// the Authorization header, and lists the gateway as connected; with
// another value in the variable, both are refused (Claude Code says 401),
// so the header really comes from the variable.
func TestClientsReachGatewayOverHTTP(t *testing.T) {
	const token = "tok-5e0c1b9a7d3f4e62"
	port := testbin.FreePort(t)
	serve, stderr := testbin.ServeCmd(t, binDir, "", "warn", nil, "--http", fmt.Sprintf("127.0.0.1:%d", port))
	serve.Env = append(serve.Env, "MCPHOST_SERVE_TOKEN="+token)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Kill()
		serve.Wait()
		if t.Failed() {
			t.Logf("serve's stderr:\n%s", stderr.String())
		}
	})
	testbin.WaitListening(t, port)
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)

	tests := []struct {
		client    string
		list      []string
		connected *regexp.Regexp
		file      string
	}{
		{"claude-code", []string{filepath.Join(npmBin, "claude"), "mcp", "list"},
			regexp.MustCompile(`(?m)^mcphost: ` + regexp.QuoteMeta(url) + ` \(HTTP\) - ✔ Connected`), ".claude.json"},
		{"gemini", []string{filepath.Join(npmBin, "gemini"), "mcp", "list"},
			regexp.MustCompile(`(?m)^✓ mcphost: ` + regexp.QuoteMeta(url) + ` \(http\) - Connected`), filepath.Join(".gemini", "settings.json")},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			withToken := []string{"MCPHOST_SERVE_TOKEN=" + token}
			s.runEnv(t, time.Minute, withToken, filepath.Join(binDir, "mcphost"), "client", "connect", tt.client, "--http", url, "--yes")
			data, err := os.ReadFile(filepath.Join(s.home, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), token) {
				t.Fatalf("the token's value is in the client's file:\n%s", data)
			}
			out := s.runEnv(t, 3*time.Minute, withToken, tt.list[0], tt.list[1:]...)
			if !tt.connected.MatchString(out) {
				t.Fatalf("%s does not list the gateway as connected:\n%s", strings.Join(tt.list[1:], " "), out)
			}
			// With another value in the variable the gateway refuses the
			// client: the header really comes from the variable (Gemini
			// CLI does not print the status, only that it is not
			// connected).
			out = s.runEnv(t, 3*time.Minute, []string{"MCPHOST_SERVE_TOKEN=wrong"}, tt.list[0], tt.list[1:]...)
			if tt.connected.MatchString(out) || (tt.client == "claude-code" && !strings.Contains(out, "401")) {
				t.Fatalf("with another token in the variable, %s:\n%s", strings.Join(tt.list[1:], " "), out)
			}
		})
	}
}

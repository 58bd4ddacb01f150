//go:build !windows

// (The slow server is a shell loop: not on Windows.)

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// TestServeAnswersBeforeServersConnect: `mcphost serve` (the real CLI, a
// child process), on stdio and on --http, answers a client's initialize
// while a slow server is still starting — it starts only once the test lets
// it, after the initialize was answered — serving the servers that are
// connected, and then tells the client, by list_changed for tools, prompts
// and resources, of the slow server's once it connects; its tools are then
// called.
func TestServeAnswersBeforeServersConnect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// connect starts cmd (serve with args) and connects client to it.
		args    func(port int) []string
		connect func(ctx context.Context, t *testing.T, client *mcp.Client, cmd *exec.Cmd, port int) (*mcp.ClientSession, error)
	}{
		{name: "stdio", args: func(int) []string { return nil },
			connect: func(ctx context.Context, t *testing.T, client *mcp.Client, cmd *exec.Cmd, _ int) (*mcp.ClientSession, error) {
				return client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			}},
		{name: "http", args: func(port int) []string { return []string{"--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth"} },
			connect: func(ctx context.Context, t *testing.T, client *mcp.Client, cmd *exec.Cmd, port int) (*mcp.ClientSession, error) {
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
				testbin.WaitListening(t, port)
				return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)},
					&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // (a session: list_changed on its stream)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			gate := filepath.Join(dir, "gate")
			cfg := filepath.Join(dir, "cfg.hcl")
			os.WriteFile(cfg, []byte(`server "fast" {
  command = "mcphost-demo"
  args    = ["-name", "fast"]
}
server "slow" {
  command         = "sh"
  args            = ["-c", "while [ ! -e `+gate+` ]; do sleep 0.05; done; exec mcphost-demo -name slow -passthrough"]
  connect_timeout = "60s"
}
permissions {
  allow = ["mcp__fast", "mcp__slow"]
}
`), 0o600)
			port := testbin.FreePort(t)
			cmd := exec.Command("mcphost", append([]string{"--config", cfg, "serve"}, tc.args(port)...)...)
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
				"MCPHOST_CONFIG_DIR="+filepath.Join(dir, "config"), "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "managed.hcl"))
			stderr := &syncbuf.Buffer{}
			cmd.Stderr = stderr
			changed := make(chan string, 10)
			client := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { changed <- "tools" },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
			})
			// (Bounded only so that a gateway that waits for the slow
			// server fails rather than hangs: the slow server never starts
			// before the gate.)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := tc.connect(ctx, t, client, cmd, port)
			if err != nil {
				t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr)
			}
			defer cs.Close()
			if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged || caps.Prompts == nil || !caps.Prompts.ListChanged ||
				caps.Resources == nil || !caps.Resources.ListChanged {
				t.Errorf("capabilities %+v: list_changed not announced", caps)
			}
			tools := func() []string {
				t.Helper()
				var names []string
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, tool.Name)
				}
				return names
			}
			// The fast server is served as soon as it is connected; the
			// slow one has not started.
			for !slices.Contains(tools(), "mcp__fast__echo") {
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatalf("the fast server's tools never came: %q\nstderr:\n%s", tools(), stderr)
				}
			}
			if slices.Contains(tools(), "mcp__slow__echo") {
				t.Fatal("the slow server is served before it started")
			}
			readyz := func() (int, string) {
				t.Helper()
				resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if tc.name == "http" {
				// Not ready while a server is still connecting, though one
				// is (ready_when = "any").
				if code, body := readyz(); code != http.StatusServiceUnavailable || !strings.Contains(body, `"starting":true`) {
					t.Errorf("/readyz while the slow server connects: %d %s; want 503, starting", code, body)
				}
			}

			// A call of the slow server's tool made now, before it has
			// started, waits for it (as a call to the server directly
			// would) instead of being answered "unknown tool".
			early := make(chan error, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__slow__echo", Arguments: map[string]any{"message": "early"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %+v", res.Content)
				}
				early <- err
			}()

			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-early:
				if err != nil {
					t.Errorf("a call of the slow server's tool made while it connected: %v", err)
				}
			case <-ctx.Done():
				t.Fatal("a call made while the slow server connected was never answered")
			}
			seen := map[string]bool{}
			for !seen["tools"] || !seen["prompts"] || !seen["resources"] {
				select {
				case kind := <-changed:
					seen[kind] = true
				case <-ctx.Done():
					t.Fatalf("list_changed after the slow server connected: only %v\nstderr:\n%s", seen, stderr)
				}
			}
			if got := tools(); !slices.Contains(got, "mcp__slow__echo") || !slices.Contains(got, "mcp__fast__echo") {
				t.Errorf("tools after the slow server connected: %q", got)
			}
			var prompts []string
			for p, err := range cs.Prompts(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				prompts = append(prompts, p.Name)
			}
			if !slices.Contains(prompts, "mcp__slow__introduce") {
				t.Errorf("prompts after the slow server connected: %q", prompts)
			}
			if tc.name == "http" {
				// Ready once every server has connected (or failed).
				for code, body := readyz(); code != http.StatusOK; code, body = readyz() {
					select {
					case <-ctx.Done():
						t.Fatalf("/readyz after the slow server connected: %d %s", code, body)
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__slow__echo", Arguments: map[string]any{"message": "hi"}})
			if err != nil {
				t.Errorf("calling the slow server: %v", err)
			} else if res.IsError {
				t.Errorf("calling the slow server: %+v", res.Content)
			}
		})
	}
}

package cli

import (
	"context"
	"fmt"
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

// endpointConfig is the configuration of the endpoint tests: demo servers
// a and b, and endpoints (HCL) after them.
func endpointConfig(endpoints string) string {
	return `server "a" {
  command = "mcphost-demo"
  args    = ["-name", "a"]
}
server "b" {
  command = "mcphost-demo"
  args    = ["-name", "b"]
}
permissions {
  allow = ["mcp__a", "mcp__b"]
}
` + endpoints
}

// devEndpoint is endpoint "dev": server a without its add tool, named
// SERVER__TOOL.
const devEndpoint = `endpoint "dev" {
  servers = ["a"]
  naming  = "server"
  tools {
    exclude = ["mcp__a__add"]
  }
}
`

// serveCmd is `mcphost serve args...` (the real CLI, a child process) with
// the configuration cfg, in a home of its own; its stderr is returned.
func serveCmd(t *testing.T, cfg string, args ...string) (*exec.Cmd, *syncbuf.Buffer) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg.hcl")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("mcphost", append([]string{"--config", path, "serve"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"MCPHOST_CONFIG_DIR="+filepath.Join(dir, "config"), "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "managed.hcl"), "MCPHOST_LOG_LEVEL=info")
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	return cmd, stderr
}

// endpointView is what a client of an endpoint is served and may call.
func endpointView(ctx context.Context, t *testing.T, cs *mcp.ClientSession) (tools []string) {
	t.Helper()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool.Name)
	}
	slices.Sort(tools)
	return tools
}

// checkDev checks a client of endpoint dev: a's tools but add, as
// SERVER__TOOL, callable; b's tools, a's add and registry names unknown.
func checkDev(ctx context.Context, t *testing.T, cs *mcp.ClientSession, stderr *syncbuf.Buffer) {
	t.Helper()
	tools := endpointView(ctx, t, cs)
	if !slices.Contains(tools, "a__echo") || slices.ContainsFunc(tools, func(n string) bool {
		return n == "a__add" || strings.HasPrefix(n, "b__") || strings.HasPrefix(n, "mcp__")
	}) {
		t.Errorf("dev's tools %v: want a's but add, as SERVER__TOOL\nstderr:\n%s", tools, stderr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		t.Errorf("call a__echo: %v %+v", err, res)
	}
	for _, name := range []string{"b__echo", "mcp__b__echo", "a__add", "mcp__a__echo"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "hi"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("call %s at dev: %v, want unknown tool", name, err)
		}
	}
}

// TestServeEndpointStdio: `mcphost serve --endpoint dev` serves endpoint
// dev on stdio to clients of both eras: its server's tools its tools block
// lets through, under its naming; anything else is unknown.
func TestServeEndpointStdio(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cmd, stderr := serveCmd(t, endpointConfig(devEndpoint), "--endpoint", "dev")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr)
			}
			defer cs.Close()
			// (Listed once a's connected: its tools come with list_changed.)
			for !slices.Contains(endpointView(ctx, t, cs), "a__echo") {
				select {
				case <-ctx.Done():
					t.Fatalf("a's tools never came\nstderr:\n%s", stderr)
				case <-time.After(50 * time.Millisecond):
				}
			}
			checkDev(ctx, t, cs, stderr)
		})
	}
}

// TestServeEndpointsHTTP: `mcphost serve --http` serves endpoint dev at
// /mcp/dev (to clients of both eras) beside the whole gateway at /mcp;
// /mcp/nope is 404. A reload (the configuration file changed) that changes dev's servers, adds
// endpoint ops and, next, removes it, is followed: dev's client is told
// (list_changed) and served b's tools, ops is served and then 404.
func TestServeEndpointsHTTP(t *testing.T) {
	t.Parallel()
	cfg := endpointConfig(devEndpoint)
	port := testbin.FreePort(t)
	cmd, stderr := serveCmd(t, cfg, "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	path := cmd.Args[2]
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	testbin.WaitListening(t, port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	connect := func(path, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect %s: %v\nstderr:\n%s", path, err, stderr)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: never\nstderr:\n%s", what, stderr)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	status := func(path string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	whole := connect("/mcp", "2025-11-25", nil)
	waitFor("the whole gateway's tools", func() bool {
		tools := endpointView(ctx, t, whole)
		return slices.Contains(tools, "mcp__a__echo") && slices.Contains(tools, "mcp__b__echo")
	})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		checkDev(ctx, t, connect("/mcp/dev", version, nil), stderr)
	}
	if got := status("/mcp/nope"); got != http.StatusNotFound {
		t.Errorf("/mcp/nope: %d, want 404", got)
	}

	changed := make(chan struct{}, 10)
	dev := connect("/mcp/dev", "2025-11-25", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	endpointView(ctx, t, dev)
	reload := func(endpoints string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(endpointConfig(endpoints)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reload(strings.Replace(devEndpoint, `servers = ["a"]`, `servers = ["b"]`, 1) + "endpoint \"ops\" {\n  servers = [\"a\"]\n}\n")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("dev's client was not told its tools changed\nstderr:\n%s", stderr)
	}
	waitFor("dev serves b's tools", func() bool {
		tools := endpointView(ctx, t, dev)
		return slices.Contains(tools, "b__echo") && !slices.Contains(tools, "a__echo")
	})
	waitFor("ops is served", func() bool { return status("/mcp/ops") != http.StatusNotFound })
	if tools := endpointView(ctx, t, connect("/mcp/ops", "2026-07-28", nil)); !slices.Contains(tools, "mcp__a__echo") || slices.Contains(tools, "mcp__b__echo") {
		t.Errorf("ops's tools %v: want a's, prefixed", tools)
	}
	reload(devEndpoint)
	waitFor("ops is 404 once removed", func() bool { return status("/mcp/ops") == http.StatusNotFound })
}

// TestServeEndpointNamingReload: a reload that changes endpoint dev's
// naming (server → prefixed) keeps its clients' sessions, on stdio (`serve
// --endpoint dev`) and over HTTP (/mcp/dev): each is told its tools
// changed, lists them under the new names, and calls them by those on the
// same session. On the code before, stdio kept the old names until a
// restart, and HTTP closed the endpoint's sessions (a new gateway).
func TestServeEndpointNamingReload(t *testing.T) {
	t.Parallel()
	for _, front := range []string{"stdio", "http"} {
		t.Run(front, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			changed := make(chan struct{}, 10)
			opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case changed <- struct{}{}:
				default:
				}
			}}
			var cmd *exec.Cmd
			var stderr *syncbuf.Buffer
			var tr mcp.Transport
			if front == "stdio" {
				cmd, stderr = serveCmd(t, endpointConfig(devEndpoint), "--endpoint", "dev")
				tr = &mcp.CommandTransport{Command: cmd}
			} else {
				port := testbin.FreePort(t)
				cmd, stderr = serveCmd(t, endpointConfig(devEndpoint), "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
				testbin.WaitListening(t, port)
				tr = &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp/dev", port)}
			}
			path := cmd.Args[2]
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, opts).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr)
			}
			defer cs.Close()
			waitTools := func(what string, ok func([]string) bool) {
				t.Helper()
				for !ok(endpointView(ctx, t, cs)) {
					select {
					case <-ctx.Done():
						t.Fatalf("%s: never (tools %v)\nstderr:\n%s", what, endpointView(context.Background(), t, cs), stderr)
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			waitTools("a's tools as SERVER__TOOL", func(tools []string) bool { return slices.Contains(tools, "a__echo") })
			for len(changed) > 0 {
				<-changed // (a's tools came with list_changed)
			}
			if err := os.WriteFile(path, []byte(endpointConfig(strings.Replace(devEndpoint, `naming  = "server"`, `naming  = "prefixed"`, 1))), 0o600); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("dev's client was not told its tools changed\nstderr:\n%s", stderr)
			}
			waitTools("a's tools under the prefixed names", func(tools []string) bool {
				return slices.Contains(tools, "mcp__a__echo") && !slices.Contains(tools, "a__echo") && !slices.Contains(tools, "mcp__a__add")
			})
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "hi"}})
			if err != nil || res.IsError {
				t.Errorf("call mcp__a__echo on the same session: %v %+v\nstderr:\n%s", err, res, stderr)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "hi"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("call a__echo after the change: %v, want unknown tool", err)
			}
		})
	}
}

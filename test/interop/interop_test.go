//go:build unix

// Package interop tests mcphost against MCP peers nobody here wrote: the
// reference server @modelcontextprotocol/server-everything (over stdio,
// streamable HTTP and SSE) and the MCP inspector CLI as a client of
// `mcphost serve`. The npm packages are installed by `make test-deps`.
package interop

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var (
	binDir     string // mcphost and mcphost-demo, built for this run
	everything string // the server-everything executable
	inspector  string // the inspector CLI executable
	nodeDir    string // test/interop/node_modules
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	nodeDir = filepath.Join(here, "node_modules")
	everything = filepath.Join(nodeDir, ".bin", "mcp-server-everything")
	inspector = filepath.Join(nodeDir, ".bin", "mcp-inspector-cli")
	for _, p := range []string{everything, inspector} {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(os.Stderr, "interop tests need %s: run `make test-deps` (npm ci in test/interop)\n", p)
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "mcphost-interop")
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

// startEverything runs server-everything in a network mode on a free port.
func startEverything(t *testing.T, mode string) int {
	t.Helper()
	port := testbin.FreePort(t)
	cmd := exec.Command(everything, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	return port
}

func newHost(t *testing.T, servers ...*config.Server) *host.Host {
	t.Helper()
	for _, s := range servers {
		s.Approved = true
		if s.ConnectTimeout == 0 {
			s.ConnectTimeout = 30 * time.Second
		}
	}
	h, err := host.New(&config.Config{Servers: servers, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// exerciseEverything lists server-everything's tools through the registry and
// calls a few of them.
func exerciseEverything(t *testing.T, h *host.Host, server string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tools, problems := h.Tools(ctx)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	have := map[string]bool{}
	for _, tl := range tools {
		have[tl.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "get-structured-content"} {
		if !have["mcp__"+server+"__"+want] {
			t.Errorf("registry lacks mcp__%s__%s; has %v", server, want, have)
		}
	}
	res, err := h.CallTool(ctx, "mcp__"+server+"__echo", map[string]any{"message": "interop"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := host.TextOf(res.Content); !strings.Contains(got, "interop") {
		t.Errorf("echo = %q", got)
	}
	res, err = h.CallTool(ctx, "mcp__"+server+"__get-sum", map[string]any{"a": 19, "b": 23}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := host.TextOf(res.Content); !strings.Contains(got, "42") {
		t.Errorf("get-sum = %q", got)
	}
	res, err = h.CallTool(ctx, "mcp__"+server+"__get-tiny-image", map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := host.TextOf(res.Content); !strings.Contains(got, "[Image: image/png]") {
		t.Errorf("get-tiny-image = %q (images must be kept)", got)
	}
	rs, problems := h.Resources(ctx, server)
	if len(problems) > 0 || len(rs) == 0 {
		t.Fatalf("resources %d, problems %v", len(rs), problems)
	}
	contents, err := h.ReadResource(ctx, server, rs[0].URI)
	if err != nil || len(contents) == 0 {
		t.Fatalf("read %s: %v", rs[0].URI, err)
	}
	ps, problems := h.Prompts(ctx)
	if len(problems) > 0 || len(ps) == 0 {
		t.Fatalf("prompts %d, problems %v", len(ps), problems)
	}
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	h := newHost(t, &config.Server{Name: "everything", Transport: config.TransportStdio, Command: everything, Args: []string{"stdio"}})
	exerciseEverything(t, h, "everything")
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	port := startEverything(t, "streamableHttp")
	h := newHost(t, &config.Server{Name: "everything", Transport: config.TransportHTTP, URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)})
	exerciseEverything(t, h, "everything")
}

func TestEverythingSSE(t *testing.T) {
	t.Parallel()
	port := startEverything(t, "sse")
	h := newHost(t, &config.Server{Name: "everything", Transport: config.TransportSSE, URL: fmt.Sprintf("http://127.0.0.1:%d/sse", port)})
	exerciseEverything(t, h, "everything")
}

func writeConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cfg.hcl")
	src := fmt.Sprintf(`
server "everything" {
  command = %q
  args    = ["stdio"]
}
server "demo" {
  command = %q
}
permissions {
  allow = ["mcp__everything", "mcp__demo"]
}
`, everything, filepath.Join(binDir, "mcphost-demo"))
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mcphostCmd prepares `mcphost ARGS` with a private HOME.
func mcphostCmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, "mcphost"), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home+"/.config", "XDG_CACHE_HOME="+home+"/.cache",
		"MCPHOST_MANAGED_CONFIG="+home+"/managed.hcl")
	return cmd
}

// TestServeWithInspectorCLI drives `mcphost serve --http` with the MCP
// inspector's CLI client.
func TestServeWithInspectorCLI(t *testing.T) {
	t.Parallel()
	port := testbin.FreePort(t)
	serve := mcphostCmd(t, "--config", writeConfig(t), "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port))
	const token = "interop-token-0123456789"
	serve.Env = append(serve.Env, "MCPHOST_SERVE_TOKEN="+token)
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGTERM)
		serve.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	sc := bufio.NewScanner(out)
	found := false
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == url {
			found = true
			break
		}
	}
	if !found {
		t.Fatalf("serve never printed %s", url)
	}
	go func() { // keep draining
		for sc.Scan() {
		}
	}()
	inspect := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(inspector, append([]string{"--cli", url, "--transport", "http", "--header", "Authorization: Bearer " + token}, args...)...)
		// The inspector CLI starts only from a directory whose parent holds a package.json.
		cmd.Dir = nodeDir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	// Without the token the gateway refuses the inspector.
	noAuth := exec.Command(inspector, "--cli", url, "--transport", "http", "--method", "tools/list")
	noAuth.Dir = nodeDir
	if out, err := noAuth.CombinedOutput(); err == nil {
		t.Errorf("the inspector listed tools without the token:\n%s", out)
	}
	list := inspect("--method", "tools/list")
	for _, want := range []string{`"name": "mcp__everything__echo"`, `"name": "mcp__demo__echo"`, `"name": "mcp__everything__get-sum"`} {
		if !strings.Contains(list, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	call := inspect("--method", "tools/call", "--tool-name", "mcp__everything__echo", "--tool-arg", "message=from-inspector")
	if !strings.Contains(call, "from-inspector") {
		t.Errorf("tools/call through the gateway:\n%s", call)
	}
	call = inspect("--method", "tools/call", "--tool-name", "mcp__demo__add", "--tool-arg", "a=20", "b=22")
	if !strings.Contains(call, `"sum": 42`) {
		t.Errorf("tools/call add:\n%s", call)
	}

	// Resources and prompts of both servers pass through; reads and gets
	// go to the server that owns them.
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"resources/list", []string{"--method", "resources/list"},
			[]string{`"uri": "demo://resource/static/document/features.md"`, `"uri": "demo://readme"`}},
		{"resources/templates/list", []string{"--method", "resources/templates/list"},
			[]string{`"uriTemplate": "demo://resource/dynamic/text/{resourceId}"`}},
		{"resources/read of server-everything", []string{"--method", "resources/read", "--uri", "demo://resource/static/document/features.md"},
			[]string{"# Everything Server - Features"}},
		{"resources/read of the demo server", []string{"--method", "resources/read", "--uri", "demo://readme"},
			[]string{"This is the mcphost demo server."}},
		{"resources/read through a template", []string{"--method", "resources/read", "--uri", "demo://resource/dynamic/text/7"},
			[]string{"Resource 7: This is a plaintext resource"}},
		{"prompts/list", []string{"--method", "prompts/list"},
			[]string{`"name": "mcp__everything__args-prompt"`, `"name": "mcp__demo__greet"`}},
		{"prompts/get of server-everything", []string{"--method", "prompts/get", "--prompt-name", "mcp__everything__args-prompt", "--prompt-args", "city=Paris"},
			[]string{"What's weather in Paris?"}},
		{"prompts/get of the demo server", []string{"--method", "prompts/get", "--prompt-name", "mcp__demo__greet", "--prompt-args", "name=Ada"},
			[]string{"Say hello to Ada."}},
	} {
		got := inspect(tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s through the gateway lacks %s:\n%s", tc.name, w, got)
			}
		}
	}
}

// proc is one line of /proc/PID/stat, the fields these tests need.
type proc struct {
	pid, ppid, pgid int
	state           string
}

// procs lists the machine's processes.
func procs() []proc {
	var out []proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:]) // state ppid pgrp ...
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		out = append(out, proc{pid: pid, ppid: ppid, pgid: pgid, state: f[0]})
	}
	return out
}

// children returns the processes whose parent is pid.
func children(pid int) []proc {
	var out []proc
	for _, p := range procs() {
		if p.ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// groupMembers returns the live (non-zombie) processes in process group pgid.
func groupMembers(pgid int) []int {
	var out []int
	for _, p := range procs() {
		if p.pgid == pgid && p.state != "Z" {
			out = append(out, p.pid)
		}
	}
	return out
}

// TestNoOrphans: after `mcphost serve` (stdio) is stopped with SIGTERM, and
// after an upstream server crashes, no server process is left behind.
func TestNoOrphans(t *testing.T) {
	t.Parallel()
	serve := mcphostCmd(t, "--config", writeConfig(t), "serve")
	stdin, _ := serve.StdinPipe()
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "orphan-test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	if res, err := call("mcp__everything__echo", map[string]any{"message": "x"}); err != nil || res.IsError {
		t.Fatalf("echo: %v %v", res, err)
	}
	kids := children(serve.Process.Pid)
	if len(kids) != 2 {
		t.Fatalf("mcphost has %d children, want 2 (everything, demo)", len(kids))
	}

	// The demo server crashes mid-call: the call fails, the process is reaped,
	// and the next call starts a new one.
	res, err := call("mcp__demo__crash", map[string]any{})
	if err == nil && !res.IsError {
		t.Fatal("a call whose server crashed succeeded")
	}
	if res, err := call("mcp__demo__echo", map[string]any{"message": "again"}); err != nil || res.IsError {
		t.Fatalf("echo after crash: %v %v", res, err)
	}
	kids = children(serve.Process.Pid)
	if len(kids) != 2 {
		t.Errorf("after the crash mcphost has children %v, want 2 live ones and no zombie", kids)
	}
	for _, k := range kids {
		if k.state == "Z" {
			t.Errorf("zombie child %d", k.pid)
		}
	}

	// SIGTERM: mcphost stops, and every server process group is gone.
	serve.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("mcphost serve did not exit on SIGTERM")
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, k := range kids {
		for len(groupMembers(k.pid)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("server process group %d outlived mcphost: %v", k.pid, groupMembers(k.pid))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

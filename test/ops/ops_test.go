// Package ops tests operating the real mcphost binary as a gateway: hot
// reload under load (the soak test), graceful shutdown with a call in
// flight, and the health endpoints.
package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

// gateway is a running `mcphost serve --http` on a configuration file the
// test rewrites.
type gateway struct {
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	file   string // the configuration file
	base   string // http://127.0.0.1:PORT
}

// demoServer is an HCL server block running the demo server as name.
func demoServer(name string, args ...string) string {
	quoted := []string{`"-name"`, strconv.Quote(name)}
	for _, a := range args {
		quoted = append(quoted, strconv.Quote(a))
	}
	return fmt.Sprintf("server %q {\n  command = %q\n  args = [%s]\n}\n", name, filepath.Join(binDir, "mcphost-demo"), strings.Join(quoted, ", "))
}

// startGateway writes cfg and starts the gateway on it.
func startGateway(t *testing.T, cfg string) *gateway {
	t.Helper()
	dir := t.TempDir()
	g := &gateway{file: filepath.Join(dir, "mcphost.hcl"), stderr: &syncbuf.Buffer{}}
	g.write(t, cfg)
	port := testbin.FreePort(t)
	g.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	g.cmd = exec.Command(filepath.Join(binDir, "mcphost"), "--config", g.file, "--log-level", "info", "--log-format", "json",
		"serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	g.cmd.Env = append(os.Environ(), "HOME="+dir, "MCPHOST_CONFIG_DIR="+filepath.Join(dir, "cfg"), "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "managed.hcl"))
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		g.cmd.Wait()
	})
	testbin.WaitListening(t, port)
	g.awaitStarted(t)
	return g
}

// awaitStarted waits until the gateway's servers have each connected or
// failed at start (/readyz no longer says starting): serve listens at
// once, while they connect.
func (g *gateway) awaitStarted(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(g.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Starting bool `json:"starting"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err == nil && !r.Starting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway's servers were still connecting after 60 s (%v)\n%s", err, g.stderr)
		}
		time.Sleep(20 * time.Millisecond) // (polling /readyz, as a balancer does)
	}
}

// write replaces the configuration file as an editor does (a new file
// renamed over the old one).
func (g *gateway) write(t *testing.T, cfg string) {
	t.Helper()
	tmp := g.file + ".tmp"
	if err := os.WriteFile(tmp, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, g.file); err != nil {
		t.Fatal(err)
	}
}

func (g *gateway) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ops"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// readyz is /readyz's answer.
type readyz struct {
	Status    string `json:"status"`
	ReadyWhen string `json:"ready_when"`
	Config    struct {
		LoadedAt   time.Time `json:"loaded_at"`
		LastReload string    `json:"last_reload"`
		At         time.Time `json:"last_reload_at"`
		Errors     []string  `json:"errors"`
	} `json:"config"`
	Servers []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	} `json:"servers"`
}

func (g *gateway) readyz(t *testing.T) (int, readyz) {
	t.Helper()
	resp, err := http.Get(g.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r readyz
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	return resp.StatusCode, r
}

// waitReload waits until /readyz reports a reload after since, and returns it.
func (g *gateway) waitReload(t *testing.T, since time.Time) readyz {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, r := g.readyz(t)
		if r.Config.At.After(since) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reload reported after %s; stderr:\n%s", since, g.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so from the last ")".
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// TestSIGTERMLetsTheCallInFlightFinish: SIGTERM with a call in flight that
// needs less than drain_timeout: the call gets its result, then the gateway
// exits, and none of its processes (the servers it started) remains.
func TestSIGTERMLetsTheCallInFlightFinish(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "settings {\n  drain_timeout = \"20s\"\n}\npermissions {\n  default_mode = \"allow_all\"\n}\n"+demoServer("demo")+demoServer("other"))
	cs := g.connect(t)
	defer cs.Close()
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__other__echo", Arguments: map[string]any{"message": "up"}}); err != nil {
		t.Fatal(err)
	}
	kids := children(g.cmd.Process.Pid)
	if len(kids) < 2 {
		t.Fatalf("the gateway's processes: %v, want its two servers", kids)
	}
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	calls := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"milliseconds": 3000, "steps": 3}})
		calls <- result{res, err}
	}()
	time.Sleep(500 * time.Millisecond) // the call reaches the server
	exited := make(chan error, 1)
	go func() { exited <- g.cmd.Wait() }()
	start := time.Now()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-calls:
		if r.err != nil || r.res.IsError || !strings.Contains(r.res.Content[0].(*mcp.TextContent).Text, "done after 3 steps") {
			t.Fatalf("call in flight at SIGTERM: %+v, %v; want its result", r.res, r.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight got no answer")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, g.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the gateway did not exit after SIGTERM")
	}
	t.Logf("SIGTERM to exit: %s (a 3 s call in flight, drain_timeout 20s)", time.Since(start))
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range kids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d of the gateway's still runs after it exited", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	broken := "server \"broken\" {\n  command = \"/nonexistent/mcp-server\"\n}\n"
	tests := []struct {
		name      string
		readyWhen string // "" for the default
		servers   string
		wantCode  int
	}{
		{"default any, one of two connected", "", demoServer("demo") + broken, http.StatusOK},
		{"all, one of two connected", "all", demoServer("demo") + broken, http.StatusServiceUnavailable},
		{"all, every one connected", "all", demoServer("demo"), http.StatusOK},
		{"any, none connected", "any", broken, http.StatusServiceUnavailable},
		{"none, none connected", "none", broken, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			settings := ""
			if tt.readyWhen != "" {
				settings = fmt.Sprintf("settings {\n  ready_when = %q\n}\n", tt.readyWhen)
			}
			g := startGateway(t, settings+tt.servers)
			resp, err := http.Get(g.base + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("/healthz = %d", resp.StatusCode)
			}
			code, r := g.readyz(t)
			if code != tt.wantCode {
				t.Errorf("/readyz = %d %+v, want %d", code, r, tt.wantCode)
			}
			want := map[int]string{http.StatusOK: "ready", http.StatusServiceUnavailable: "not ready"}[tt.wantCode]
			if r.Status != want || len(r.Servers) == 0 || r.Config.LoadedAt.IsZero() {
				t.Errorf("/readyz body %+v", r)
			}
			body, _ := json.Marshal(r)
			if strings.Contains(string(body), "nonexistent") || strings.Contains(string(body), binDir) {
				t.Errorf("/readyz tells a command: %s", body)
			}
		})
	}
}

// Package bench measures mcphost's overhead against the direct path in the
// same run: the ratio, not the absolute time, is the result (the machine is
// shared and noisy). `make bench` runs these and writes BENCHMARKS.md.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/mcphost/mcphost/internal/wsmcp"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

func demoPath() string { return filepath.Join(binDir, "mcphost-demo") }

var echoArgs = map[string]any{"message": "benchmark payload: the quick brown fox jumps over the lazy dog"}

// connectDirect starts the demo server and connects a go-sdk client to it.
func connectDirect(b *testing.B) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: exec.Command(demoPath())}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// connectGateway starts `mcphost serve` (stdio) over the demo server and
// connects a go-sdk client to it.
func connectGateway(b *testing.B) *mcp.ClientSession {
	b.Helper()
	dir := b.TempDir()
	cfg := filepath.Join(dir, "cfg.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("server \"demo\" {\n  command = %q\n}\npermissions {\n  allow = [\"mcp__demo\"]\n}\n", demoPath())), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "mcphost"), "--config", cfg, "serve")
	cmd.Env = append(os.Environ(), "HOME="+dir, "MCPHOST_MANAGED_CONFIG="+filepath.Join(dir, "none.hcl"))
	if p := os.Getenv("BENCH_GATEWAY_CPUPROFILE"); p != "" {
		cmd.Env = append(cmd.Env, "MCPHOST_CPUPROFILE="+p)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func call(b *testing.B, cs *mcp.ClientSession, name string) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: echoArgs})
	if err != nil || res.IsError {
		if res != nil {
			b.Fatalf("%s: %s", name, host.TextOf(res.Content))
		}
		b.Fatalf("%s: %v", name, err)
	}
}

// BenchmarkCallDirect is a go-sdk client calling the stdio demo server: the
// baseline for BenchmarkCallHost.
func BenchmarkCallDirect(b *testing.B) {
	cs := connectDirect(b)
	call(b, cs, "echo")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call(b, cs, "echo")
	}
}

// BenchmarkCallHost is the `mcphost call` path in process: registry lookup,
// connection manager, tools/call, result processing, to the same server.
func BenchmarkCallHost(b *testing.B) {
	h, err := host.New(&config.Config{DefaultMode: "allow_all", Servers: []*config.Server{{
		Name: "demo", Transport: config.TransportStdio, Command: demoPath(), Approved: true, ConnectTimeout: 30 * time.Second,
	}}}, &host.Options{OutputDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	if _, err := h.CallTool(ctx, "mcp__demo__echo", echoArgs, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.CallTool(ctx, "mcp__demo__echo", echoArgs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// concurrent runs b.N calls from `callers` goroutines and reports p50/p99
// latency and calls per second.
func concurrent(b *testing.B, cs *mcp.ClientSession, name string, callers int) {
	call(b, cs, name)
	lat := make([]time.Duration, b.N)
	var next sync.Mutex
	i := 0
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < callers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				n := i
				i++
				next.Unlock()
				if n >= b.N {
					return
				}
				t0 := time.Now()
				call(b, cs, name)
				lat[n] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// BenchmarkServeDirect8 is 8 concurrent callers on one client session to the
// stdio demo server: the baseline for BenchmarkServeGateway8.
func BenchmarkServeDirect8(b *testing.B) { concurrent(b, connectDirect(b), "echo", 8) }

// BenchmarkServeGateway8 is the same load through `mcphost serve` (stdio) in
// front of the same server.
func BenchmarkServeGateway8(b *testing.B) { concurrent(b, connectGateway(b), "mcp__demo__echo", 8) }

// wsDemo starts the demo server on WebSocket and returns its URL.
func wsDemo(b *testing.B) string {
	b.Helper()
	port := testbin.FreePort(b)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(demoPath(), "-ws", addr)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(b, port)
	return "ws://" + addr + "/mcp"
}

// BenchmarkWSDirect8 is a go-sdk client on an in-process WebSocket
// connection to the demo server, 8 concurrent callers: the baseline for
// BenchmarkWSPlugin8.
func BenchmarkWSDirect8(b *testing.B) {
	url := wsDemo(b)
	t, err := wsmcp.Dial(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	concurrent(b, cs, "echo", 8)
}

// pluginHost returns a host with one ws server reached through the
// transport-ws plugin (locked to the freshly built binary).
func pluginHost(b *testing.B, url string) *host.Host {
	b.Helper()
	path := filepath.Join(binDir, "plugins", "transport-ws")
	sum, err := plugins.FileSHA256(path)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &config.Config{DefaultMode: "allow_all",
		Servers: []*config.Server{{Name: "ws", Transport: "ws", URL: url, Approved: true, ConnectTimeout: 30 * time.Second}},
		Plugins: []*config.Plugin{{Name: "transport-ws", Path: path, SHA256: sum,
			Locked: &config.LockedPlugin{Name: "transport-ws", Path: path, SHA256: sum, Transports: []string{"ws"}, Protocol: 1}}},
	}
	h, err := host.New(cfg, &host.Options{OutputDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}

// BenchmarkWSPlugin8 is the same load through the transport-ws plugin: a
// go-sdk client on the host's plugin connection (gRPC stream to the plugin
// process, which holds the WebSocket).
func BenchmarkWSPlugin8(b *testing.B) {
	h := pluginHost(b, wsDemo(b))
	cs, err := h.Connections().Session(context.Background(), "ws")
	if err != nil {
		b.Fatal(err)
	}
	concurrent(b, cs, "echo", 8)
	for _, st := range h.Plugins().Status() {
		if st.Name == "transport-ws" && st.PID > 0 {
			if kb := rssKiB(st.PID); kb > 0 {
				b.ReportMetric(float64(kb), "plugin-RSS-KiB")
			}
		}
	}
}

// BenchmarkPluginStart measures starting the transport-ws plugin until its
// first RPC answers: checksum verification of a private copy, exec, the
// go-plugin handshake with AutoMTLS, and GetInfo.
func BenchmarkPluginStart(b *testing.B) {
	path := filepath.Join(binDir, "plugins", "transport-ws")
	sum, err := plugins.FileSHA256(path)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &config.Config{Plugins: []*config.Plugin{{Name: "transport-ws", Path: path, SHA256: sum}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rt, err := plugins.New(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.Info(context.Background(), "transport-ws"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		rt.Close()
		b.StartTimer()
	}
}

func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int
			fmt.Sscan(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), &kb)
			return kb
		}
	}
	return 0
}

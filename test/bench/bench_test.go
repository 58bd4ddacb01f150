// Package bench measures mcphost's overhead against the direct path in the
// same run: the ratio, not the absolute time, is the result (the machine is
// shared and noisy). `make bench` runs these and writes BENCHMARKS.md.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/internal/testing/testbin"
	"github.com/mcphost/mcphost/internal/wsmcp"
	"github.com/mcphost/mcphost/sdk"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

func demoPath() string { return filepath.Join(binDir, "mcphost-demo") }

var echoArgs = map[string]any{"message": "benchmark payload: the quick brown fox jumps over the lazy dog"}

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
	cs, _ := stdioPath(b, newVersion, true, demoPath())
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
	concurrentOn(b, []target{{cs, name}}, callers, nil)
}

// target is a tool on a session.
type target struct {
	cs   *mcp.ClientSession
	name string
}

// concurrentOn runs b.N calls from `callers` goroutines, call n going to
// targets[n % len(targets)] (see concurrentCalls).
func concurrentOn(b *testing.B, targets []target, callers int, cpu map[string]int) {
	calls := make([]func(), len(targets))
	for i, t := range targets {
		calls[i] = func() { call(b, t.cs, t.name) }
	}
	concurrentCalls(b, calls, callers, cpu)
}

// warmup is the number of calls each benchmark makes through its path,
// with its callers, before the timed ones: connections opened, buffers and
// the Go runtime's heap grown, code paged in (BENCH_WARMUP overrides it).
func warmup() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_WARMUP")); err == nil && v >= 0 {
		return v
	}
	return 200
}

// concurrentCalls runs each call once and warmup() calls, then b.N calls
// from `callers` goroutines, call n being calls[n % len(calls)], and reports
// p50/p99 latency and calls per second; and, for each process in cpu (by
// metric name), its CPU time per call (user + system, from /proc).
func concurrentCalls(b *testing.B, calls []func(), callers int, cpu map[string]int) {
	for _, c := range calls {
		c()
	}
	runCalls(calls, callers, make([]time.Duration, warmup()))
	lat := make([]time.Duration, b.N)
	before := map[string]time.Duration{}
	for m, pid := range cpu {
		before[m] = cpuTime(b, pid)
	}
	mid, hasMid := cpu[midCPU]
	var sys0, csw0, io0 int64
	if hasMid {
		sys0, csw0, io0 = rwSyscalls(b, mid), ctxSwitches(b, mid), ioBytes(b, mid)
	}
	dials0 := clientDials.Load()
	b.ResetTimer()
	start := time.Now()
	runCalls(calls, callers, lat)
	elapsed := time.Since(start)
	b.StopTimer()
	if d := clientDials.Load() - dials0; d > 0 {
		b.ReportMetric(float64(d)/float64(b.N), "client-dials/call")
	}
	for m, pid := range cpu {
		b.ReportMetric(float64((cpuTime(b, pid)-before[m]).Microseconds())/float64(b.N), m)
	}
	if hasMid {
		b.ReportMetric(float64(rwSyscalls(b, mid)-sys0)/float64(b.N), midSyscalls)
		b.ReportMetric(float64(ctxSwitches(b, mid)-csw0)/float64(b.N), midSwitches)
		b.ReportMetric(float64(ioBytes(b, mid)-io0)/float64(b.N), midIOBytes)
		if kb := rssKiB(mid); kb > 0 {
			b.ReportMetric(float64(kb), midRSS)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// runCalls makes len(lat) calls from `callers` goroutines, call n being
// calls[n % len(calls)], and records call n's latency in lat[n].
func runCalls(calls []func(), callers int, lat []time.Duration) {
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				n := i
				i++
				next.Unlock()
				if n >= len(lat) {
					return
				}
				t0 := time.Now()
				calls[n%len(calls)]()
				lat[n] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
}

// The CPU metrics: of the process in the middle (gateway, byte copier or
// naive proxy) and of the upstream server, per call.
const (
	midCPU = "mid-cpu-µs/call"
	srvCPU = "srv-cpu-µs/call"
)

// The wake-up metrics of the process in the middle, per call: its read and
// write system calls (syscr + syscw of /proc/PID/io), and its threads'
// context switches (voluntary and not: each is a thread going to sleep or
// being woken, e.g. by a futex or a pipe).
const (
	midSyscalls = "mid-rw-syscalls/call"
	midSwitches = "mid-ctxsw/call"
)

// The size of the process in the middle: its resident set at the end of
// the timed loop; and the bytes it read and wrote by system calls (rchar +
// wchar of /proc/PID/io), per call: what passed through it, both ways.
const (
	midRSS     = "mid-RSS-KiB"
	midIOBytes = "mid-io-B/call"
)

// rwSyscalls is the number of read and write system calls a process made.
func rwSyscalls(b *testing.B, pid int) int64 { return procIO(b, pid, "syscr", "syscw") }

// ioBytes is the number of bytes a process read and wrote by system calls.
func ioBytes(b *testing.B, pid int) int64 { return procIO(b, pid, "rchar", "wchar") }

// procIO is the sum of the named counters of /proc/PID/io.
func procIO(b *testing.B, pid int, keys ...string) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && slices.Contains(keys, k) {
			var c int64
			fmt.Sscan(strings.TrimSpace(v), &c)
			n += c
		}
	}
	return n
}

// ctxSwitches is the number of context switches of a process's threads.
func ctxSwitches(b *testing.B, pid int) int64 {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				var c int64
				fmt.Sscan(strings.TrimSpace(v), &c)
				n += c
			}
		}
	}
	return n
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// cpuTime is the CPU time (user + system, all threads) a process used so far.
func cpuTime(b *testing.B, pid int) time.Duration {
	b.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("reading the CPU time of %d: %v", pid, err)
	}
	// The fields after the command (which may hold spaces) start after the
	// last ')'; utime and stime are fields 14 and 15 of the line.
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * clockTick
}

// children are the pids of a process's children.
func children(b *testing.B, pid int) []int {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var out []int
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(raw)) {
			var c int
			fmt.Sscan(f, &c)
			out = append(out, c)
		}
	}
	return out
}

// demoServers are the demo server processes among pid's descendants (the
// host may start a server under a supervisor process of its own).
func demoServers(b *testing.B, pid int) []int {
	b.Helper()
	var out []int
	for _, c := range children(b, pid) {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); err == nil && strings.TrimSpace(string(comm)) == "mcphost-demo" {
			out = append(out, c)
			continue
		}
		out = append(out, demoServers(b, c)...)
	}
	return out
}

// newest returns the process of pids started last (0 for none): the
// gateway starts a server's 2025-11-25 session after its main one.
func newest(b *testing.B, pids []int) int {
	b.Helper()
	best, bestStart := 0, int64(-1)
	for _, p := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			b.Fatal(err)
		}
		// Field 22 (starttime) counts from the one after the ")" that ends
		// the command name (field 2), which may hold spaces.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		start, err := strconv.ParseInt(f[19], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		if start >= bestStart {
			best, bestStart = p, start
		}
	}
	return best
}

// stdioPath starts argv (a server, or a process in front of one) and
// connects a go-sdk client speaking version to it. It returns the session
// and the metrics' processes: the server's, and that of the process in the
// middle when argv is one (server: true when argv is the server itself).
func stdioPath(b *testing.B, version string, server bool, argv ...string) (*mcp.ClientSession, map[string]int) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	if !server {
		cmd.Env = append(cmd.Env, gatewayEnv(b, b.TempDir())...)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		b.Fatalf("negotiated %s, want %s", v, version)
	}
	if server {
		return cs, map[string]int{srvCPU: cmd.Process.Pid}
	}
	call(b, cs, echoTool(b, cs)) // the middle has started its server(s)
	servers := demoServers(b, cmd.Process.Pid)
	if len(servers) != 1 {
		return cs, map[string]int{midCPU: cmd.Process.Pid}
	}
	return cs, map[string]int{midCPU: cmd.Process.Pid, srvCPU: servers[0]}
}

// echoTool is the name of a session's (first) echo tool.
func echoTool(b *testing.B, cs *mcp.ClientSession) string {
	b.Helper()
	for t, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasSuffix(t.Name, "echo") {
			return t.Name
		}
	}
	b.Fatal("no echo tool")
	return ""
}

// gatewayConfig writes a configuration of n demo servers (demo, or s0 …
// sN-1 when n > 1), followed by the blocks in extra, and returns its path.
func gatewayConfig(b *testing.B, n int, extra ...string) string {
	b.Helper()
	var cfg strings.Builder
	var allow []string
	for i := range n {
		name := "demo"
		if n > 1 {
			name = fmt.Sprintf("s%d", i)
		}
		// (Distinct args: the host drops a server of the same command
		// and args as another.)
		fmt.Fprintf(&cfg, "server %q {\n  command = %q\n  args = [\"-name\", %q]\n}\n", name, demoPath(), name)
		allow = append(allow, fmt.Sprintf("%q", "mcp__"+name))
	}
	fmt.Fprintf(&cfg, "permissions {\n  allow = [%s]\n}\n", strings.Join(allow, ", "))
	for _, e := range extra {
		cfg.WriteString(e)
	}
	path := filepath.Join(b.TempDir(), "cfg.hcl")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func mcphostPath() string    { return filepath.Join(binDir, "mcphost") }
func benchproxyPath() string { return filepath.Join(binDir, "benchproxy") }

const (
	oldVersion = "2025-11-25"
	newVersion = "2026-07-28"
)

// The stdio front, 8 concurrent callers on one session, for clients of
// both protocol eras: the server directly; through the byte-copy floor (a
// process that only copies bytes); through `mcphost serve`; and through a
// naive go-sdk proxy, for scale.

// BenchmarkServeDirect8 is the baseline for BenchmarkServeGateway8.
func BenchmarkServeDirect8(b *testing.B) { serveDirect(b, newVersion, 8) }

// serveDirect is a client speaking version to the stdio demo server,
// `callers` concurrent callers.
func serveDirect(b *testing.B, version string, callers int) {
	cs, cpu := stdioPath(b, version, true, demoPath())
	concurrentOn(b, []target{{cs, "echo"}}, callers, cpu)
}

// BenchmarkServeFloor8 is the byte-copy floor (2026-07-28 client).
func BenchmarkServeFloor8(b *testing.B) { serveFloor(b, newVersion, 8) }

// serveFloor is serveDirect through the byte-copy floor.
func serveFloor(b *testing.B, version string, callers int) {
	cs, cpu := stdioPath(b, version, false, benchproxyPath(), "copy", demoPath())
	concurrentOn(b, []target{{cs, "echo"}}, callers, cpu)
}

// BenchmarkServeGateway8 is `mcphost serve` (stdio), 2026-07-28 client.
func BenchmarkServeGateway8(b *testing.B) { serveGateway(b, newVersion, gatewayConfig(b, 1), 8) }

// serveGateway is serveDirect through `mcphost serve` (stdio) on
// configuration cfg (one demo server).
func serveGateway(b *testing.B, version, cfg string, callers int) {
	cs, cpu := stdioPath(b, version, false, mcphostPath(), "--config", cfg, "serve")
	concurrentOn(b, []target{{cs, "mcp__demo__echo"}}, callers, cpu)
}

// BenchmarkServeNaive8 is a naive go-sdk proxy, 2026-07-28 client.
func BenchmarkServeNaive8(b *testing.B) {
	cs, cpu := stdioPath(b, newVersion, false, benchproxyPath(), "naive", demoPath())
	concurrentOn(b, []target{{cs, "echo"}}, 8, cpu)
}

// BenchmarkServeDirectOld8 is BenchmarkServeDirect8 for a 2025-11-25 client.
func BenchmarkServeDirectOld8(b *testing.B) { serveDirect(b, oldVersion, 8) }

// BenchmarkServeFloorOld8 is BenchmarkServeFloor8 for a 2025-11-25 client.
func BenchmarkServeFloorOld8(b *testing.B) { serveFloor(b, oldVersion, 8) }

// BenchmarkServeGatewayOld8 is BenchmarkServeGateway8 for a 2025-11-25
// client.
func BenchmarkServeGatewayOld8(b *testing.B) { serveGateway(b, oldVersion, gatewayConfig(b, 1), 8) }

// spread is the number of servers the Spread benchmarks call.
const spread = 50

// BenchmarkSpreadDirect8 is a client calling 50 stdio servers directly (a
// session each), calls spread over them, 8 concurrent callers: the
// baseline for BenchmarkSpreadGateway8.
func BenchmarkSpreadDirect8(b *testing.B) {
	var targets []target
	for range spread {
		cs, _ := stdioPath(b, newVersion, true, demoPath())
		targets = append(targets, target{cs, "echo"})
	}
	concurrentOn(b, targets, 8, nil)
}

// BenchmarkSpreadGateway8 is one session to `mcphost serve` in front of the
// same 50 servers, calls spread over them.
func BenchmarkSpreadGateway8(b *testing.B) {
	cs, cpu := stdioPath(b, newVersion, false, mcphostPath(), "--config", gatewayConfig(b, spread), "serve")
	var targets []target
	for i := range spread {
		targets = append(targets, target{cs, fmt.Sprintf("mcp__s%d__echo", i)})
	}
	// The servers connect concurrently: wait until every one's tools are served.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n := 0
		for t, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				b.Fatal(err)
			}
			if strings.HasSuffix(t.Name, "__echo") {
				n++
			}
		}
		if n == spread {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d servers' tools served after a minute", n, spread)
		}
	}
	concurrentOn(b, targets, 8, map[string]int{midCPU: cpu[midCPU]})
}

// The HTTP front: a go-sdk client over streamable HTTP (2025-11-25, with a
// session), 8 concurrent callers on one session.

// httpSession connects a go-sdk client to url, at 2025-11-25.
func httpSession(b *testing.B, url string) *mcp.ClientSession {
	return httpSessionAt(b, url, oldVersion)
}

// httpSessionAt connects a go-sdk client to url at the given version.
func httpSessionAt(b *testing.B, url, version string) *mcp.ClientSession {
	b.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: benchHTTPClient}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchHTTPClient is the HTTP client of the benchmarks' sessions: Go's
// default transport (which the go-sdk uses when given none: it keeps 2 idle
// connections per host, so 8 concurrent callers open new ones), with its
// connections counted (clientDials). BENCH_HTTP_IDLE=N keeps N instead.
var benchHTTPClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if n, err := strconv.Atoi(os.Getenv("BENCH_HTTP_IDLE")); err == nil && n > 0 {
		t.MaxIdleConnsPerHost = n
	}
	dial := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		clientDials.Add(1)
		return dial(ctx, network, addr)
	}
	return &http.Client{Transport: t}
}()

// clientDials counts the TCP connections the benchmarks' HTTP clients
// opened (reported per call as client-dials/call: a new connection costs
// both ends a handshake and the server an accept).
var clientDials atomic.Int64

// listen starts argv, which listens on 127.0.0.1:port, and waits for it.
// It is stopped by an interrupt (so that a gateway writes its CPU profile),
// and killed if it has not exited a few seconds later.
func listen(b *testing.B, port int, env []string, argv ...string) int {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			cmd.Wait()
		}()
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	testbin.WaitListening(b, port)
	return cmd.Process.Pid
}

// gatewayEnv is the environment of an mcphost gateway process: a home of
// its own in dir and no managed configuration; and, when
// BENCH_CPUPROFILE_DIR is set, a CPU profile written at its exit to
// DIR/<benchmark>.prof (the last run of a benchmark wins: the timed one).
// BENCH_GATEWAY_CPUPROFILE=FILE still names one file for every gateway.
func gatewayEnv(b *testing.B, dir string) []string {
	env := []string{"HOME=" + dir, "MCPHOST_MANAGED_CONFIG=" + filepath.Join(dir, "none.hcl")}
	if d := os.Getenv("BENCH_CPUPROFILE_DIR"); d != "" {
		name := strings.NewReplacer("/", "_", " ", "_").Replace(b.Name())
		env = append(env, "MCPHOST_CPUPROFILE="+filepath.Join(d, name+".prof"))
	} else if p := os.Getenv("BENCH_GATEWAY_CPUPROFILE"); p != "" {
		env = append(env, "MCPHOST_CPUPROFILE="+p)
	}
	return env
}

// BenchmarkHTTPDirect8 is the demo server over streamable HTTP: the
// baseline for BenchmarkHTTPGateway8.
func BenchmarkHTTPDirect8(b *testing.B) { httpDirect(b, 8) }

// httpDirect runs the demo server over streamable HTTP (with sessions) and
// `callers` concurrent callers of a 2025-11-25 client on it.
func httpDirect(b *testing.B, callers int) {
	port := testbin.FreePort(b)
	pid := listen(b, port, nil, demoPath(), "-http", fmt.Sprintf("127.0.0.1:%d", port))
	cs := httpSession(b, fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	concurrentOn(b, []target{{cs, "echo"}}, callers, map[string]int{srvCPU: pid})
}

// BenchmarkHTTPGateway8 is `mcphost serve --http` in front of the demo
// server on stdio.
func BenchmarkHTTPGateway8(b *testing.B) { httpGateway(b, gatewayConfig(b, 1), 8) }

// httpGateway runs `mcphost serve --http` on configuration cfg (one demo
// server) and `callers` concurrent callers of a 2025-11-25 client through it.
func httpGateway(b *testing.B, cfg string, callers int) {
	port := testbin.FreePort(b)
	pid := listen(b, port, gatewayEnv(b, b.TempDir()),
		mcphostPath(), "--config", cfg, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	cs := httpSession(b, fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	call(b, cs, "mcp__demo__echo")
	servers := demoServers(b, pid)
	// The gateway speaks 2026-07-28 upstream; this 2025-11-25 client's
	// calls go through the second session it opens at 2025-11-25
	// (transparency for 2025 clients): the server process that serves them
	// is the one started last.
	if len(servers) == 0 || len(servers) > 2 {
		b.Fatalf("the gateway runs %d demo servers, want one, or one per protocol era", len(servers))
	}
	srv := newest(b, servers)
	concurrentOn(b, []target{{cs, "mcp__demo__echo"}}, callers, map[string]int{midCPU: pid, srvCPU: srv})
}

// The gateway hop with telemetry on: traces of every request sampled and
// exported by OTLP/HTTP (to a sink in this process that answers each export
// with an empty success), metrics exported the same way and served at
// /metrics (prometheus = true) — against the same gateway with telemetry off.

// telemetryConfig returns gatewayConfig(b, 1) with a telemetry block that
// turns everything on, exporting to an OTLP sink on loopback.
func telemetryConfig(b *testing.B) string {
	b.Helper()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(sink.Close)
	return gatewayConfig(b, 1, fmt.Sprintf("telemetry {\n  otlp_endpoint = %q\n  prometheus = true\n  sample_ratio = 1\n}\n", sink.URL))
}

// BenchmarkServeGatewayTel8 is BenchmarkServeGateway8 with telemetry on.
func BenchmarkServeGatewayTel8(b *testing.B) { serveGateway(b, newVersion, telemetryConfig(b), 8) }

// BenchmarkServeGateway1 is BenchmarkServeGateway8 with one caller: the
// hop's latency with CPU to spare, the baseline for BenchmarkServeGatewayTel1.
func BenchmarkServeGateway1(b *testing.B) { serveGateway(b, newVersion, gatewayConfig(b, 1), 1) }

// BenchmarkServeGatewayTel1 is BenchmarkServeGateway1 with telemetry on.
func BenchmarkServeGatewayTel1(b *testing.B) { serveGateway(b, newVersion, telemetryConfig(b), 1) }

// BenchmarkHTTPGatewayTel8 is BenchmarkHTTPGateway8 with telemetry on.
func BenchmarkHTTPGatewayTel8(b *testing.B) { httpGateway(b, telemetryConfig(b), 8) }

// BenchmarkHTTPGatewayPinned8 is BenchmarkHTTPGateway8 with settings {
// protocol_version = "2025-11-25" }: the upstream session in the era of
// the (2025-11-25) clients.
func BenchmarkHTTPGatewayPinned8(b *testing.B) {
	httpGateway(b, gatewayConfig(b, 1, "settings {\n  protocol_version = \"2025-11-25\"\n}\n"), 8)
}

// BenchmarkHTTPDirectNew8 is a 2026-07-28 client and the demo server over
// streamable HTTP without sessions (the go-sdk serves 2026-07-28 over HTTP
// only so): the baseline for BenchmarkHTTPUpstream8.
func BenchmarkHTTPDirectNew8(b *testing.B) { httpDirectNew(b, 8) }

// httpDirectNew runs the demo server over stateless streamable HTTP and
// `callers` concurrent callers of a 2026-07-28 client on it.
func httpDirectNew(b *testing.B, callers int) {
	port := testbin.FreePort(b)
	pid := listen(b, port, nil, demoPath(), "-http", fmt.Sprintf("127.0.0.1:%d", port), "-stateless")
	cs := httpSessionAt(b, fmt.Sprintf("http://127.0.0.1:%d/mcp", port), newVersion)
	concurrentOn(b, []target{{cs, "echo"}}, callers, map[string]int{srvCPU: pid})
}

// BenchmarkHTTPUpstream8 is the same client → `mcphost serve --http` → the
// same server over streamable HTTP (the relay's HTTP lane).
func BenchmarkHTTPUpstream8(b *testing.B) { httpUpstream(b, 8) }

// httpUpstream runs the demo server over stateless streamable HTTP,
// `mcphost serve --http` in front of it, and `callers` concurrent callers
// of a 2026-07-28 client through the gateway.
func httpUpstream(b *testing.B, callers int) {
	up := testbin.FreePort(b)
	srv := listen(b, up, nil, demoPath(), "-http", fmt.Sprintf("127.0.0.1:%d", up), "-stateless")
	dir := b.TempDir()
	cfg := filepath.Join(dir, "gateway.hcl")
	src := fmt.Sprintf("server \"demo\" {\n  transport = \"http\"\n  url = \"http://127.0.0.1:%d/mcp\"\n}\npermissions {\n  allow = [\"mcp__demo\"]\n}\n", up)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	port := testbin.FreePort(b)
	pid := listen(b, port, gatewayEnv(b, dir),
		mcphostPath(), "--config", cfg, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	cs := httpSessionAt(b, fmt.Sprintf("http://127.0.0.1:%d/mcp", port), newVersion)
	concurrentOn(b, []target{{cs, "mcp__demo__echo"}}, callers, map[string]int{midCPU: pid, srvCPU: srv})
}

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

// BenchmarkWSRelay8 is the gateway's relay over the transport-ws plugin
// (host.RelayCall: the call's bytes go through the plugin's raw lane, and
// the response comes back undecoded), 8 concurrent callers.
func BenchmarkWSRelay8(b *testing.B) {
	h := pluginHost(b, wsDemo(b))
	ctx := context.Background()
	args, _ := json.Marshal(echoArgs)
	relay := func() {
		resp, handled, err := h.Serving().RelayCall(ctx, "mcp__ws__echo", args, host.RelayOptions{ProtocolVersion: conn.NewProtocol})
		if err != nil || !handled || len(resp) == 0 {
			b.Fatalf("relayed call: %v %v", handled, err)
		}
	}
	if _, err := h.Connections().Session(ctx, "ws"); err != nil {
		b.Fatal(err)
	}
	concurrentCalls(b, []func(){relay}, 8, nil)
}

// BenchmarkPluginStart measures starting the transport-ws plugin in a new
// runtime until its first RPC answers: the check of its verified private
// copy (kept across runtimes), the supervisor and the plugin's exec, the
// go-plugin handshake with AutoMTLS, and GetInfo.
func BenchmarkPluginStart(b *testing.B) { pluginStart(b, "transport-ws") }

// BenchmarkPluginStartStatic is BenchmarkPluginStart for the auth-static
// test plugin (a plugin that only answers): the same binary as
// BenchmarkPluginFloor, through mcphost's runtime.
func BenchmarkPluginStartStatic(b *testing.B) { pluginStart(b, "auth-static") }

// pluginStart starts the named plugin in a new runtime, b.N times, until its
// first RPC answers. (The verified copy is kept across runtimes, in this run's
// own cache directory: the first start makes it.)
func pluginStart(b *testing.B, name string) {
	path := filepath.Join(binDir, "plugins", name)
	sum, err := plugins.FileSHA256(path)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &config.Config{Plugins: []*config.Plugin{{Name: name, Path: path, SHA256: sum}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rt, err := plugins.New(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.Info(context.Background(), name); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		rt.Close()
		b.StartTimer()
	}
}

// BenchmarkPluginFloor is the floor of starting a plugin: go-plugin's own
// client (gRPC, AutoMTLS) execs the auth-static test plugin where it lies
// (no private copy, no checksum, no supervisor) until its first RPC answers.
func BenchmarkPluginFloor(b *testing.B) {
	path := filepath.Join(binDir, "plugins", "auth-static")
	for i := 0; i < b.N; i++ {
		client := goplugin.NewClient(&goplugin.ClientConfig{
			HandshakeConfig:  sdk.Handshake,
			VersionedPlugins: sdk.ClientPlugins(),
			Cmd:              exec.Command(path),
			AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
			AutoMTLS:         true,
			Logger:           hclog.NewNullLogger(),
		})
		rpc, err := client.Client()
		if err != nil {
			b.Fatal(err)
		}
		raw, err := rpc.Dispense(sdk.KindInfo)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := raw.(sdk.InfoClient).GetInfo(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		client.Kill()
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

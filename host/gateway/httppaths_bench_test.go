//go:build linux

package gateway_test

// BenchmarkHTTPPaths measures the gateway's two HTTP paths against a
// client calling the server directly, in one run with the sides
// interleaved (issue 34's goals: `serve --http` calls/s ≥ ×0.95 and p50 ≤
// ×1.15 of direct; the HTTP-upstream path calls/s ≥ ×0.85 of direct; the
// gateway's CPU per call below the upstream server's):
//
//	go test -run XXX -bench HTTPPaths -benchtime 400x ./host/gateway/
//
// A go-sdk client (2025-11-25, in a session, or 2026-07-28, stateless)
// calls the demo server's echo tool from 1 or 8 goroutines:
//   - direct: the demo server over streamable HTTP (a child process on
//     127.0.0.1; stateless for 2026-07-28, as the go-sdk serves it only so);
//   - front: the gateway's HTTP handler (in this process, on 127.0.0.1)
//     with the demo server on stdio (a child process) upstream: the path of
//     `serve --http` (make bench's HTTPGateway8);
//   - upstream: the same handler with the demo server over streamable HTTP
//     (stateless, a child process) upstream: the relay's HTTP lane
//     (make bench's HTTPUpstream8). Its server is stateless for both eras
//     (the gateway's session is 2026-07-28), which costs that server about
//     twice the CPU of a stateful one: for the HTTP-upstream goal, read the
//     2026-07-28 rows, where direct is stateless too.
//
// Each round makes b.N calls on each path, in a rotating order, so that
// drift on the shared machine falls on all alike; the figures are medians
// over the rounds (httpPathRounds), the ratios medians of the rounds'
// ratios. The CPU of this process during a path's calls is the client's
// (direct) or the client's and the gateway's: gw-cpu-µs/call is the
// difference, per call, and so are gw-allocs/call and gw-B/call (the heap
// allocations); srv-cpu-µs/call is the upstream server process's.
// With -cpuprofile, the profile holds the client's and the gateway's work:
// focus on host/... (pprof -focus).

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/cputime"
	"github.com/mcphost/mcphost/internal/testing/demotest"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// httpPathRounds is how many rounds BenchmarkHTTPPaths makes of each path.
const httpPathRounds = 7

// httpPathMessage is what the echo tool is asked to echo.
const httpPathMessage = "benchmark payload: the quick brown fox jumps over the lazy dog"

// httpPathDemo starts the test binary as the demo server on streamable
// HTTP (stateless or not) and returns its URL and process id.
func httpPathDemo(b *testing.B, stateless bool) (string, int) {
	b.Helper()
	port := testbin.FreePort(b)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-http", fmt.Sprintf("127.0.0.1:%d", port)}
	if stateless {
		args = append(args, "-stateless")
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), demoserver.ChildEnv+"=1")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(b, port)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), cmd.Process.Pid
}

// httpPathGateway is a gateway over the demo server on stdio ("a") and over
// streamable HTTP at upstream ("u"), served by its HTTP handler on
// 127.0.0.1 without authentication; it returns the handler's URL and the
// stdio server's process id.
func httpPathGateway(b *testing.B, upstream string) (*gateway.Gateway, string, int) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var pid int
	var mu sync.Mutex
	u := &config.Server{Name: "u", Transport: config.TransportHTTP, URL: upstream, Approved: true, ConnectTimeout: 10 * time.Second}
	h, err := host.New(&config.Config{Servers: []*config.Server{demotest.Server("a"), u}, DefaultMode: "allow_all"}, &host.Options{OutputDir: b.TempDir(),
		OnProcessStart: func(_ string, p int) {
			mu.Lock()
			pid = p
			mu.Unlock()
		}})
	if err != nil {
		b.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, nil)
	if p := g.Sync(ctx); len(p) > 0 {
		b.Fatal(p)
	}
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	b.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		h.Close()
	})
	mu.Lock()
	defer mu.Unlock()
	return g, srv.URL, pid
}

// httpPath is one path of BenchmarkHTTPPaths: a client session and the
// tool it calls.
type httpPath struct {
	name string
	cs   *mcp.ClientSession
	tool string
	srv  int // the upstream server's process
}

// httpPathRound is what one round of a path measured.
type httpPathRound struct {
	p50, callsPerSec, cpu, srvCPU float64
	allocs, bytes                 float64 // this process's, per call
}

// BenchmarkHTTPPaths is the gateway's HTTP front and HTTP-upstream lane
// against direct calls, interleaved (see the top of this file).
func BenchmarkHTTPPaths(b *testing.B) {
	upURL, upPID := httpPathDemo(b, true)
	g, gwURL, stdioPID := httpPathGateway(b, upURL)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		directURL, directPID := httpPathDemo(b, version >= "2026-07-28")
		connect := func(url string) *mcp.ClientSession {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close() })
			return cs
		}
		paths := []httpPath{
			{"direct", connect(directURL), "echo", directPID},
			{"front", connect(gwURL), "mcp__a__echo", stdioPID},
			{"upstream", connect(gwURL), "mcp__u__echo", upPID},
		}
		for _, callers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/callers=%d", version, callers), func(b *testing.B) {
				for _, p := range paths {
					for range 20 { // warm: connections, the relay's captured _meta
						httpPathCall(b, p)
					}
				}
				rounds := make([][]httpPathRound, len(paths))
				before := g.RelayedCalls()
				b.ResetTimer()
				for r := range httpPathRounds {
					for i := range paths {
						k := (r + i) % len(paths)
						rounds[k] = append(rounds[k], httpPathRun(b, paths[k], callers))
					}
				}
				b.StopTimer()
				if got, want := g.RelayedCalls()-before, uint64(2*httpPathRounds*b.N); got != want {
					b.Fatalf("%d calls relayed, want %d", got, want)
				}
				httpPathReport(b, paths, rounds)
			})
		}
	}
}

// httpPathCall makes one call on p.
func httpPathCall(b *testing.B, p httpPath) {
	res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: p.tool, Arguments: map[string]any{"message": httpPathMessage}})
	if err != nil || res.IsError {
		b.Fatal(p.name, err, res)
	}
}

// httpPathRun makes b.N calls on p from callers goroutines and returns
// what they measured.
func httpPathRun(b *testing.B, p httpPath, callers int) httpPathRound {
	lat := make([]time.Duration, b.N)
	var mu sync.Mutex
	next := 0
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0, srv0 := selfCPU(b), childCPU(b, p.srv)
	start := time.Now()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if n >= b.N {
					return
				}
				t0 := time.Now()
				httpPathCall(b, p)
				lat[n] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu, srv := selfCPU(b)-cpu0, childCPU(b, p.srv)-srv0
	runtime.ReadMemStats(&ms1)
	slices.Sort(lat)
	n := float64(b.N)
	return httpPathRound{
		p50:         float64(lat[len(lat)/2]) / float64(time.Microsecond),
		callsPerSec: n / elapsed.Seconds(),
		cpu:         float64(cpu) / float64(time.Microsecond) / n,
		srvCPU:      float64(srv) / float64(time.Microsecond) / n,
		allocs:      float64(ms1.Mallocs-ms0.Mallocs) / n,
		bytes:       float64(ms1.TotalAlloc-ms0.TotalAlloc) / n,
	}
}

// httpPathReport reports the medians of the rounds: each path's p50,
// calls/s and upstream CPU per call, the gateway paths' ratios to direct
// and the gateway's CPU per call.
func httpPathReport(b *testing.B, paths []httpPath, rounds [][]httpPathRound) {
	median := func(f func(i int) float64) float64 {
		v := make([]float64, httpPathRounds)
		for i := range v {
			v[i] = f(i)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	direct := rounds[0]
	for k, p := range paths {
		rs := rounds[k]
		b.ReportMetric(median(func(i int) float64 { return rs[i].p50 }), p.name+"-p50-µs")
		b.ReportMetric(median(func(i int) float64 { return rs[i].callsPerSec }), p.name+"-calls/s")
		b.ReportMetric(median(func(i int) float64 { return rs[i].srvCPU }), p.name+"-srv-cpu-µs/call")
		if k == 0 {
			continue
		}
		b.ReportMetric(median(func(i int) float64 { return rs[i].p50 / direct[i].p50 }), p.name+"/direct-p50")
		b.ReportMetric(median(func(i int) float64 { return rs[i].callsPerSec / direct[i].callsPerSec }), p.name+"/direct-calls/s")
		b.ReportMetric(median(func(i int) float64 { return rs[i].cpu - direct[i].cpu }), p.name+"-gw-cpu-µs/call")
		b.ReportMetric(median(func(i int) float64 { return rs[i].allocs - direct[i].allocs }), p.name+"-gw-allocs/call")
		b.ReportMetric(median(func(i int) float64 { return rs[i].bytes - direct[i].bytes }), p.name+"-gw-B/call")
	}
	b.ReportMetric(0, "ns/op") // (a round makes several paths' calls: see the metrics)
}

// selfCPU is this process's CPU time, user and system (processCPU,
// cputime_unix_test.go).
func selfCPU(b *testing.B) time.Duration {
	d, ok := cputime.Process()
	if !ok {
		b.Fatal("getrusage failed")
	}
	return d
}

// childCPU is process pid's CPU time, user and system (from
// /proc/PID/stat, in clock ticks of 10 ms).
func childCPU(b *testing.B, pid int) time.Duration {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis: state is 3rd,
	// utime the 14th, stime the 15th.
	f := strings.Fields(string(s[strings.LastIndexByte(string(s), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

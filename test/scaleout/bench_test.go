package scaleout_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/state/redisstate"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// BenchmarkReplicas measures the gateway scaled out (issue 16): calls/s,
// latency and CPU per call of 8 concurrent clients calling the stdio demo
// server's echo tool through `mcphost serve --http` replicas sharing a real
// redis-server (state { backend = "redis" }), for clients of both eras
// (stateless: 2026-07-28; session: 2025-11-25, its Mcp-Session-Id):
//
//   - 1replica/direct: the reference, measured in the same run: the
//     clients address the one replica directly;
//   - 1replica/haproxy: the same replica behind HAProxy (round robin);
//   - 3replicas/haproxy: three replicas behind HAProxy, no stickiness.
//
// CPU per call is the user and system time (/proc/PID/stat) of each kind
// of process over the timed loop, divided by the calls: the replicas with
// the processes they started (the demo servers), HAProxy, redis-server,
// and this process (the clients). Redis commands per call come from
// INFO commandstats (the benchmark's own INFO left out): requests that
// need no shared state should send none.
//
// What Redis adds to a request that needs it, at p50, sequential requests
// to replicas addressed directly (no queueing on the two cores):
//
//   - 3replicas/redis-ratelimit: the same 2026-07-28 call to three more
//     replicas started alike, one without a rate limit, one with gateway
//     { rate_limit { per_principal } } (one script call in Redis per
//     request) and one with max_concurrent too (a second one, the
//     release), in turn: the difference of their p50s;
//   - 3replicas/redis-session: a 2025-11-25 session opened on one replica,
//     whose next request reaches another that does not hold it yet (it
//     reads the session's record sess:<sid> and rebuilds the go-sdk
//     session from the sealed id), against requests to a replica holding
//     it. The difference includes the rebuild; Redis's share is the same
//     GET made from this process in the same loop (a probe that the rate-limit case checks against its
//     end-to-end difference).
//
// The clusters start once per group (seconds), not per b.N.
func BenchmarkReplicas(b *testing.B) {
	eras := []struct{ name, version string }{{"stateless", newProtocol}, {"session", oldProtocol}}
	b.Run("1replica", func(b *testing.B) {
		c := startCluster(b, 1, echoConfig, nil)
		for _, path := range []struct {
			name     string
			endpoint string
		}{{"direct", "http://" + c.reps[0].addr + "/mcp"}, {"haproxy", c.lb.URL() + "/mcp"}} {
			b.Run(path.name, func(b *testing.B) {
				for _, era := range eras {
					b.Run(era.name, func(b *testing.B) { benchCalls(b, c, path.endpoint, era.version) })
				}
			})
		}
	})
	b.Run("3replicas", func(b *testing.B) {
		c := startCluster(b, 3, echoConfig, nil)
		b.Run("haproxy", func(b *testing.B) {
			for _, era := range eras {
				b.Run(era.name, func(b *testing.B) { benchCalls(b, c, c.lb.URL()+"/mcp", era.version) })
			}
		})
		b.Run("redis-session", func(b *testing.B) { benchSessionElsewhere(b, c, c.reps[0], c.reps[1]) })
		// Three more replicas on the same Redis, started alike, so that the
		// only difference between them is the rate limit.
		plain := c.extraReplica(b, "plain", "")
		limited := c.extraReplica(b, "limited", `
gateway {
  rate_limit {
    per_principal = "1000000/s"
    burst         = 1000000
  }
}
`)
		capped := c.extraReplica(b, "capped", `
gateway {
  rate_limit {
    per_principal  = "1000000/s"
    burst          = 1000000
    max_concurrent = 1000
  }
}
`)
		b.Run("redis-ratelimit", func(b *testing.B) { benchRateLimit(b, c, plain, limited, capped) })
	})
}

// benchClients is how many clients call at once (the machine has 2 cores).
const benchClients = 8

// benchMessage is what the benchmarks' calls echo.
const benchMessage = "benchmark payload: the quick brown fox jumps over the lazy dog"

// echoConfig is the configuration of the measurements: the stdio demo
// server, every call allowed.
func echoConfig(*cluster) string {
	return fmt.Sprintf(`
permissions {
  default_mode = "allow_all"
}
server "demo" {
  command = %q
}
`, filepath.Join(binDir, "mcphost-demo"))
}

// benchCalls measures benchClients clients of version calling echo
// through endpoint.
func benchCalls(b *testing.B, c *cluster, endpoint, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sessions := make([]*mcp.ClientSession, benchClients)
	for i := range sessions {
		cs, err := c.connectTo(ctx, endpoint, version)
		if err != nil {
			b.Fatalf("connecting a %s client to %s: %v", version, endpoint, err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	// Warm-up: behind the balancer, every session reaches every replica
	// (where its first request rebuilds it from its id and reads its
	// record), so that the timed loop measures the steady state.
	var wg sync.WaitGroup
	errs := make(chan error, benchClients)
	for _, cs := range sessions {
		wg.Go(func() {
			for range 30 {
				if err := echo(ctx, cs, benchMessage); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	rdb := c.redisClient(b)
	procs := c.processes(b)
	cpu0 := procs.cpu()
	cmds0 := commandStats(b, rdb)
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	for _, cs := range sessions {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(lat)) {
					return
				}
				t0 := time.Now()
				if err := echo(ctx, cs, benchMessage); err != nil {
					errs <- err
					next.Store(int64(len(lat)))
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	cmds := commandStats(b, rdb).since(cmds0)
	cpu := procs.cpu().since(cpu0)
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "calls/s")
	b.ReportMetric(micros(percentile(lat, 50)), "p50-µs")
	b.ReportMetric(micros(percentile(lat, 99)), "p99-µs")
	cpu.report(b, n)
	b.ReportMetric(float64(cmds.total())/n, "redis-cmds/call")
	if cmds.total() > 0 {
		b.Logf("%d calls; Redis commands: %v", b.N, cmds)
	}
}

// benchSessionElsewhere measures what a 2025-11-25 session's request
// costs on a replica that does not hold the session (other) against one
// on a replica that does: per iteration a session opens on holder (raw
// HTTP, no go-sdk client: nothing but the requests below is sent), calls
// echo there, then twice on other (the first one reads the session's
// record in Redis (a GET) and rebuilds the go-sdk session from the sealed
// id), and ends (DELETE on holder).
//
// The first request elsewhere pays for the rebuild too, which is not
// Redis's: Redis's share is measured in the same loop as what the same
// GET (of a record of the same size, through the gateway's Redis
// backend, host/state/redisstate) take from this process right after the
// calls, when Redis and the machine are in the state the replica found
// them in. (benchRateLimit checks that such a probe agrees with what a
// round trip adds to a request end to end.)
func benchSessionElsewhere(b *testing.B, c *cluster, holder, other *replica) {
	rdb := c.redisClient(b)
	be := c.backend(b)
	ctx := context.Background()
	rec := []byte(`{"seen":1795423603021,"by":"0123456789abcdef"}`)
	if err := be.Put(ctx, "sess:probe", rec, time.Hour); err != nil {
		b.Fatal(err)
	}
	var held, moved, gets []time.Duration
	iteration := func() {
		sid := c.openSession(b, holder)
		held = append(held, c.timedEcho(b, holder, sid))
		moved = append(moved, c.timedEcho(b, other, sid))
		held = append(held, c.timedEcho(b, other, sid))
		t0 := time.Now()
		if _, err := be.Get(ctx, "sess:probe"); err != nil && !errors.Is(err, state.ErrNotFound) {
			b.Fatal(err)
		}
		gets = append(gets, time.Since(t0))
		c.endSession(b, holder, sid)
	}
	for range 20 {
		iteration()
	}
	held, moved, gets = held[:0], moved[:0], gets[:0]
	cmds0 := commandStats(b, rdb)
	b.ResetTimer()
	for range b.N {
		iteration()
	}
	b.StopTimer()
	cmds := commandStats(b, rdb).since(cmds0)
	hp, mp := percentile(held, 50), percentile(moved, 50)
	get := percentile(gets, 50)
	n := float64(b.N)
	b.ReportMetric(micros(hp), "p50-held-µs")
	b.ReportMetric(micros(mp), "p50-elsewhere-µs")
	b.ReportMetric(micros(mp-hp), "elsewhere-added-µs-p50")
	b.ReportMetric(micros(get), "get-µs-p50")
	b.ReportMetric(micros(get), "redis-added-µs-p50")
	// The probe's own GET left out.
	b.ReportMetric((float64(cmds.total())-n)/n, "redis-cmds/session")
	b.ReportMetric(cmds.serverMicros("get", "set"), "redis-server-µs/cmd")
	b.Logf("%d sessions (open, call on %s, two calls on %s, a probe's GET, DELETE); Redis commands: %v", b.N, holder.name, other.name, cmds)
}

// benchRateLimit measures what the shared rate limiter adds: 2026-07-28
// calls to plain (no rate_limit), limited (per_principal: one script call
// per request) and capped (with max_concurrent: a second one, the
// release), one after the other in turn, so that each triple shares the
// machine's moment; then, in the same loop, the limiter's Acquire through
// the gateway's Redis backend from this process (the probe
// benchSessionElsewhere relies on: it should agree with limited − plain).
// Sequential calls: the CPU per call includes the Go runtime's spinning
// between them, which a loaded replica does not pay.
func benchRateLimit(b *testing.B, c *cluster, plain, limited, capped *replica) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reps := []*replica{plain, limited, capped}
	var css []*mcp.ClientSession
	for _, r := range reps {
		cs, err := c.connectTo(ctx, "http://"+r.addr+"/mcp", newProtocol)
		if err != nil {
			b.Fatalf("connecting to %s: %v", r.name, err)
		}
		defer cs.Close()
		css = append(css, cs)
	}
	lim := c.backend(b).RateLimiter("probe", ratelimit.Options{Rate: 1e6, Burst: 1e6})
	lat := make([][]time.Duration, len(reps))
	var acquires []time.Duration
	round := func(i int) {
		for k := range reps {
			j := (i + k) % len(reps) // each first in turn
			t0 := time.Now()
			if err := echo(ctx, css[j], benchMessage); err != nil {
				b.Fatalf("%s: %v", reps[j].name, err)
			}
			lat[j] = append(lat[j], time.Since(t0))
		}
		t0 := time.Now()
		if _, _, reason, err := lim.Acquire(ctx, "probe"); err != nil || reason != 0 {
			b.Fatalf("Acquire: %v %v", reason, err)
		}
		acquires = append(acquires, time.Since(t0))
	}
	for i := range 60 {
		round(i)
	}
	for j := range lat {
		lat[j] = lat[j][:0]
	}
	acquires = acquires[:0]
	rdb := c.redisClient(b)
	cmds0 := commandStats(b, rdb)
	cpu0 := make([]time.Duration, len(reps))
	for j, r := range reps {
		cpu0[j] = treeCPU(r.pid())
	}
	b.ResetTimer()
	for i := range b.N {
		round(i)
	}
	b.StopTimer()
	cmds := commandStats(b, rdb).since(cmds0)
	n := float64(b.N)
	for j, r := range reps {
		b.ReportMetric(micros(treeCPU(r.pid())-cpu0[j])/n, "cpu-µs/call-"+r.name)
	}
	p := func(j int) time.Duration { return percentile(lat[j], 50) }
	b.ReportMetric(micros(p(0)), "p50-plain-µs")
	b.ReportMetric(micros(p(1)), "p50-limited-µs")
	b.ReportMetric(micros(p(2)), "p50-capped-µs")
	b.ReportMetric(micros(p(1)-p(0)), "redis-added-µs-p50")
	b.ReportMetric(micros(p(2)-p(0)), "redis-added-capped-µs-p50")
	b.ReportMetric(micros(percentile(acquires, 50)), "acquire-µs-p50")
	b.ReportMetric(micros(hotAcquire(b, lim, 1000)), "acquire-hot-µs-p50")
	// The probe's own script call left out.
	b.ReportMetric((float64(cmds["evalsha"].calls+cmds["eval"].calls)-n)/n, "redis-scripts/round")
	b.ReportMetric(cmds.serverMicros("evalsha", "eval"), "redis-server-µs/script")
	b.Logf("%d rounds (a call to each of %s, %s, %s, a probe's Acquire); Redis commands (those the scripts run included): %v", b.N, plain.name, limited.name, capped.name, cmds)
}

// backend returns the gateway's Redis backend (host/state/redisstate) on
// c's Redis, for the probes of this process.
func (c *cluster) backend(tb testing.TB) *redisstate.Backend {
	tb.Helper()
	be, err := redisstate.New(context.Background(), redisstate.Options{URL: c.redis.URL(), KeyPrefix: "scaleout:bench:", TokenBox: sealbox.Random().Box("bench"), PinBox: sealbox.Random().Box("bench pins")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { be.Close() })
	return be
}

// hotAcquire returns the p50 of n Acquires of l in a row: a round trip
// to Redis when both processes are running (no wake-up), for reference.
func hotAcquire(tb testing.TB, l state.RateLimiter, n int) time.Duration {
	ctx := context.Background()
	lat := make([]time.Duration, n)
	for i := range n {
		t0 := time.Now()
		release, _, reason, err := l.Acquire(ctx, "probe")
		if err != nil || reason != 0 {
			tb.Fatalf("Acquire: %v %v", reason, err)
		}
		lat[i] = time.Since(t0)
		release()
	}
	return percentile(lat, 50)
}

// extraReplica starts one more replica of c, not behind the balancer, on
// c's configuration with extra appended (same Redis, same keys); it is
// stopped when the benchmark ends.
func (c *cluster) extraReplica(tb testing.TB, name, extra string) *replica {
	tb.Helper()
	base, err := os.ReadFile(c.cfg)
	if err != nil {
		tb.Fatal(err)
	}
	cc := *c
	cc.cfg = filepath.Join(tb.TempDir(), "mcphost.hcl")
	if err := os.WriteFile(cc.cfg, append(base, extra...), 0o600); err != nil {
		tb.Fatal(err)
	}
	r := &replica{c: &cc, name: name, addr: fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(tb)), home: tb.TempDir()}
	tb.Cleanup(func() {
		r.stop(tb)
		if tb.Failed() {
			tb.Logf("%s's output:\n%s", r.name, tail(r.out.String(), 60))
		}
	})
	r.launch(tb)
	r.awaitReady(tb)
	return r
}

// connectTo opens a go-sdk client session of version on endpoint (a
// replica's or the balancer's), with the cluster's token and connections.
func (c *cluster) connectTo(ctx context.Context, endpoint, version string) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "scaleout-bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{c}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
}

// bearer sends the cluster's token on the cluster's connections, and does
// nothing else.
type bearer struct{ c *cluster }

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.c.token)
	return t.c.base.RoundTrip(r)
}

// exchange sends one raw request of a 2025-11-25 client to replica r
// directly (session sid, if set) and returns its status, its session id
// header and its body.
func (c *cluster) exchange(method string, r *replica, sid, body string) (int, string, []byte, error) {
	req, err := http.NewRequest(method, "http://"+r.addr+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", oldProtocol)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b, err
}

// openSession opens a 2025-11-25 session on r (initialize, initialized)
// and returns its id.
func (c *cluster) openSession(tb testing.TB, r *replica) string {
	status, sid, body, err := c.exchange(http.MethodPost, r, "", fmt.Sprintf(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"scaleout-bench","version":"1"}}}`, oldProtocol))
	if err != nil || status != http.StatusOK || sid == "" {
		tb.Fatalf("initialize on %s: %d %v, session %q: %s", r.name, status, err, sid, body)
	}
	status, _, body, err = c.exchange(http.MethodPost, r, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil || status != http.StatusAccepted {
		tb.Fatalf("initialized on %s: %d %v: %s", r.name, status, err, body)
	}
	return sid
}

// endSession ends session sid (DELETE on r).
func (c *cluster) endSession(tb testing.TB, r *replica, sid string) {
	status, _, body, err := c.exchange(http.MethodDelete, r, sid, "")
	if err != nil || status != http.StatusNoContent {
		tb.Fatalf("DELETE on %s: %d %v: %s", r.name, status, err, body)
	}
}

var echoCall = fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__demo__echo","arguments":{"message":%q}}}`, benchMessage)

// timedEcho calls echo on session sid at replica r and returns how long
// the exchange took.
func (c *cluster) timedEcho(tb testing.TB, r *replica, sid string) time.Duration {
	t0 := time.Now()
	status, _, body, err := c.exchange(http.MethodPost, r, sid, echoCall)
	d := time.Since(t0)
	if err != nil || status != http.StatusOK || !bytes.Contains(body, []byte(benchMessage)) || bytes.Contains(body, []byte(`"isError":true`)) {
		tb.Fatalf("echo on %s: %d %v: %s", r.name, status, err, body)
	}
	return d
}

// redisClient returns a client of c's Redis (one connection), closed at
// the end of the test.
func (c *cluster) redisClient(tb testing.TB) *redis.Client {
	tb.Helper()
	o, err := redis.ParseURL(c.redis.URL())
	if err != nil {
		tb.Fatal(err)
	}
	o.PoolSize, o.ClientName = 1, "scaleout-test"
	rdb := redis.NewClient(o)
	tb.Cleanup(func() { rdb.Close() })
	return rdb
}

// commands are Redis's commands executed, by name (INFO commandstats:
// "get", "set", "evalsha", "client|setname", …; a script's commands count
// too).
type commands map[string]cmdStat

type cmdStat struct{ calls, usec int64 }

// commandStats returns what rdb's server has executed so far.
func commandStats(tb testing.TB, rdb *redis.Client) commands {
	tb.Helper()
	s, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatalf("INFO commandstats: %v", err)
	}
	out := commands{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		// cmdstat_get:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "cmdstat_"), ":")
		if !ok {
			continue
		}
		var st cmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		out[name] = st
	}
	return out
}

// since returns the commands executed between before and cs, without the
// INFO commands that read them.
func (cs commands) since(before commands) commands {
	d := commands{}
	for name, st := range cs {
		if name == "info" {
			continue
		}
		if k := st.calls - before[name].calls; k != 0 {
			d[name] = cmdStat{k, st.usec - before[name].usec}
		}
	}
	return d
}

// total returns how many commands cs counts.
func (cs commands) total() int64 {
	var n int64
	for _, st := range cs {
		n += st.calls
	}
	return n
}

// serverMicros returns the time Redis spent executing each of the named
// commands, on average, in µs.
func (cs commands) serverMicros(names ...string) float64 {
	var calls, usec int64
	for _, name := range names {
		calls += cs[name].calls
		usec += cs[name].usec
	}
	if calls == 0 {
		return 0
	}
	return float64(usec) / float64(calls)
}

func (cs commands) String() string {
	names := slices.Sorted(maps.Keys(cs))
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%d", name, cs[name].calls)
	}
	return "[" + b.String() + "]"
}

// pid returns the process id of r's current run.
func (r *replica) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run.cmd.Process.Pid
}

// benchProcs are the processes of a cluster whose CPU is counted, by kind.
type benchProcs struct {
	replicas []int // each replica's process; the processes it started count with it
	haproxy  int
	redis    int
}

// processes finds c's processes: its replicas', its HAProxy (the one
// haproxy process this test process started) and its redis-server.
func (c *cluster) processes(tb testing.TB) *benchProcs {
	tb.Helper()
	p := &benchProcs{}
	for _, r := range c.reps {
		p.replicas = append(p.replicas, r.pid())
	}
	port := c.redis.Addr()[strings.LastIndexByte(c.redis.Addr(), ':')+1:]
	var lbs []int
	for _, pid := range children(os.Getpid()) {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		switch strings.TrimSpace(string(comm)) {
		case "haproxy":
			lbs = append(lbs, pid)
		case "redis-server":
			// redis-server sets its title to "redis-server 127.0.0.1:PORT".
			if strings.Contains(string(cmdline), ":"+port) {
				p.redis = pid
			}
		}
	}
	if len(lbs) != 1 || p.redis == 0 {
		tb.Fatalf("want one haproxy and the redis-server on port %s among this process's children: haproxy %v, redis %d", port, lbs, p.redis)
	}
	p.haproxy = lbs[0]
	return p
}

// cpuTimes are CPU times by kind of process.
type cpuTimes struct{ replicas, haproxy, redis, client time.Duration }

// cpu returns the CPU the processes have used so far.
func (p *benchProcs) cpu() cpuTimes {
	var t cpuTimes
	for _, pid := range p.replicas {
		t.replicas += treeCPU(pid)
	}
	t.haproxy = treeCPU(p.haproxy)
	t.redis = procCPU(p.redis)
	t.client = procCPU(os.Getpid())
	return t
}

func (t cpuTimes) since(before cpuTimes) cpuTimes {
	return cpuTimes{t.replicas - before.replicas, t.haproxy - before.haproxy, t.redis - before.redis, t.client - before.client}
}

// report reports t per call (n calls).
func (t cpuTimes) report(b *testing.B, n float64) {
	b.ReportMetric(micros(t.replicas)/n, "cpu-µs/call-replicas")
	b.ReportMetric(micros(t.haproxy)/n, "cpu-µs/call-haproxy")
	b.ReportMetric(micros(t.redis)/n, "cpu-µs/call-redis")
	b.ReportMetric(micros(t.client)/n, "cpu-µs/call-clients")
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// procCPU returns the user and system CPU time of process pid (all its
// threads), 0 if it is gone.
func procCPU(pid int) time.Duration {
	f := procStat(pid) // from the state, field 3: utime is field 14, stime 15
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// treeCPU is procCPU of pid and of its descendants.
func treeCPU(pid int) time.Duration {
	d := procCPU(pid)
	for _, kid := range children(pid) {
		d += treeCPU(kid)
	}
	return d
}

// percentile returns the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)*p/100]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

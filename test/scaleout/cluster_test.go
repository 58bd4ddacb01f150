package scaleout_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
	"github.com/mcphost/mcphost/internal/testing/testhaproxy"
	"github.com/mcphost/mcphost/internal/testing/testredis"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(reaped{m}, func(dir string) { binDir = dir })) }

// reaped runs the tests, then fails the run if any process they started
// is left: a child of the test process (redis-server, haproxy, a replica)
// or a process a replica started (its stdio servers, reparented when the
// replica was killed).
type reaped struct{ m *testing.M }

func (r reaped) Run() int {
	code := r.m.Run()
	if kids := children(os.Getpid()); len(kids) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: processes left behind by the tests: %v\n", describe(kids))
		code = 1
	}
	spawned.mu.Lock()
	pids := slices.Clone(spawned.pids)
	spawned.mu.Unlock()
	var left []int
	for _, pid := range pids {
		if alive(pid) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: processes of the replicas left behind: %v\n", describe(left))
		code = 1
	}
	return code
}

// The protocol versions of the two eras.
const (
	oldProtocol = "2025-11-25" // sessions (Mcp-Session-Id)
	newProtocol = "2026-07-28" // stateless
)

// cluster is one redis-server, n `mcphost serve --http` replicas of one
// configuration file sharing it (state { backend = "redis" }), each with
// a home of its own, and an HAProxy balancing requests over them round
// robin with no stickiness, checking /readyz.
type cluster struct {
	redis *testredis.Server
	lb    *testhaproxy.Proxy
	reps  []*replica
	token string // MCPHOST_SERVE_TOKEN
	cfg   string // the configuration file
	env   []string
	base  *http.Transport // the clients' connections
}

// replica is one `mcphost serve --http` on a fixed address; it may be
// killed and started again on it.
type replica struct {
	c    *cluster
	name string // HAProxy's name for it, its responses' X-Replica
	addr string // 127.0.0.1:port
	home string
	out  syncbuf.Buffer // every run's output

	mu   sync.Mutex
	run  *run
	kids []int // the processes the current run started (its stdio servers)
}

// run is one process of a replica.
type run struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once reaped
}

// spawned are the pids of every process the tests' replicas started, to
// check at the end that none outlived the test.
var spawned struct {
	mu   sync.Mutex
	pids []int
}

// sessionKey is a key for MCPHOST_SESSION_KEYS: 32 random bytes, standard
// base64.
func sessionKey() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// startCluster starts redis, the balancer in front of n replicas' addresses,
// and the replicas on the configuration a state block and config(c)
// make (it may use the balancer's URL); it returns once HAProxy sees every
// replica up. before, if set, runs once the configuration and Redis are
// there, before the replicas start.
func startCluster(t testing.TB, n int, config func(*cluster) string, before func(*cluster)) *cluster {
	t.Helper()
	requireTools(t)
	var tok [32]byte
	rand.Read(tok[:])
	c := &cluster{token: hex.EncodeToString(tok[:])}
	c.redis = testredis.Start(t, testredis.Options{Password: "redis-pw-" + rand.Text()})
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	c.base = base
	t.Cleanup(base.CloseIdleConnections)

	var addrs []string
	for i := range n {
		r := &replica{c: c, name: testhaproxy.ServerName(i), addr: fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t)), home: t.TempDir()}
		c.reps = append(c.reps, r)
		addrs = append(addrs, r.addr)
	}
	// First, so that the configuration can name its URL (the gateway's
	// public URL); the replicas are out of rotation until they answer.
	c.lb = testhaproxy.Start(t, testhaproxy.Options{Backends: addrs, HealthPath: "/readyz"})

	dir := t.TempDir()
	c.cfg = filepath.Join(dir, "mcphost.hcl")
	cfg := `settings {
  drain_timeout = "2s"
}
state {
  backend    = "redis"
  url        = env("SCALEOUT_REDIS_URL")
  key_prefix = "scaleout:"
}
` + config(c)
	if err := os.WriteFile(c.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// Two keys: the first seals, both open (as during a rotation).
	c.env = []string{
		"MCPHOST_SERVE_TOKEN=" + c.token,
		"MCPHOST_SESSION_KEYS=" + sessionKey() + "," + sessionKey(),
		"SCALEOUT_REDIS_URL=" + c.redis.URL(),
	}
	if before != nil {
		before(c)
	}
	for _, r := range c.reps {
		t.Cleanup(func() {
			r.stop(t)
			if t.Failed() {
				t.Logf("%s's output:\n%s", r.name, tail(r.out.String(), 60))
			}
		})
	}
	// Started together: each connects its servers before it listens.
	for _, r := range c.reps {
		r.launch(t)
	}
	for _, r := range c.reps {
		r.awaitReady(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, r := range c.reps {
		if err := c.lb.AwaitServer(ctx, r.name, true); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// requireTools fails the test, naming the command that installs them,
// when redis-server or haproxy is missing.
func requireTools(t testing.TB) {
	t.Helper()
	var missing []string
	for _, tool := range []struct{ name, fallback string }{{"redis-server", "/usr/bin/redis-server"}, {"haproxy", "/usr/sbin/haproxy"}} {
		if _, err := exec.LookPath(tool.name); err == nil {
			continue
		}
		if _, err := os.Stat(tool.fallback); err != nil {
			missing = append(missing, tool.name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%s not installed: the scale-out tests run the real ones. Install them with `make test-deps`, or as root: apt-get update && %s && %s",
			strings.Join(missing, " and "), testredis.InstallCommand, testhaproxy.InstallCommand)
	}
}

// command is `mcphost --config CFG args…` in a home of its own (nothing
// on disk shared with the other processes), with the cluster's
// environment.
func (c *cluster) command(home string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, "mcphost"), append([]string{"--config", c.cfg}, args...)...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"MCPHOST_CONFIG_DIR="+filepath.Join(home, "cfg"),
		"MCPHOST_MANAGED_CONFIG="+filepath.Join(home, "managed.hcl"))
	cmd.Env = append(cmd.Env, c.env...)
	return cmd
}

// login runs `mcphost auth login SERVER --no-browser` on the cluster's
// configuration (its tokens go to the shared state) and follows the URL it
// prints as a browser would: the authorization server redirects to the
// command's loopback callback.
func (c *cluster) login(t testing.TB, server string) {
	t.Helper()
	cmd := c.command(t.TempDir(), "auth", "login", server, "--no-browser")
	var out syncbuf.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(pw, &out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	var loginURL string
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "http://") {
			loginURL = l
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if loginURL == "" {
		t.Fatalf("auth login %s printed no login URL: %v\n%s", server, <-done, out.String())
	}
	resp, err := http.Get(loginURL) // (following the redirect to the callback)
	if err != nil {
		t.Fatalf("following the login URL: %v\n%s", err, out.String())
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("auth login %s: %v\n%s", server, err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("auth login %s did not end\n%s", server, out.String())
	}
}

// launch starts the replica's process.
func (r *replica) launch(t testing.TB) {
	t.Helper()
	cmd := r.c.command(r.home, "--log-level", "info", "serve", "--http", r.addr)
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &run{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	spawned.mu.Lock()
	spawned.pids = append(spawned.pids, cmd.Process.Pid)
	spawned.mu.Unlock()
	r.mu.Lock()
	r.run, r.kids = p, nil
	r.mu.Unlock()
}

// awaitReady polls the replica's /readyz until it answers 200, and notes
// the processes it started.
func (r *replica) awaitReady(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	p := r.run
	r.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if code, _ := r.readyz(); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 30 s; output:\n%s", r.name, r.out.String())
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready: %v\noutput:\n%s", r.name, p.cmd.ProcessState, r.out.String())
		case <-tick.C:
		}
	}
	kids := children(p.cmd.Process.Pid)
	spawned.mu.Lock()
	spawned.pids = append(spawned.pids, kids...)
	spawned.mu.Unlock()
	r.mu.Lock()
	r.kids = kids
	r.mu.Unlock()
}

// readyz returns the replica's /readyz status code and body.
func (r *replica) readyz() (int, string) {
	resp, err := http.Get("http://" + r.addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// kill ends the replica's process with SIGKILL (a crash) and waits until
// it and the processes it started are gone; it returns those processes.
func (r *replica) kill(t testing.TB) []int {
	t.Helper()
	r.mu.Lock()
	p, kids := r.run, r.kids
	r.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	awaitGone(t, kids, r.name+"'s servers after SIGKILL")
	return kids
}

// stop ends the replica (SIGTERM: a drain of 2 s; SIGKILL after 10 s)
// and checks that the processes it started are gone.
func (r *replica) stop(t testing.TB) {
	r.mu.Lock()
	p, kids := r.run, r.kids
	r.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not exit within 10 s of SIGTERM", r.name)
		p.cmd.Process.Kill()
		<-p.done
	}
	awaitGone(t, kids, r.name+"'s servers after SIGTERM")
}

// awaitGone polls until none of pids is alive (5 s at most).
func awaitGone(t testing.TB, pids []int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: processes %v still alive after 5 s", what, left)
			return
		}
		time.Sleep(20 * time.Millisecond)
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
		if fields := procStat(child); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// procStat returns the fields of /proc/pid/stat after the command name:
// state, ppid, ….
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func alive(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z"
}

func describe(pids []int) []string {
	var out []string
	for _, pid := range pids {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(b), "\x00", " ")))
	}
	return out
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// replicaNamed returns the replica HAProxy names name.
func (c *cluster) replicaNamed(name string) *replica {
	for _, r := range c.reps {
		if r.name == name {
			return r
		}
	}
	return nil
}

// tally counts one client's HTTP exchanges.
type tally struct {
	mu        sync.Mutex
	sent      int            // requests sent
	answered  int            // responses received (any status)
	failed    int            // requests without a response (transport errors)
	status5xx int            // responses with a 5xx status
	byReplica map[string]int // responses by the replica that answered
	deletes   []string       // "replica status" of each DELETE
	failures  []string       // what each request without a response was sent on, and its error
}

func newTally() *tally { return &tally{byReplica: map[string]int{}} }

func (t *tally) add(o *tally) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent += o.sent
	t.answered += o.answered
	t.failed += o.failed
	t.status5xx += o.status5xx
	t.failures = append(t.failures, o.failures...)
	for k, v := range o.byReplica {
		t.byReplica[k] += v
	}
}

func (t *tally) replicas() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.byReplica)
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Sprintf("HTTP requests %d, responses %d (5xx %d), no response %d, by replica %v", t.sent, t.answered, t.status5xx, t.failed, t.byReplica)
}

// transport is a client's http.RoundTripper: it sends the bearer token,
// counts every exchange in its tally by the replica that answered (the
// balancer's X-Replica header), and sends a request to a replica directly
// when route names one.
type transport struct {
	c     *cluster
	tally *tally
	// bearer is the token sent (the cluster's MCPHOST_SERVE_TOKEN when
	// empty).
	bearer string
	// route, if set, returns the replica a request (with its body) must
	// go to, bypassing the balancer, or nil for the balancer.
	route func(r *http.Request, body []byte) *replica
	// seen, if set, is told of each response, with the request's body.
	seen func(body []byte, replica string, resp *http.Response)
}

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	bearer := tr.bearer
	if bearer == "" {
		bearer = tr.c.token
	}
	r.Header.Set("Authorization", "Bearer "+bearer)
	var body []byte
	if r.Body != nil && (tr.route != nil || tr.seen != nil) {
		var err error
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	var direct *replica
	if tr.route != nil {
		if direct = tr.route(r, body); direct != nil {
			u := *r.URL
			u.Host, r.Host = direct.addr, direct.addr
			r.URL = &u
		}
	}
	t := tr.tally
	t.mu.Lock()
	t.sent++
	t.mu.Unlock()
	var got httptrace.GotConnInfo
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i }}))
	start := time.Now()
	resp, err := tr.c.base.RoundTrip(r)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.failed++
		conn := "no connection"
		if got.Conn != nil {
			conn = fmt.Sprintf("connection %s (reused %v, idle %v for %v)", got.Conn.LocalAddr(), got.Reused, got.WasIdle, got.IdleTime)
		}
		t.failures = append(t.failures, fmt.Sprintf("%s %s at %s on %s, after %v: %v", r.Method, r.URL.Host, start.Format("15:04:05.000"), conn, time.Since(start).Round(time.Millisecond), err))
		return nil, err
	}
	t.answered++
	name := resp.Header.Get(testhaproxy.ReplicaHeader)
	if direct != nil {
		name = direct.name
	}
	t.byReplica[name]++
	if resp.StatusCode >= 500 {
		t.status5xx++
	}
	if r.Method == http.MethodDelete {
		t.deletes = append(t.deletes, fmt.Sprintf("%s %d", name, resp.StatusCode))
	}
	if tr.seen != nil {
		tr.seen(body, name, resp)
	}
	return resp, nil
}

// client is one MCP client of the cluster, through the balancer.
type client struct {
	cs    *mcp.ClientSession
	tally *tally
}

// connect opens an MCP client session of version through the balancer
// with tr (a counting transport of its own when nil).
func (c *cluster) connect(ctx context.Context, version string, tr *transport, opts *mcp.ClientOptions) (*client, error) {
	if tr == nil {
		tr = &transport{c: c}
	}
	if tr.tally == nil {
		tr.tally = newTally()
	}
	tr.c = c
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scaleout-test", Version: "1"}, opts).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: c.lb.URL() + "/mcp", HTTPClient: &http.Client{Transport: tr}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	return &client{cs: cs, tally: tr.tally}, nil
}

// mustConnect is connect, failing the test on an error.
func (c *cluster) mustConnect(t testing.TB, version string, tr *transport, opts *mcp.ClientOptions) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := c.connect(ctx, version, tr, opts)
	if err != nil {
		t.Fatalf("connecting a %s client through the balancer: %v", version, err)
	}
	t.Cleanup(func() { cl.cs.Close() })
	return cl
}

// echo calls the demo server's echo tool and checks its answer.
func echo(ctx context.Context, cs *mcp.ClientSession, msg string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return err
	}
	if got := textOf(res); res.IsError || got != msg {
		return fmt.Errorf("echo %q answered %q (isError %v)", msg, got, res.IsError)
	}
	return nil
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// post sends one JSON-RPC message to replica r directly on session sid
// and returns the status and body.
func (c *cluster) post(r *replica, sid, body string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+r.addr+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", err
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
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// jsonrpcKind says what one JSON-RPC message body is: "request",
// "notification", "response", or "" (not one message).
func jsonrpcKind(body []byte) (kind, method string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "", ""
	}
	switch {
	case m.Method != "" && m.ID != nil:
		return "request", m.Method
	case m.Method != "":
		return "notification", m.Method
	case m.ID != nil && (m.Result != nil || m.Error != nil):
		return "response", ""
	}
	return "", ""
}

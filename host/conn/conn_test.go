package conn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/supervisor"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

func TestMain(m *testing.M) {
	demoserver.RunIfChild()
	os.Exit(m.Run())
}

var demo = demotest.Server

func shell(name, script string) *config.Server {
	return &config.Server{Name: name, Transport: config.TransportStdio, Command: "/bin/sh", Args: []string{"-c", script},
		Approved: true, ConnectTimeout: 5 * time.Second}
}

func alive(pid int) bool {
	// A zombie still answers kill(0); read its state instead.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func waitDead(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive after %s", pid, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConnectCallAndClose(t *testing.T) {
	t.Parallel()
	var pid int
	m := NewManager([]*config.Server{demo("demo")}, &Options{OnProcessStart: func(_ string, p int) { pid = p }})
	ctx := context.Background()
	res, err := m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
		t.Errorf("echo = %q", got)
	}
	if st := m.Status()[0]; st.State != StateConnected || st.Server.Name != "demo" {
		t.Errorf("status = %+v", st)
	}
	m.Close()
	waitDead(t, pid, 2*time.Second)
}

func TestShutdownEscalatesToKillAndReachesTheGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// A server that ignores SIGINT and SIGTERM and has a child of its own.
	p, err := startProcess("/bin/sh", []string{"-c", `trap "" INT TERM; sleep 300 & echo $! > ` + pidFile + `; wait`},
		nil, "", newTailBuffer(1024))
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for i := 0; i < 200 && child == 0; i++ {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("child did not start")
	}
	start := time.Now()
	p.Close()
	took := time.Since(start)
	waitDead(t, p.pid, time.Second)
	waitDead(t, child, time.Second)
	// SIGINT (100 ms) and SIGTERM (400 ms) are ignored, so SIGKILL comes at ~500 ms.
	if took < sigintGrace+sigtermGrace {
		t.Errorf("closed in %s: the graces were skipped", took)
	}
	if took > 3*time.Second {
		t.Errorf("closing took %s", took)
	}
}

func TestCooperativeServerStopsOnSIGINT(t *testing.T) {
	t.Parallel()
	p, err := startProcess("/bin/sh", []string{"-c", `exec sleep 300`}, nil, "", newTailBuffer(1024))
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the shell has become sleep: a signal that arrives while the
	// shell is still starting may be handled by the shell instead.
	for i := 0; i < 200; i++ {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/comm"); strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	p.Close()
	if took := time.Since(start); took >= sigintGrace+sigtermGrace {
		t.Errorf("a process that exits on SIGINT took %s to close", took)
	}
	var ee *supervisor.ExitError
	if !errors.As(p.err, &ee) || ee.Signal != syscall.SIGINT {
		t.Errorf("exit status %v, want killed by SIGINT", p.err)
	}
}

func TestCrashFailsFastAndReconnectsOnNextUse(t *testing.T) {
	t.Parallel()
	var pids []int
	m := NewManager([]*config.Server{demo("demo")}, &Options{OnProcessStart: func(_ string, p int) { pids = append(pids, p) }})
	defer m.Close()
	ctx := context.Background()
	if _, err := m.Session(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}}, nil)
	if err == nil {
		t.Fatal("a call whose server crashed succeeded")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the failed call took %s", took)
	}
	waitDead(t, pids[0], 2*time.Second) // reaped, not a zombie
	deadline := time.Now().Add(5 * time.Second)
	for m.Get("demo").State() == StateConnected && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := m.Get("demo").Status(); st.State != StatePending || !strings.Contains(st.Error, "crashing on request") {
		t.Errorf("after the crash: state %s, error %q (want pending, with the server's stderr)", st.State, st.Error)
	}
	res, err := m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "back"}}, nil)
	if err != nil {
		t.Fatalf("call after crash: %v", err)
	}
	if res.Content[0].(*mcp.TextContent).Text != "back" || len(pids) != 2 {
		t.Errorf("result %v, %d process starts", res.Content, len(pids))
	}
}

func TestFailedStartShowsStderrAndOthersWork(t *testing.T) {
	t.Parallel()
	m := NewManager([]*config.Server{
		shell("broken", `echo "fatal: missing API key" >&2; exit 3`),
		demo("good"),
		{Name: "off", Transport: config.TransportStdio, Command: "false", Disabled: true, Approved: true},
		{Name: "unapproved", Transport: config.TransportStdio, Command: "false"},
		{Name: "remote", Transport: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp", Approved: true, ConnectTimeout: 5 * time.Second},
	}, nil)
	defer m.Close()
	m.ConnectAll(context.Background(), nil)
	got := map[string]Status{}
	for _, st := range m.Status() {
		got[st.Name] = st
	}
	if st := got["broken"]; st.State != StateFailed || !strings.Contains(st.Error, "fatal: missing API key") {
		t.Errorf("broken: %s %q", st.State, st.Error)
	}
	if st := got["good"]; st.State != StateConnected {
		t.Errorf("good: %s %q", st.State, st.Error)
	}
	if st := got["off"]; st.State != StateDisabled {
		t.Errorf("off: %s", st.State)
	}
	if st := got["unapproved"]; st.State != StateDisabled || !strings.Contains(st.Error, "config approve unapproved") {
		t.Errorf("unapproved: %s %q", st.State, st.Error)
	}
	if st := got["remote"]; st.State != StateFailed || !strings.Contains(st.Error, "connection refused") {
		t.Errorf("remote: %s %q", st.State, st.Error)
	}
	// A failed server is not retried before its backoff.
	_, err := m.Session(context.Background(), "broken")
	if err == nil || !strings.Contains(err.Error(), "next attempt in") {
		t.Errorf("immediate retry: %v", err)
	}
	if _, err := m.Session(context.Background(), "nope"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown server: %v", err)
	}
}

func TestChildEnvironmentIsExplicit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	host := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/x", "CANARY_SECRET": "leak", "WANTED": "yes"}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	s := shell("envdump", `env > `+out+`; exit 1`)
	s.InheritEnv = []string{"WANTED"}
	s.Env = map[string]string{"CONFIGURED": "1"}
	m := NewManager([]*config.Server{s}, &Options{LookupEnv: lookup})
	defer m.Close()
	m.Session(context.Background(), "envdump")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := string(b)
	for _, want := range []string{"PATH=/usr/bin:/bin", "HOME=/home/x", "WANTED=yes", "CONFIGURED=1"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("child env lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "CANARY_SECRET") {
		t.Errorf("host variable leaked into the child:\n%s", env)
	}
}

func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	s := shell("silent", `exec sleep 300`) // never answers initialize
	s.ConnectTimeout = 300 * time.Millisecond
	m := NewManager([]*config.Server{s}, nil)
	defer m.Close()
	_, err := m.Session(context.Background(), "silent")
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestOversizedLineIsAnErrorNotACrash(t *testing.T) {
	t.Parallel()
	// A server that answers with a 100 MB line.
	s := shell("huge", `head -c 104857600 /dev/zero | tr '\0' 'a'; sleep 5`)
	m := NewManager([]*config.Server{s, demo("ok")}, nil)
	defer m.Close()
	if _, err := m.Session(context.Background(), "huge"); err == nil {
		t.Fatal("connected to a server sending garbage")
	}
	if _, err := m.CallTool(context.Background(), "ok", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}, nil); err != nil {
		t.Errorf("the other server was affected: %v", err)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	b := newTailBuffer(8)
	b.Write([]byte("hello "))
	b.Write([]byte("world"))
	if got := b.String(); got != "…lo world" {
		t.Errorf("tail = %q", got)
	}
	b.Write([]byte(strings.Repeat("z", 20)))
	if got := b.String(); got != "…zzzzzzzz" {
		t.Errorf("tail = %q", got)
	}
}

func TestKill9DuringCallFailsFast(t *testing.T) {
	t.Parallel()
	var pid int
	m := NewManager([]*config.Server{demo("demo")}, &Options{OnProcessStart: func(_ string, p int) { pid = p }})
	defer m.Close()
	ctx := context.Background()
	if _, err := m.Session(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"milliseconds": 30000}}, nil)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if pid <= 0 {
		t.Fatalf("no server pid (%d)", pid) // kill(0) would signal the test's own group
	}
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the call succeeded")
		}
	case <-time.After(time.Second):
		t.Fatal("the call did not fail within 1 s of the server's death")
	}
	waitDead(t, pid, time.Second) // reaped: no zombie
}

func TestArgumentsAreNotShellInterpreted(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "pwned")
	s := &config.Server{Name: "echo", Transport: config.TransportStdio, Command: "/bin/echo",
		Args: []string{"; touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`"}, Approved: true, ConnectTimeout: 2 * time.Second}
	m := NewManager([]*config.Server{s}, nil)
	defer m.Close()
	m.Session(context.Background(), "echo") // echo is no MCP server: this fails
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an argument was run by a shell")
	}
}

func TestConcurrencyCapPerServer(t *testing.T) {
	t.Parallel()
	m := NewManager([]*config.Server{demo("demo")}, &Options{MaxConcurrentCalls: 2})
	defer m.Close()
	ctx := context.Background()
	if _, err := m.Session(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	// Two slow calls hold both slots; a third must wait for one of them.
	for i := 0; i < 2; i++ {
		go m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"milliseconds": 600, "steps": 1}}, nil)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if _, err := m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}, nil); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("the third call ran after %s, without waiting for a slot", waited)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	for i := 0; i < 2; i++ {
		go m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"milliseconds": 600, "steps": 1}}, nil)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := m.CallTool(cctx, "demo", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a caller waiting for a slot ignored its deadline: %v", err)
	}
}

func TestUnauthorizedServerNeedsAuth(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	m := NewManager([]*config.Server{{Name: "locked", Transport: config.TransportHTTP, URL: srv.URL + "/mcp", Approved: true, ConnectTimeout: 5 * time.Second}}, nil)
	defer m.Close()
	_, err := m.Session(context.Background(), "locked")
	if !errors.Is(err, ErrNeedsAuth) {
		t.Fatalf("err = %v, want ErrNeedsAuth", err)
	}
	// No oauth or auth block: a login cannot help, so the advice is to
	// configure one, not to run `mcphost auth login`.
	if st := m.Get("locked").Status(); st.State != StateNeedsAuth || !strings.Contains(st.Error, "no `oauth {}` or `auth \"SCHEME\" {}` block") || strings.Contains(st.Error, "run `mcphost auth login") {
		t.Errorf("status %s %q", st.State, st.Error)
	}
	// The state is cached: no new request within the TTL.
	before := hits.Load()
	if _, err := m.Session(context.Background(), "locked"); !errors.Is(err, ErrNeedsAuth) {
		t.Errorf("second attempt: %v", err)
	}
	if hits.Load() != before {
		t.Errorf("needs-auth was not cached: %d more requests", hits.Load()-before)
	}
}

func TestStaticHeadersAndNoRedirects(t *testing.T) {
	t.Parallel()
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request followed a redirect to another origin (Authorization %q)", r.Header.Get("Authorization"))
	}))
	defer canary.Close()
	var gotHeader atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader.Store(r.Header.Get("X-Api-Key"))
		http.Redirect(w, r, canary.URL+"/mcp", http.StatusFound)
	}))
	defer srv.Close()
	m := NewManager([]*config.Server{{Name: "r", Transport: config.TransportHTTP, URL: srv.URL + "/mcp",
		Headers: map[string]string{"X-Api-Key": "k1", "Authorization": "Bearer secret"}, Approved: true, ConnectTimeout: 5 * time.Second}}, nil)
	defer m.Close()
	if _, err := m.Session(context.Background(), "r"); err == nil {
		t.Fatal("connected through a redirect")
	}
	if gotHeader.Load() != "k1" {
		t.Errorf("static header = %v", gotHeader.Load())
	}
}

// TestSessionExpiryReconnectsAndRetriesOnce: a streamable HTTP server that
// forgets the session (a restart) answers 404; the call is retried once on a
// new session and succeeds.
func TestSessionExpiryReconnectsAndRetriesOnce(t *testing.T) {
	t.Parallel()
	newHandler := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demoserver.New(nil) }, nil)
	}
	var current atomic.Value
	current.Store(newHandler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		current.Load().(http.Handler).ServeHTTP(w, r)
	}))
	defer srv.Close()
	m := NewManager([]*config.Server{{Name: "web", Transport: config.TransportHTTP, URL: srv.URL, Approved: true, ConnectTimeout: 5 * time.Second}}, nil)
	defer m.Close()
	ctx := context.Background()
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "one"}}
	if _, err := m.CallTool(ctx, "web", echo, nil); err != nil {
		t.Fatal(err)
	}
	first, _ := m.Session(ctx, "web")
	current.Store(newHandler()) // the server "restarts": every session is gone
	res, err := m.CallTool(ctx, "web", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "two"}}, nil)
	if err != nil {
		t.Fatalf("call after session expiry: %v", err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "two" {
		t.Errorf("echo = %q", got)
	}
	if second, _ := m.Session(ctx, "web"); second == first {
		t.Error("the expired session was not replaced")
	}
}

// TestCrashLoopBacksOff: a server that dies again soon after it was
// restarted is reconnected only after a backoff.
func TestCrashLoopBacksOff(t *testing.T) {
	t.Parallel()
	m := NewManager([]*config.Server{demo("demo")}, nil)
	defer m.Close()
	ctx := context.Background()
	crash := func() {
		m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}}, nil)
	}
	echo := func() error {
		_, err := m.CallTool(ctx, "demo", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}, nil)
		return err
	}
	crash()
	if err := echo(); err != nil {
		t.Fatalf("the first crash must be restarted at once: %v", err)
	}
	crash()
	err := echo()
	if err == nil || !strings.Contains(err.Error(), "next attempt in") {
		t.Fatalf("a second early crash was restarted at once: %v", err)
	}
	time.Sleep(Backoff(1) + 100*time.Millisecond)
	if err := echo(); err != nil {
		t.Errorf("no recovery after the backoff: %v", err)
	}
}

// TestStandaloneStreamCarriesServerRequests: a streamable HTTP server that
// sends a request outside any call (here an elicitation after the call has
// returned) uses the standalone SSE stream; the host must have opened it and
// answer through its elicitation handler.
func TestStandaloneStreamCarriesServerRequests(t *testing.T) {
	t.Parallel()
	answered := make(chan *mcp.ElicitResult, 1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "later"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "later"}, func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		go func() { // after the call: no related request stream remains
			time.Sleep(50 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "still there?", RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				t.Logf("elicit: %v", err)
			}
			answered <- res
		}()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	m := NewManager([]*config.Server{{Name: "web", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}, &Options{
		OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	defer m.Close()
	if _, err := m.CallTool(context.Background(), "web", &mcp.CallToolParams{Name: "later"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-answered:
		if res == nil || res.Action != "accept" {
			t.Errorf("elicitation outside a call was not answered: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}

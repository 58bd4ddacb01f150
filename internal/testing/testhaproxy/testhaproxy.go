// Package testhaproxy runs a real HAProxy load balancer for tests: Debian's
// haproxy package, started in the foreground on 127.0.0.1 with a free port
// and a generated configuration that spreads HTTP requests round-robin over
// the given backends (the gateway's replicas), with no stickiness of any
// kind: each request of a keep-alive client may go to another backend.
// Every response names the backend that answered in its X-Replica header.
//
// With a health path, HAProxy checks each backend every 500 ms and takes one
// out of rotation after two failed checks (back after one good one); tests
// follow that through the admin socket (ServerUp, AwaitServer).
//
// The binary must be installed (InstallCommand); a test that needs it and
// does not find it fails, naming the command, rather than skipping.
package testhaproxy

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// InstallCommand installs the HAProxy that Start runs (as root, after
// apt-get update). Debian's package does not start a service where
// invoke-rc.d's policy forbids it, as in containers; Start never uses the
// service.
const InstallCommand = "apt-get install -y --no-install-recommends haproxy"

// ReplicaHeader is the response header naming the backend (ServerName)
// that answered.
const ReplicaHeader = "X-Replica"

// backendName is the one backend section's name, as the admin socket
// knows it.
const backendName = "replicas"

// Options configures the proxy.
type Options struct {
	// Backends are the servers' "host:port" addresses (REQUIRED, at least
	// one). Backend i is named ServerName(i).
	Backends []string
	// HealthPath, if set, is checked with a GET every 500 ms on each
	// backend; a backend failing two checks in a row is out of rotation
	// until one check succeeds (2xx or 3xx). OPTIONAL: without it every
	// backend is always in rotation, and a request to a stopped one is
	// retried on another.
	HealthPath string
}

// ServerName is the name HAProxy gives backend i of Options.Backends, the
// value of the ReplicaHeader of its responses.
func ServerName(i int) string { return "replica" + strconv.Itoa(i) }

// Proxy is a running HAProxy. It is stopped, and its process reaped, when
// the test that started it ends; its log is shown if the test failed. Its
// methods may be called concurrently.
type Proxy struct {
	addr    string
	socket  string // the admin socket
	cmd     *exec.Cmd
	log     syncbuf.Buffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // the process's exit, once done is closed
}

// Start starts HAProxy in front of o.Backends and waits until it accepts
// connections. It fails the test if the binary is missing, the
// configuration is refused, or HAProxy does not start.
func Start(t testing.TB, o Options) *Proxy {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy"
	}
	return start(t, bin, o)
}

func start(t testing.TB, bin string, o Options) *Proxy {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("testhaproxy: HAProxy is not installed (%v); install it with: %s", err, InstallCommand)
	}
	if err := o.validate(); err != nil {
		t.Fatalf("testhaproxy: %v", err)
	}
	// A unix socket's path is limited to 108 bytes, which t.TempDir's may
	// exceed: the socket gets a short directory of its own.
	sockDir, err := os.MkdirTemp("", "haproxy")
	if err != nil {
		t.Fatalf("testhaproxy: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	dir := t.TempDir()
	// The free port may be taken between choosing and binding it: retry.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testhaproxy: %v", err)
		}
		p := &Proxy{
			addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			socket: filepath.Join(sockDir, "admin.sock"),
			done:   make(chan struct{}),
		}
		cfgPath := filepath.Join(dir, "haproxy.cfg")
		if err := os.WriteFile(cfgPath, []byte(configFile(p.addr, p.socket, o)), 0o600); err != nil {
			t.Fatalf("testhaproxy: %v", err)
		}
		if out, err := exec.Command(bin, "-c", "-f", cfgPath).CombinedOutput(); err != nil {
			t.Fatalf("testhaproxy: the configuration is refused (%v):\n%s", err, out)
		}
		if err := p.launch(bin, cfgPath); err != nil {
			t.Fatalf("testhaproxy: starting %s: %v", bin, err)
		}
		t.Cleanup(p.stop)
		err = p.waitReady(10 * time.Second)
		if err == nil {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("HAProxy's log:\n%s", p.Log())
				}
			})
			return p
		}
		p.stop()
		if attempt == 3 {
			t.Fatalf("testhaproxy: %v\nHAProxy's log:\n%s", err, p.Log())
		}
	}
}

func (o *Options) validate() error {
	if len(o.Backends) == 0 {
		return errors.New("no backends")
	}
	for i, b := range o.Backends {
		if _, _, err := net.SplitHostPort(b); err != nil || strings.ContainsAny(b, " \t\r\n#") {
			return fmt.Errorf("backend %d: %q is not host:port", i, b)
		}
	}
	if o.HealthPath != "" {
		if u, err := url.Parse(o.HealthPath); err != nil || !strings.HasPrefix(o.HealthPath, "/") || u.Host != "" || strings.ContainsAny(o.HealthPath, " \t\r\n#") {
			return fmt.Errorf("health path %q is not an absolute path", o.HealthPath)
		}
	}
	return nil
}

// configFile renders haproxy.cfg.
//
// Balancing is per request: HAProxy's default keep-alive mode balances each
// request of a client connection on its own (only prefer-last-server, a
// cookie, a stick table or a hashing algorithm would keep a client on one
// server, and none is used). The timeouts leave SSE streams idle for
// minutes, and keep an idle client connection open longer than Go's
// http.Transport does (90 s), so that a client, not HAProxy, closes it (a
// POST sent on a connection the server is closing is not retried). A
// stopped backend's connection failure is retried on another (redispatch),
// so requests keep succeeding while the health checks notice.
func configFile(addr, socket string, o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    log stderr format raw daemon
    stats socket %s mode 600 level admin
    nbthread 2
    maxconn 1024

defaults
    mode http
    log global
    option httplog
    option dontlognull
    retries 2
    option redispatch 1
    timeout connect 1s
    timeout client 10m
    timeout server 10m
    timeout tunnel 1h
    timeout http-request 10s
    timeout http-keep-alive 2m
    timeout check 1s

frontend gateway
    bind %s
    default_backend %s

backend %s
    balance roundrobin
    http-response set-header %s %%s
`, socket, addr, backendName, backendName, ReplicaHeader)
	check := ""
	if o.HealthPath != "" {
		fmt.Fprintf(&b, "    option httpchk GET %s\n", o.HealthPath)
		check = " check inter 500ms fall 2 rise 1"
	}
	for i, addr := range o.Backends {
		fmt.Fprintf(&b, "    server %s %s%s\n", ServerName(i), addr, check)
	}
	return b.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts HAProxy in the foreground (-db); a goroutine reaps it.
func (p *Proxy) launch(bin, cfgPath string) error {
	p.cmd = exec.Command(bin, "-db", "-f", cfgPath)
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		return err
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	return nil
}

// waitReady waits until the frontend accepts connections, the process
// exits (a port taken since freePort), or timeout passes.
func (p *Proxy) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("haproxy exited before it was ready: %v", p.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("haproxy not accepting connections on %s after %v", p.addr, timeout)
		}
	}
}

// stop ends the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (p *Proxy) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// URL returns the frontend's base URL, "http://127.0.0.1:port".
func (p *Proxy) URL() string { return "http://" + p.addr }

// Addr returns the frontend's "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.addr }

// Log returns what HAProxy has logged so far: one line per request, and
// the servers' state changes.
func (p *Proxy) Log() string { return p.log.String() }

// ServerStatus returns each server's status as HAProxy's statistics show
// it, by name: "UP", "DOWN", "UP 1/2" (up, one check failed), "MAINT", or
// "no check" without a health path.
func (p *Proxy) ServerStatus() (map[string]string, error) {
	out, err := p.command("show stat -1 4 -1")
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("testhaproxy: unreadable statistics: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	sv, st := col["svname"], col["status"]
	if sv == 0 && st == 0 {
		return nil, fmt.Errorf("testhaproxy: statistics without svname/status:\n%s", out)
	}
	status := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) > max(sv, st) {
			status[row[sv]] = row[st]
		}
	}
	return status, nil
}

// ServerUp reports whether server name is in rotation: up (even with a
// failed check short of the fall count) or not checked. It is false if the
// statistics cannot be read.
func (p *Proxy) ServerUp(name string) bool {
	s, err := p.ServerStatus()
	if err != nil {
		return false
	}
	return inRotation(s[name])
}

func inRotation(status string) bool {
	return status == "UP" || strings.HasPrefix(status, "UP ") || status == "no check"
}

// AwaitServer waits until server name is in rotation (up) or out of it
// (!up), polling the statistics every 50 ms, or until ctx is done.
func (p *Proxy) AwaitServer(ctx context.Context, name string, up bool) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		s, err := p.ServerStatus()
		if err == nil && inRotation(s[name]) == up {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testhaproxy: server %s not %s (status %q, %v): %w", name, map[bool]string{true: "up", false: "down"}[up], s[name], err, ctx.Err())
		case <-p.done:
			return fmt.Errorf("testhaproxy: haproxy exited: %v", p.waitErr)
		case <-t.C:
		}
	}
}

// SetMaintenance puts server name in maintenance (out of rotation whatever
// its health, as an operator draining a replica would) or takes it out.
func (p *Proxy) SetMaintenance(name string, on bool) error {
	state := "ready"
	if on {
		state = "maint"
	}
	out, err := p.command("set server " + backendName + "/" + name + " state " + state)
	if err != nil {
		return err
	}
	if out = strings.TrimSpace(out); out != "" {
		return fmt.Errorf("testhaproxy: set server %s state %s: %s", name, state, out)
	}
	return nil
}

// command runs one command on the admin socket and returns its answer.
func (p *Proxy) command(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", p.socket, time.Second)
	if err != nil {
		return "", fmt.Errorf("testhaproxy: admin socket: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", fmt.Errorf("testhaproxy: admin socket: %w", err)
	}
	// Not in interactive mode, HAProxy answers and closes the connection.
	var b strings.Builder
	if _, err := io.Copy(&b, bufio.NewReader(c)); err != nil {
		return "", fmt.Errorf("testhaproxy: admin socket: %w", err)
	}
	return b.String(), nil
}

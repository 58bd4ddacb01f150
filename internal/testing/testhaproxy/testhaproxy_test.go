package testhaproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// backend is a plain HTTP server on 127.0.0.1 that answers its name, and
// 200 on /readyz; it can be stopped and started again on the same address.
type backend struct {
	t    *testing.T
	name string
	addr string
	srv  *http.Server
}

func startBackend(t *testing.T, name, addr string) *backend {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{t: t, name: name, addr: l.Addr().String()}
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, name)
	})}
	go b.srv.Serve(l)
	t.Cleanup(b.stop)
	return b
}

func (b *backend) stop() { b.srv.Close() }

func (b *backend) restart() *backend {
	b.t.Helper()
	return startBackend(b.t, b.name, b.addr)
}

// threeBackends starts three backends named as HAProxy names them.
func threeBackends(t *testing.T) ([]*backend, []string) {
	var bs []*backend
	var addrs []string
	for i := range 3 {
		b := startBackend(t, ServerName(i), "127.0.0.1:0")
		bs = append(bs, b)
		addrs = append(addrs, b.addr)
	}
	return bs, addrs
}

// keepAliveClient returns a client and the number of connections it has
// dialled.
func keepAliveClient() (*http.Client, *atomic.Int32) {
	var dials atomic.Int32
	d := &net.Dialer{Timeout: 2 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 1,
	}}, &dials
}

// spread sends n requests and counts the answers by replica; the body must
// be the ReplicaHeader (the backend answered for itself).
func spread(t *testing.T, c *http.Client, url string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %s %s", i, resp.Status, body)
		}
		if h := resp.Header.Get(ReplicaHeader); h != string(body) {
			t.Fatalf("request %d: %s %q answered by %q", i, ReplicaHeader, h, body)
		}
		got[string(body)]++
	}
	return got
}

// TestRoundRobinPerRequest: the requests of one keep-alive client
// connection are spread over every backend (no stickiness), each answer
// naming its backend.
func TestRoundRobinPerRequest(t *testing.T) {
	t.Parallel()
	for _, health := range []string{"", "/readyz"} {
		t.Run("health="+health, func(t *testing.T) {
			t.Parallel()
			_, addrs := threeBackends(t)
			p := Start(t, Options{Backends: addrs, HealthPath: health})
			c, dials := keepAliveClient()
			got := spread(t, c, p.URL()+"/", 30)
			want := map[string]int{ServerName(0): 10, ServerName(1): 10, ServerName(2): 10}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answers by replica (-want +got):\n%s", diff)
			}
			if n := dials.Load(); n != 1 {
				t.Errorf("the client dialled %d connections, want 1 (keep-alive)", n)
			}
		})
	}
}

// TestStoppedBackendLeavesRotation: a stopped backend fails its health
// checks and leaves the rotation while requests keep succeeding on the
// others; started again, it is back.
func TestStoppedBackendLeavesRotation(t *testing.T) {
	t.Parallel()
	bs, addrs := threeBackends(t)
	p := Start(t, Options{Backends: addrs, HealthPath: "/readyz"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range bs {
		if err := p.AwaitServer(ctx, ServerName(i), true); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := keepAliveClient()

	bs[1].stop()
	// Before the checks notice, a request to it is retried on another.
	got := spread(t, c, p.URL()+"/", 6)
	if got[ServerName(1)] != 0 {
		t.Errorf("a stopped backend answered: %v", got)
	}
	if err := p.AwaitServer(ctx, ServerName(1), false); err != nil {
		t.Fatal(err)
	}
	got = spread(t, c, p.URL()+"/", 20)
	if diff := cmp.Diff(map[string]int{ServerName(0): 10, ServerName(2): 10}, got); diff != "" {
		t.Errorf("with replica1 down (-want +got):\n%s", diff)
	}

	bs[1].restart()
	if err := p.AwaitServer(ctx, ServerName(1), true); err != nil {
		t.Fatal(err)
	}
	got = spread(t, c, p.URL()+"/", 30)
	if got[ServerName(1)] == 0 || len(got) != 3 {
		t.Errorf("after replica1 came back: %v, want all three", got)
	}
}

// TestMaintenance: a server put in maintenance leaves the rotation at once
// and comes back when taken out.
func TestMaintenance(t *testing.T) {
	t.Parallel()
	_, addrs := threeBackends(t)
	p := Start(t, Options{Backends: addrs})
	if err := p.SetMaintenance(ServerName(2), true); err != nil {
		t.Fatal(err)
	}
	if p.ServerUp(ServerName(2)) || !p.ServerUp(ServerName(0)) {
		st, err := p.ServerStatus()
		t.Fatalf("statuses after maint: %v %v", st, err)
	}
	c, _ := keepAliveClient()
	if got := spread(t, c, p.URL()+"/", 10); got[ServerName(2)] != 0 {
		t.Errorf("a server in maintenance answered: %v", got)
	}
	if err := p.SetMaintenance(ServerName(2), false); err != nil {
		t.Fatal(err)
	}
	if got := spread(t, c, p.URL()+"/", 9); got[ServerName(2)] != 3 {
		t.Errorf("after maintenance: %v", got)
	}
	if err := p.SetMaintenance("nosuch", true); err == nil {
		t.Error("maintenance of an unknown server: no error")
	}
}

func TestConfigRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{},
		{Backends: []string{"127.0.0.1"}},
		{Backends: []string{"127.0.0.1:1 backup"}},
		{Backends: []string{"127.0.0.1:1"}, HealthPath: "readyz"},
		{Backends: []string{"127.0.0.1:1"}, HealthPath: "/r\nlisten x"},
	} {
		if err := o.validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestMissingBinaryNamesInstallCommand: without the binary the test fails
// naming how to install it.
func TestMissingBinaryNamesInstallCommand(t *testing.T) {
	t.Parallel()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		start(tb, "/nonexistent/haproxy", Options{Backends: []string{"127.0.0.1:1"}})
		t.Error("start returned")
	}()
	<-done
	if !strings.Contains(tb.msg, InstallCommand) {
		t.Errorf("Fatalf(%q), want the install command %q", tb.msg, InstallCommand)
	}
}

// fatalTB records the first Fatalf and ends its goroutine, as testing.T
// does.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

package scaleout_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestNoSharedStateWhenNotNeeded: requests that need no shared state never
// touch Redis (issue 16). After a warm-up, a 2026-07-28 client calls
// through the balancer (both replicas) and a 2025-11-25 session calls the
// replica holding it, directly; meanwhile Redis must execute no command
// but the Pub/Sub connections' keepalive PINGs (one per replica per 5 s
// of quiet at most) and this test's own INFO.
//
// Redis's INFO commandstats give the counts; a MONITOR connection names
// each command's connection and keys, so that a failure says which
// replica's which connection sent what (a replica's Pub/Sub connections
// are told apart by CLIENT LIST).
func TestNoSharedStateWhenNotNeeded(t *testing.T) {
	t.Parallel()
	const calls = 100
	c := startCluster(t, 2, echoConfig, nil)
	holder := c.reps[0]
	rdb := c.redisClient(t)
	mon := startMonitor(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	stateless := c.mustConnect(t, newProtocol, nil, nil)
	session := c.mustConnect(t, oldProtocol, &transport{route: func(*http.Request, []byte) *replica { return holder }}, nil)
	for i := range 5 {
		for _, cl := range []*client{stateless, session} {
			if err := echo(ctx, cl.cs, fmt.Sprintf("warm-up %d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}

	begin, end := "begin-"+rand.Text(), "end-"+rand.Text()
	mustEcho(t, rdb, begin)
	before := commandStats(t, rdb)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, cl := range []*client{stateless, session} {
		wg.Go(func() {
			for i := range calls {
				if err := echo(ctx, cl.cs, fmt.Sprintf("call %d", i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	after := commandStats(t, rdb)
	mustEcho(t, rdb, end)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if by := session.tally.replicas(); len(by) != 1 || by[holder.name] == 0 {
		t.Fatalf("the session's requests went to %v: want all to %s, which holds it", by, holder.name)
	}

	delta := after.since(before)
	// The Pub/Sub connection of each replica PINGs Redis after 5 s
	// without a message (redisstate's pingEvery): background, whatever the
	// requests.
	pings, keepalives := delta["ping"].calls, int64(len(c.reps))*(int64(elapsed/(5*time.Second))+1)
	delete(delta, "ping")
	lines := mon.between(t, begin, end)
	pubsub, self := pubsubAddrs(t, rdb), clientAddr(t, rdb)
	var attributed []string // commands of connections other than Pub/Sub ones and this test's
	for _, l := range lines {
		if l.addr == mon.self || l.addr == self || pubsub[l.addr] {
			continue
		}
		attributed = append(attributed, l.text)
	}
	t.Logf("%d calls of a %s client through the balancer %v and %d of a %s session to %s directly in %v: Redis commands %v, pings %d (keepalives allowed %d); monitored %d commands, %d not from a Pub/Sub connection",
		calls, newProtocol, stateless.tally.replicas(), calls, oldProtocol, holder.name, elapsed.Round(time.Millisecond), delta, pings, keepalives, len(lines), len(attributed))
	if len(delta) > 0 || pings > keepalives || len(attributed) > 0 {
		t.Errorf("requests that need no shared state touched Redis: commands %v, pings %d (at most %d keepalives of the Pub/Sub connections)", delta, pings, keepalives)
		for i, l := range attributed {
			if i == 20 {
				t.Errorf("… %d more", len(attributed)-20)
				break
			}
			t.Errorf("  %s", l)
		}
	}
}

func mustEcho(t testing.TB, rdb *redis.Client, s string) {
	t.Helper()
	if err := rdb.Echo(context.Background(), s).Err(); err != nil {
		t.Fatalf("ECHO: %v", err)
	}
}

// clientAddr returns the address of rdb's one connection as Redis sees it.
func clientAddr(t testing.TB, rdb *redis.Client) string {
	t.Helper()
	s, err := rdb.ClientInfo(context.Background()).Result()
	if err != nil {
		t.Fatalf("CLIENT INFO: %v", err)
	}
	return s.Addr
}

// pubsubAddrs returns the addresses of the Pub/Sub connections (CLIENT
// LIST: a subscription, flag P).
func pubsubAddrs(t testing.TB, rdb *redis.Client) map[string]bool {
	t.Helper()
	s, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if strings.Contains(f["flags"], "P") || (f["sub"] != "" && f["sub"] != "0") || (f["psub"] != "" && f["psub"] != "0") {
			out[f["addr"]] = true
		}
	}
	return out
}

// monitor is a MONITOR connection to a cluster's Redis: every command any
// client sends, with the client's address.
type monitor struct {
	self string // its own address

	mu    sync.Mutex
	lines []monitored
	seen  chan struct{} // signalled at each line
}

type monitored struct {
	addr string // "127.0.0.1:port" of the client
	text string
}

func startMonitor(t testing.TB, c *cluster) *monitor {
	t.Helper()
	conn, err := net.Dial("tcp", c.redis.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := bufio.NewReader(conn)
	u, _ := url.Parse(c.redis.URL())
	send := func(args ...string) {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "+OK") {
			t.Fatalf("%s: %q %v", args[0], line, err)
		}
	}
	if p, ok := u.User.Password(); ok {
		send("AUTH", p)
	}
	send("MONITOR")
	conn.SetDeadline(time.Time{})
	m := &monitor{self: conn.LocalAddr().String(), seen: make(chan struct{}, 1)}
	go func() {
		for {
			// +1700000000.123456 [0 127.0.0.1:54321] "get" "scaleout:kv:…"
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			_, rest, _ := strings.Cut(line, "[")
			addr, _, _ := strings.Cut(rest, "]")
			if _, a, ok := strings.Cut(addr, " "); ok {
				addr = a
			}
			m.mu.Lock()
			m.lines = append(m.lines, monitored{addr: addr, text: line})
			m.mu.Unlock()
			select {
			case m.seen <- struct{}{}:
			default:
			}
		}
	}()
	return m
}

// between returns the commands after the ECHO of begin and before the
// ECHO of end (waiting for that one: MONITOR shows commands in the order
// Redis executed them).
func (m *monitor) between(t testing.TB, begin, end string) []monitored {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		m.mu.Lock()
		from, to := -1, -1
		for i, l := range m.lines {
			switch {
			case strings.Contains(l.text, `"echo" "`+begin+`"`):
				from = i
			case strings.Contains(l.text, `"echo" "`+end+`"`):
				to = i
			}
		}
		if from >= 0 && to > from {
			out := append([]monitored(nil), m.lines[from+1:to]...)
			m.mu.Unlock()
			return out
		}
		m.mu.Unlock()
		select {
		case <-m.seen:
		case <-deadline:
			t.Fatalf("MONITOR did not show the markers %s and %s", begin, end)
		}
	}
}

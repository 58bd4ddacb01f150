package streamable

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/state/redisstate"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/mcphost/mcphost/internal/testing/testredis"
)

// What replicas pass each other about a 2025-11-25 session over a real
// Redis (forward.go): clients' answers, cancellations, session changes.

// redisMonitor is a MONITOR connection to a Redis server: every command
// any client sends, as Redis prints it (binary bytes escaped).
type redisMonitor struct {
	mu    sync.Mutex
	lines []string
	seen  chan struct{} // signalled at each line
}

func startRedisMonitor(t *testing.T, addr string) *redisMonitor {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "*1\r\n$7\r\nMONITOR\r\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("MONITOR: %q %v", line, err)
	}
	c.SetDeadline(time.Time{})
	m := &redisMonitor{seen: make(chan struct{}, 1)}
	go func() { // (ends when the connection closes, at the test's end)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			m.mu.Lock()
			m.lines = append(m.lines, strings.TrimSpace(line))
			m.mu.Unlock()
			select {
			case m.seen <- struct{}{}:
			default:
			}
		}
	}()
	return m
}

// upTo returns the commands seen until one containing mark (which the
// test sends last), waiting for it.
func (m *redisMonitor) upTo(t *testing.T, mark string) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		m.mu.Lock()
		for i, l := range m.lines {
			if strings.Contains(l, mark) {
				out := append([]string(nil), m.lines[:i]...)
				m.mu.Unlock()
				return out
			}
		}
		m.mu.Unlock()
		select {
		case <-m.seen:
		case <-deadline:
			t.Fatalf("MONITOR did not show %s", mark)
		}
	}
}

// byKind routes a 2025-11-25 client's requests over replicas: a
// tools/call to calls, anything else (initialize, answers, notifications)
// to others.
type byKind struct {
	urls          []string
	calls, others int
}

func (b *byKind) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	i := b.others
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			i = b.calls
		}
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	target := strings.TrimPrefix(b.urls[i], "http://")
	u := *req.URL
	u.Host, req.Host = target, target
	req.URL = &u
	return http.DefaultTransport.RoundTrip(req)
}

// redisCluster starts a Redis server and n replicas sharing it, serving
// upstream, with the HTTP options hopts makes (nil: none).
func redisCluster(t *testing.T, n int, upstream *config.Server, hopts func(*redisstate.Backend) *Options) ([]*heldReplica, *redisstate.Backend, *testredis.Server) {
	t.Helper()
	srv := testredis.Start(t, testredis.Options{})
	st, err := redisstate.New(context.Background(), redisstate.Options{URL: srv.URL(), TokenBox: sealbox.Random().Box("tokens"), PinBox: sealbox.Random().Box("pins")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var o *Options
	if hopts != nil {
		o = hopts(st)
	}
	return heldCluster(t, n, st, []*config.Server{upstream}, o), st, srv
}

// publishes returns how many PUBLISH commands the Redis server at addr
// has executed (INFO commandstats).
func publishes(t *testing.T, addr string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n') // $LENGTH
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO: %q %v", head, err)
	}
	var size int
	fmt.Sscanf(head[1:], "%d", &size)
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		// cmdstat_publish:calls=12,usec=34,…
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_publish:calls="); ok {
			var n int
			fmt.Sscanf(rest, "%d", &n)
			return n
		}
	}
	return 0
}

// TestForwardedAnswersSealed: a 2025-11-25 client's call asks it (an
// elicitation) on replica 0; its answers reach replica 1, which passes
// them on over Redis. A message published on replica 0's channel by a
// party with access to Redis (in the old clear format with the victim's
// session id, unsealed, sealed with other keys, sealed for another
// replica, replayed from long ago, or of another principal) answers
// nothing: the call completes with the client's own answers. And a
// reader of Redis (MONITOR) sees neither the session id, the record key
// in anything published, the answers typed into the form, nor a
// cancellation's reason.
func TestForwardedAnswersSealed(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	rs, st, srv := redisCluster(t, 2, upstream, nil)
	mon := startRedisMonitor(t, srv.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	asked := make(chan struct{})
	release := make(chan struct{})
	var n int
	var mu sync.Mutex
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "victim"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			if i == 1 {
				close(asked)
				<-release
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": fmt.Sprintf("canary-form-%d", i)}}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rs[1].url, HTTPClient: &http.Client{Transport: &byKind{urls: urlsOf(rs), calls: 0, others: 1}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}})
		done <- outcome{res, err}
	}()
	select {
	case <-asked:
	case o := <-done:
		t.Fatalf("the call ended before asking: %v %q", o.err, heldText(o.res))
	case <-ctx.Done():
		t.Fatal("the call did not ask")
	}
	s, hs := rs[0].g.heldSession(cs.ID())
	if hs == nil {
		t.Fatal("replica 0 does not hold the session")
	}
	id := waitAsk(t, s, hs) // the id of the request out to the client
	answer := `{"jsonrpc":"2.0","id":"` + id + `","result":{"action":"accept","content":{"answer":"forged"}}}`
	owner := rs[0].g.replica
	sealed := func(box *sealbox.Box, target string, m *forwardMsg) []byte {
		b, _ := json.Marshal(m)
		return box.Seal([]byte("answer\n"), b, forwardAAD("answer", target))
	}
	now := time.Now().UnixMilli()
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"the old clear format", []byte("answer " + cs.ID() + "\n" + answer)},
		{"unsealed", []byte("answer\n" + answer)},
		{"sealed with other keys", sealed(sealbox.Random().Box(cluster.ForwardPurpose), owner, &forwardMsg{SID: hs.sid, ID: id, T: now, Body: json.RawMessage(answer)})},
		{"sealed for another replica", sealed(rs[0].g.fwdBox, rs[1].g.replica, &forwardMsg{SID: hs.sid, ID: id, T: now, Body: json.RawMessage(answer)})},
		{"replayed", sealed(rs[0].g.fwdBox, owner, &forwardMsg{SID: hs.sid, ID: id, T: now - 10*time.Minute.Milliseconds(), Body: json.RawMessage(answer)})},
		{"of another principal", sealed(rs[0].g.fwdBox, owner, &forwardMsg{SID: hs.sid, P: "mallory", ID: id, T: now, Body: json.RawMessage(answer)})},
	} {
		if err := st.Publish(ctx, cluster.ForwardChannel(owner), tc.msg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	// The client's own answer comes after the forged ones, on the same
	// channel: were one taken, the call's first answer would be "forged".
	close(release)
	o := <-done
	if want := "canary-form-1 canary-form-2"; o.err != nil || o.res.IsError || heldText(o.res) != want {
		t.Fatalf("the call ended with %v %q, want %q (the client's own answers)", o.err, heldText(o.res), want)
	}

	// A cancellation reaching replica 1, told to the others.
	req, _ := http.NewRequest(http.MethodPost, rs[1].url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"canary-reason"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", heldOldProtocol)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	mark := "mark-" + rand.Text()
	if err := st.Publish(ctx, "mark", []byte(mark)); err != nil {
		t.Fatal(err)
	}
	var published int
	for _, l := range mon.upTo(t, mark) {
		if strings.Contains(l, "forged") {
			continue // (the test's own forgeries)
		}
		isPublish := strings.Contains(l, `"publish"`)
		if isPublish {
			published++
		}
		for _, clear := range []string{cs.ID(), "canary"} {
			if strings.Contains(l, clear) {
				t.Errorf("Redis saw %q in clear: %s", clear, l)
			}
		}
		if isPublish && strings.Contains(l, hs.sid) {
			t.Errorf("a publish names the session in clear: %s", l)
		}
	}
	if published < 3 {
		t.Errorf("%d publishes seen: want the two answers and the cancellation passed on", published)
	}
}

// TestNotificationFloodNotAmplified: a client floods a replica that does
// not run its calls with 700 notifications/cancelled (each for another
// request id) and responses to requests never put to it (ids of relayed
// asks of the other replica, and of go-sdk requests). Before, the
// cancellations and the relayed asks' answers were each published to the
// other replicas (467 publishes) and none counted against the principal's
// rate; now the flood is refused with 429 past the rate limit's burst (the
// rate refills next to nothing meanwhile), at most one publish goes out per admitted
// cancellation, none for an answer to nothing; and afterwards, the
// principal's bucket for notifications empty, a call that asks the
// client still gets its answer through the other replica.
func TestNotificationFloodNotAmplified(t *testing.T) {
	t.Parallel()
	const flood, burst = 700, 10
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	rs, _, srv := redisCluster(t, 2, upstream, func(st *redisstate.Backend) *Options {
		return &Options{RateLimit: st.RateLimiter("flood", ratelimit.Options{Rate: 0.01, Burst: burst})}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flood"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rs[1].url, HTTPClient: &http.Client{Transport: &byKind{urls: urlsOf(rs), calls: 0, others: 1}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	before := publishes(t, srv.Addr())
	statuses := map[int]int{}
	for i := range flood {
		var body string
		switch i % 3 {
		case 0:
			body = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"flood"}}`, i)
		case 1:
			body = fmt.Sprintf(`{"jsonrpc":"2.0","id":"mcphost-ask-%s-%d","result":{}}`, rs[0].g.replica, i)
		default:
			body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs[1].url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", heldOldProtocol)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses[resp.StatusCode]++
	}
	published := publishes(t, srv.Addr()) - before
	t.Logf("%d notifications and unsolicited responses: statuses %v, %d publishes", flood, statuses, published)
	if published > burst+2 {
		t.Errorf("%d publishes for the flood, want at most %d (one per cancellation admitted)", published, burst+2)
	}
	if statuses[http.StatusTooManyRequests] < flood-3*burst {
		t.Errorf("%d of %d refused with 429, want the flood refused past the burst (%d)", statuses[http.StatusTooManyRequests], flood, burst)
	}

	// The flood spent the principal's budget for notifications: a call
	// that asks (on replica 0) still gets its answers (through replica 1).
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}})
	if err != nil || res.IsError || heldText(res) != "yes yes" {
		t.Fatalf("a call that asks after the flood: %v %q, want its answers", err, heldText(res))
	}
}

// FuzzForwardParsers: what a client sends (a response's id, a
// cancellation) and what arrives from the shared state (a message on a
// replica's channel, a session change) never panics; an id is taken for a
// relayed ask's only with its session's tag, and one the gateway issued
// always is.
func FuzzForwardParsers(f *testing.F) {
	keys := sealbox.Random()
	g := &Front{log: hclog.NewNullLogger(), replica: "0a1b2c", fwdBox: keys.Box(cluster.ForwardPurpose),
		askIDKeys: keys.MACKeys(cluster.AskIDPurpose)}
	issued := g.relayAskID("sid", 7)
	for _, seed := range []string{
		issued,
		`{"jsonrpc":"2.0","id":"` + issued + `","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"r"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}`,
		"answer\n" + string(g.fwdBox.Seal(nil, []byte(`{"s":"sid"}`), forwardAAD("answer", g.replica))),
		"answer " + issued + "\n{}",
		"held held-reply:" + strings.Repeat("ab", 16) + "\n\x00\xff{}",
		"mcphost-ask-0a1b2c-1-", "mcphost-ask--", "\x00\xff{}", `{}{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		if owner, ok := g.relayAskOwner("sid", s); ok && (s != issued || owner != g.replica) {
			t.Fatalf("%q taken for a relayed ask of %q", s, owner)
		}
		if _, ok := g.relayAskOwner("other", s); ok && s == issued {
			t.Fatal("an id issued on one session taken on another")
		}
		var m wire.Message
		if wire.Parse(&m, b) == nil {
			responseID(&m)
			m.CancelledKey()
		}
		if head, body, ok := bytes.Cut(b, []byte{'\n'}); ok {
			kind, _, _ := strings.Cut(string(head), " ")
			g.forwarded(kind, body) // (as the core passes it on)
		}
		g.openChange(b)
	})
}

// countingState counts the publishes of a shared state.
type countingState struct {
	state.Backend
	n atomic.Int64
}

func (c *countingState) Publish(ctx context.Context, channel string, msg []byte) error {
	c.n.Add(1)
	return c.Backend.Publish(ctx, channel, msg)
}

// TestForwardedOnce: what a client POSTs to a replica that does not run
// its calls is published for the others only when it can matter, and once:
// a cancellation once per request id; an answer only to an id a replica
// issued on this session, once; an answer to a go-sdk request only while
// one is out.
func TestForwardedOnce(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st := &countingState{Backend: local}
	rs := heldCluster(t, 2, st, []*config.Server{upstream}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "once"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: rs[1].url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, hs := rs[1].g.heldSession(cs.ID())
	if hs == nil {
		t.Fatal("replica 1 does not hold the session")
	}
	post := func(body string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs[1].url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", heldOldProtocol)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	answer := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` }
	for _, tc := range []struct {
		name  string
		body  string
		times int
		want  int64 // publishes
	}{
		{"a cancellation, again and again", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, 5, 1},
		{"another request's cancellation", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"8"}}`, 1, 1},
		{"an answer to an id issued on this session, again", answer(`"` + rs[0].g.relayAskID(hs.sid, 99) + `"`), 3, 1},
		{"an answer to an id issued on another session", answer(`"` + rs[0].g.relayAskID("another", 1) + `"`), 1, 0},
		{"an answer to an id without its tag", answer(`"mcphost-ask-` + rs[0].g.replica + `-1"`), 1, 0},
		{"an answer to a go-sdk request, none out", answer(`3`), 1, 0},
	} {
		before := st.n.Load()
		for range tc.times {
			post(tc.body)
		}
		if got := st.n.Load() - before; got != tc.want {
			t.Errorf("%s (%d times): %d publishes, want %d", tc.name, tc.times, got, tc.want)
		}
	}
}

// TestCancellationFloodBounded: with no rate limit (the default), a
// client's cancellations of distinct request ids on one session are passed
// on to the other replicas within the session's budget (cancelBurst), not
// one publish each.
func TestCancellationFloodBounded(t *testing.T) {
	t.Parallel()
	const flood = 300
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	rs, _, srv := redisCluster(t, 2, upstream, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flood"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: rs[1].url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	before := publishes(t, srv.Addr())
	start := time.Now()
	for i := range flood {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"flood"}}`, i)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs[1].url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", heldOldProtocol)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	published := publishes(t, srv.Addr()) - before
	// (the budget refills cancelRate a second while the flood runs)
	limit := cancelBurst + int(time.Since(start).Seconds()*float64(cancelRate)) + 1
	t.Logf("%d cancellations of distinct ids in %v: %d publishes", flood, time.Since(start), published)
	if published > limit {
		t.Errorf("%d publishes for %d cancellations, want at most %d (the session's budget)", published, flood, limit)
	}
}

// TestRecentIDs: a remembered id is not forgotten before maxForwardedIDs
// others were added after it (no reset that re-allows them all), and the
// set stays bounded.
func TestRecentIDs(t *testing.T) {
	var r recentIDs
	for i := range 3 * maxForwardedIDs {
		r.add(strconv.Itoa(i))
		for _, back := range []int{0, 1, maxForwardedIDs / 2, maxForwardedIDs - 1} {
			if j := i - back; j >= 0 && !r.has(strconv.Itoa(j)) {
				t.Fatalf("after adding %d: %d (added %d ago) forgotten", i, j, back)
			}
		}
		if j := i - maxForwardedIDs; j >= 0 && r.has(strconv.Itoa(j)) {
			t.Fatalf("after adding %d: %d still remembered", i, j)
		}
		if len(r.set) > maxForwardedIDs {
			t.Fatalf("%d ids remembered, want at most %d", len(r.set), maxForwardedIDs)
		}
	}
	r.remove("700")
	r.add("700")
	r.add("x")
	if !r.has("700") || !r.has("x") {
		t.Fatal("an id removed and added again is forgotten")
	}
}

// TestGoSDKAnswerToLastAsker: the go-sdk numbers a session's requests from
// 1 on each replica, so a replica with go-sdk requests of its own out
// passes an answer on to the replica the ask record names when that is
// another (before, it kept it: one replica's answer was taken for
// another's request), with the record's episode; and the asker takes an
// answer only for the episode of its requests out (not one judged by an
// earlier record, as a replay into the session's asks started again).
func TestGoSDKAnswerToLastAsker(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := heldCluster(t, 2, local, []*config.Server{upstream}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "two-askers"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: rs[1].url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	s, hs := rs[1].g.heldSession(cs.ID())
	if hs == nil {
		t.Fatal("replica 1 does not hold the session")
	}
	// Replica 1 has its go-sdk request 1 out; replica 0 asked since (its
	// request 1 too) and wrote the record.
	s.mu.Lock()
	hs.outAsks, hs.askEpisode, hs.askCount = 1, "episode-1", 1
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		hs.outAsks = 0
		s.mu.Unlock()
	}()
	b, _ := json.Marshal(&askRecord{Replica: rs[0].g.replica, Episode: "episode-0", Asked: 1, T: time.Now().UnixMilli()})
	if err := local.Put(ctx, cluster.AskRecordKey(hs.sid), rs[0].g.fwdBox.Seal(nil, b, forwardAAD("ask-record", hs.sid)), time.Minute); err != nil {
		t.Fatal(err)
	}
	owner, id, rec, ok := s.forwardable(ctx, hs, parsed(t, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)))
	if !ok || owner != rs[0].g.replica || id != "1" || rec == nil || rec.Episode != "episode-0" {
		t.Errorf("an answer to 1 with the record naming replica 0: passed on to %q (%v, episode %v), want replica 0, episode-0", owner, ok, rec)
	}

	for _, tc := range []struct {
		name    string
		episode string
		want    bool
	}{
		{"of the episode out", "episode-1", true},
		{"of an earlier episode", "episode-0", false},
		{"of none", "", false},
	} {
		if got := s.goSDKAsksOut(hs, tc.episode); got != tc.want {
			t.Errorf("an answer passed on %s: taken %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestReplaysDropped: a session change captured from Redis and published
// again within cluster.MaxAge (a Redis reader and publisher's replay) is
// dropped by the replica that took it; so is an answer's message again;
// and an ask record written longer ago than forwardTTL is not taken.
func TestReplaysDropped(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	rs, st, _ := redisCluster(t, 2, upstream, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	captured := make(chan []byte, 8)
	defer st.Subscribe(cluster.SessionsChannel, func(b []byte) {
		if b != nil {
			captured <- b
		}
	})()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "replayed"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: rs[1].url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs[1].url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", heldOldProtocol)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var change []byte
	select {
	case change = <-captured:
	case <-ctx.Done():
		t.Fatal("no session change published")
	}
	plain, err := rs[0].g.fwdBox.Open(nil, change, forwardAAD("change", cluster.SessionsChannel))
	if err != nil || len(plain) < changeHead {
		t.Fatalf("the change captured does not open: %v", err)
	}
	for !rs[0].g.fwdSeen.Has(string(plain[8:changeHead])) { // (replica 0 takes it through its subscription)
		if ctx.Err() != nil {
			t.Fatal("replica 0 did not take the change")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, ok := rs[0].g.openChange(change); ok {
		t.Error("a session change replayed within cluster.MaxAge was taken again")
	}
	if _, ok := rs[0].g.openChange(rs[1].g.sealChange("level x debug")); !ok {
		t.Error("a new session change was dropped")
	}

	for _, tc := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"written now", time.Now(), true},
		{"written long ago (replayed)", time.Now().Add(-forwardTTL - 2*cluster.MaxAge), false},
		{"written without a time", time.UnixMilli(0), false},
	} {
		b, _ := json.Marshal(&askRecord{Replica: rs[0].g.replica, Episode: "e", Asked: 1, T: tc.at.UnixMilli()})
		if err := st.Put(ctx, cluster.AskRecordKey("sid"), rs[0].g.fwdBox.Seal(nil, b, forwardAAD("ask-record", "sid")), time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, got := rs[1].g.readAskRecord(ctx, "sid"); got != tc.want {
			t.Errorf("an ask record %s: taken %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAwaitedBounded: while this replica has go-sdk requests out to a
// session's client, a response passes the rate limit as an awaited answer
// only for an integer id, once per id, and for no more ids than requests
// went out (before, every response with such an id did).
func TestAwaitedBounded(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := heldCluster(t, 1, local, []*config.Server{upstream}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "awaited"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: rs[0].url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: heldOldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	s, hs := rs[0].g.heldSession(cs.ID())
	if hs == nil {
		t.Fatal("the replica does not hold the session")
	}
	s.mu.Lock()
	hs.outAsks, hs.askEpisode, hs.askCount = 1, "e", 1 // one go-sdk request out
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		hs.outAsks = 0
		s.mu.Unlock()
	}()
	answer := func(id string) []byte { return []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`) }
	for _, tc := range []struct {
		name string
		body []byte
		want bool
	}{
		{"an answer to a request out", answer("1"), true},
		{"the same answer again", answer("1"), false},
		{"an answer to more requests than went out", answer("2"), false},
		{"an answer with a string id", answer(`"x"`), false},
		{"a notification", []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`), false},
	} {
		if got := s.awaited(ctx, hs, parsed(t, tc.body)); got != tc.want {
			t.Errorf("%s: awaited %v, want %v", tc.name, got, tc.want)
		}
	}
	s.mu.Lock()
	hs.askEpisode, hs.askCount = "f", 2 // the asks started again: two out
	s.mu.Unlock()
	for _, id := range []string{"1", "2"} {
		if !s.awaited(ctx, hs, parsed(t, answer(id))) {
			t.Errorf("an answer to %s of the next round of requests not awaited", id)
		}
	}
}

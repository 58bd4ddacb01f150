package scaleout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollUntil polls cond every 25 ms until it holds, or fails the test when
// ctx ends first.
func pollUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// callRecord is one tool call of a load.
type callRecord struct {
	client     int
	start, end time.Time
	err        error
}

// load is clients calling echo in a loop through the balancer until
// stopped.
type load struct {
	cls  []*client
	stop chan struct{}
	wg   sync.WaitGroup

	mu    sync.Mutex
	calls []callRecord
}

func startLoad(t *testing.T, c *cluster, versions ...string) *load {
	l := &load{stop: make(chan struct{})}
	for _, v := range versions {
		l.cls = append(l.cls, c.mustConnect(t, v, nil, nil))
	}
	for i, cl := range l.cls {
		l.wg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-l.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				start := time.Now()
				err := echo(ctx, cl.cs, fmt.Sprintf("l%d-%d", i, j))
				cancel()
				l.mu.Lock()
				l.calls = append(l.calls, callRecord{client: i, start: start, end: time.Now(), err: err})
				l.mu.Unlock()
			}
		})
	}
	return l
}

func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}

// awaitServing waits until the load got ten more responses from r.
func (l *load) awaitServing(t *testing.T, ctx context.Context, r *replica) {
	t.Helper()
	before := l.byReplica()[r.name]
	pollUntil(t, ctx, "the restarted replica serving the load", func() bool { return l.byReplica()[r.name] >= before+10 })
}

// lost counts the load's sessions lost (after what): each client's next
// call must succeed.
func (l *load) lost(t *testing.T, ctx context.Context, after string) int {
	t.Helper()
	lost := 0
	for i, cl := range l.cls {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		if err := echo(cctx, cl.cs, "last"); err != nil {
			lost++
			t.Errorf("client %d (%s) after %s: %v", i, cl.cs.InitializeResult().ProtocolVersion, after, err)
		}
		ccancel()
	}
	return lost
}

// byReplica sums the load's responses by replica.
func (l *load) byReplica() map[string]int {
	total := newTally()
	for _, cl := range l.cls {
		total.add(cl.tally)
	}
	return total.replicas()
}

// testKill: while clients of both eras keep calling through the balancer,
// one replica is killed (SIGKILL) with a call in flight on it, and
// started again on its port. The balancer takes it out of rotation and
// back; the call in flight on it fails, and its session's next request
// succeeds on another replica; the other clients' calls fail only if they
// were in flight at the kill; no session is lost, and the restarted
// replica serves the sessions opened before it died.
func testKill(t *testing.T, c *cluster) {
	victim := c.reps[1]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := startLoad(t, c, oldProtocol, oldProtocol, oldProtocol, newProtocol, newProtocol)
	halted := false
	defer func() {
		if !halted {
			l.halt()
		}
	}()
	pollUntil(t, ctx, "every replica serving the load", func() bool { return len(l.byReplica()) == len(c.reps) })

	// A call in flight on the victim: the slow tool, its POST sent there
	// directly, reporting progress.
	progressed := make(chan struct{}, 1)
	slow := c.mustConnect(t, oldProtocol, &transport{route: func(_ *http.Request, body []byte) *replica {
		if bytes.Contains(body, []byte(`"mcp__demo__slow"`)) {
			return victim
		}
		return nil
	}}, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case progressed <- struct{}{}:
		default:
		}
	}})
	slowDone := make(chan error, 1)
	go func() {
		sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
		defer scancel()
		p := &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"milliseconds": 8000, "steps": 8}}
		p.SetProgressToken("slow-on-the-victim")
		_, err := slow.cs.CallTool(sctx, p)
		slowDone <- err
	}()
	select {
	case <-progressed:
	case err := <-slowDone:
		t.Fatalf("the slow call ended before it reported progress: %v", err)
	case <-ctx.Done():
		t.Fatal("the slow call reported no progress")
	}

	// A subscriber whose standalone stream (GET) is on the victim: after
	// the kill it opens the stream again through the balancer, on another
	// replica, which starts it with an update of the subscribed resource
	// (one made while no stream was open would be lost otherwise). Nobody
	// updates the resource in this test.
	const readme = "mcphost://demo/demo://readme" // (three servers offer demo://readme: qualified)
	var victimDown atomic.Bool
	streams := make(chan string, 8) // the replica of each stream opened
	updates := make(chan string, 8)
	subscriber := c.mustConnect(t, oldProtocol, &transport{
		route: func(r *http.Request, _ []byte) *replica {
			if r.Method == http.MethodGet && !victimDown.Load() {
				return victim
			}
			return nil
		},
		seen: func(_ []byte, replica string, resp *http.Response) {
			if resp.Request.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
				streams <- replica
			}
		},
	}, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI }})
	select {
	case r := <-streams:
		if r != victim.name {
			t.Fatalf("the subscriber's stream is on %s, want %s", r, victim.name)
		}
	case <-ctx.Done():
		t.Fatal("the subscriber opened no stream")
	}
	if err := subscriber.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: readme}); err != nil {
		t.Fatal(err)
	}

	victimDown.Store(true)
	killAt := time.Now()
	kids := victim.kill(t)
	outCtx, outCancel := context.WithTimeout(ctx, 15*time.Second)
	defer outCancel()
	if err := c.lb.AwaitServer(outCtx, victim.name, false); err != nil {
		t.Fatal(err)
	}
	outAfter := time.Since(killAt)
	var slowErr error
	select {
	case slowErr = <-slowDone:
	case <-ctx.Done():
		t.Fatal("the call in flight on the killed replica never ended")
	}
	slowEnded := time.Since(killAt)
	if slowErr == nil {
		t.Errorf("the call in flight on the killed replica succeeded")
	}
	var reopenedOn, updated string
	var reopenedAfter time.Duration
	select {
	case reopenedOn = <-streams:
		reopenedAfter = time.Since(killAt)
	case <-ctx.Done():
		t.Fatal("the subscriber did not open its stream again")
	}
	select {
	case updated = <-updates:
		if updated != readme {
			t.Errorf("the reopened stream told of %q, want %q", updated, readme)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the subscriber's stream, reopened on %s, told of no update of its subscription", reopenedOn)
	}
	// Its session goes on, through another replica.
	nextCtx, nextCancel := context.WithTimeout(ctx, 10*time.Second)
	nextErr := echo(nextCtx, slow.cs, "after the kill")
	nextCancel()
	if nextErr != nil {
		t.Errorf("the next call of the session whose call was in flight on the killed replica: %v", nextErr)
	}

	// Back on its port: the balancer puts it back in rotation, and it
	// serves the sessions opened before.
	restartAt := time.Now()
	victim.launch(t)
	victim.awaitReady(t)
	inCtx, inCancel := context.WithTimeout(ctx, 15*time.Second)
	defer inCancel()
	if err := c.lb.AwaitServer(inCtx, victim.name, true); err != nil {
		t.Fatal(err)
	}
	inAfter := time.Since(restartAt)
	l.awaitServing(t, ctx, victim)
	l.halt()
	halted = true
	lost := l.lost(t, ctx, "the restart")
	// A call may fail if it was in flight on the victim at the kill, or
	// sent to it before the balancer took it out of rotation (the kernel
	// still accepts connections for a process being killed; HAProxy then
	// closes the client's connection without a response): it fails with
	// no response, never with an answer of a live replica.
	outAt := killAt.Add(outAfter)
	var inFlight, failedInFlight, failedOther, ok int
	for _, cr := range l.calls {
		window := cr.start.Before(outAt) && cr.end.After(killAt)
		if window {
			inFlight++
		}
		noResponse := cr.err != nil && (errors.Is(cr.err, io.EOF) || errors.Is(cr.err, io.ErrUnexpectedEOF) ||
			strings.Contains(cr.err.Error(), "EOF") || strings.Contains(cr.err.Error(), "terminated without response") ||
			strings.Contains(cr.err.Error(), http.StatusText(http.StatusBadGateway)) || strings.Contains(cr.err.Error(), http.StatusText(http.StatusServiceUnavailable)))
		switch {
		case cr.err == nil:
			ok++
		case window && noResponse:
			failedInFlight++
			t.Logf("client %d's call started %v after the kill (in flight on the victim, or sent to it before the balancer took it out) failed after %v: %v",
				cr.client, cr.start.Sub(killAt).Round(time.Millisecond), cr.end.Sub(cr.start).Round(time.Millisecond), cr.err)
		default:
			failedOther++
			t.Errorf("client %d's call started %v after the kill failed: %v", cr.client, cr.start.Sub(killAt).Round(time.Millisecond), cr.err)
		}
	}
	// A client whose call failed goes on: its next call once the victim
	// is out of rotation succeeds. (Before that, HAProxy may send it to the
	// victim too: round robin.)
	for k, cr := range l.calls {
		if cr.err == nil {
			continue
		}
		next := slices.IndexFunc(l.calls[k+1:], func(n callRecord) bool { return n.client == cr.client && !n.start.Before(outAt) })
		if next >= 0 && l.calls[k+1+next].err != nil {
			t.Errorf("client %d's first call after the victim was out of rotation, after its failed one, failed too: %v", cr.client, l.calls[k+1+next].err)
		}
	}
	total := newTally()
	for _, cl := range l.cls {
		total.add(cl.tally)
	}
	for _, f := range total.failures {
		t.Logf("request without a response (kill at %s): %s", killAt.Format("15:04:05.000"), f)
	}
	t.Logf("kill: tool calls %d, results %d, started between the kill and the victim out of rotation (or in flight at the kill) %d, of which failed %d, failed otherwise %d, sessions lost %d; "+
		"victim's servers %v gone; out of rotation %v after the kill, back %v after its restart; the slow call on it ended %v after the kill (%v), its session's next call: %v; "+
		"the subscriber's stream reopened on %s %v after the kill, starting with an update of %q; %s",
		len(l.calls), ok, inFlight, failedInFlight, failedOther, lost, kids, outAfter.Round(time.Millisecond), inAfter.Round(time.Millisecond),
		slowEnded.Round(time.Millisecond), slowErr, errString(nextErr), reopenedOn, reopenedAfter.Round(time.Millisecond), updated, total)
	if lost != 0 || failedOther != 0 || ok+failedInFlight != len(l.calls) {
		t.Errorf("sessions lost %d, calls failed other than those sent to the killed replica %d: want none", lost, failedOther)
	}
}

// testRollingRestart: while clients of both eras keep calling through the
// balancer, one replica is restarted as a rolling update restarts it: out
// of rotation first (Kubernetes removes a terminating pod from the
// Service's endpoints while its preStop pause runs; here the balancer's
// maintenance mode), then SIGTERM (a drain), then started again and put
// back. No request goes without a response, no call fails, no session is
// lost.
func testRollingRestart(t *testing.T, c *cluster) {
	victim := c.reps[2]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := startLoad(t, c, oldProtocol, oldProtocol, newProtocol)
	halted := false
	defer func() {
		if !halted {
			l.halt()
		}
	}()
	pollUntil(t, ctx, "every replica serving the load", func() bool { return len(l.byReplica()) == len(c.reps) })
	if err := c.lb.SetMaintenance(victim.name, true); err != nil {
		t.Fatal(err)
	}
	if err := c.lb.AwaitServer(ctx, victim.name, false); err != nil {
		t.Fatal(err)
	}
	victim.stop(t) // SIGTERM: the drain
	victim.launch(t)
	victim.awaitReady(t)
	if err := c.lb.SetMaintenance(victim.name, false); err != nil {
		t.Fatal(err)
	}
	if err := c.lb.AwaitServer(ctx, victim.name, true); err != nil {
		t.Fatal(err)
	}
	l.awaitServing(t, ctx, victim)
	l.halt()
	halted = true
	lost := l.lost(t, ctx, "the rolling restart")
	failed := 0
	for _, cr := range l.calls {
		if cr.err != nil {
			failed++
			t.Errorf("client %d's call started %s failed: %v", cr.client, cr.start.Format("15:04:05.000"), cr.err)
		}
	}
	total := newTally()
	for _, cl := range l.cls {
		total.add(cl.tally)
	}
	t.Logf("rolling restart: tool calls %d, failed %d, sessions lost %d; %s", len(l.calls), failed, lost, total)
	if len(total.failures) != 0 || lost != 0 || failed != 0 {
		t.Errorf("requests without a response %d, calls failed %d, sessions lost %d: want none", len(total.failures), failed, lost)
	}
}

func errString(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, mcp.ErrSessionMissing):
		return "session not found (404)" // (the error names the session id)
	}
	return err.Error()
}

// testRedisDown: with the shared state gone (redis-server killed), the
// replicas stay ready (/readyz 200: readiness is about the configuration
// and the servers), requests that need nothing shared keep working — a
// session's on replicas that hold it, 2026-07-28 clients' everywhere —
// and those that need it are refused with 503, never 404: a new session,
// a session on a replica that does not hold it. When Redis is back, new
// sessions open again.
func testRedisDown(t *testing.T, c *cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A session held by every replica (each served some of its requests).
	everywhere := c.mustConnect(t, oldProtocol, nil, nil)
	for i := 0; len(everywhere.tally.replicas()) < len(c.reps); i++ {
		if i == 30 {
			t.Fatalf("30 calls through the balancer did not reach every replica: %v", everywhere.tally.replicas())
		}
		if err := echo(ctx, everywhere.cs, "before"); err != nil {
			t.Fatal(err)
		}
	}
	// A session only the first replica holds.
	pinned := c.mustConnect(t, oldProtocol, &transport{route: func(*http.Request, []byte) *replica { return c.reps[0] }}, nil)
	if err := echo(ctx, pinned.cs, "before"); err != nil {
		t.Fatal(err)
	}
	stateless := c.mustConnect(t, newProtocol, nil, nil)
	if err := echo(ctx, stateless.cs, "before"); err != nil {
		t.Fatal(err)
	}

	c.redis.Stop()
	var ready []string
	for _, r := range c.reps {
		code, body := r.readyz()
		ready = append(ready, fmt.Sprintf("%s %d", r.name, code))
		if code != http.StatusOK {
			t.Errorf("%s's /readyz with Redis down: %d %s, want 200", r.name, code, body)
		}
	}
	const calls = 9
	heldOK, statelessOK := 0, 0
	for i := range calls {
		if err := echo(ctx, everywhere.cs, fmt.Sprintf("down-%d", i)); err != nil {
			t.Errorf("held session, call %d with Redis down: %v", i, err)
		} else {
			heldOK++
		}
		if err := echo(ctx, stateless.cs, fmt.Sprintf("down-%d", i)); err != nil {
			t.Errorf("2026-07-28 client, call %d with Redis down: %v", i, err)
		} else {
			statelessOK++
		}
	}
	// The pinned session on a replica that does not hold it.
	code, body, err := c.post(c.reps[2], pinned.cs.ID(), `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("a session on a replica that does not hold it, with Redis down: %d %q %v, want 503", code, body, err)
	}
	unheld := code
	// A new session.
	nctx, ncancel := context.WithTimeout(ctx, 15*time.Second)
	tr := &transport{}
	_, newErr := c.connect(nctx, oldProtocol, tr, nil)
	ncancel()
	if newErr == nil {
		t.Errorf("a new 2025-11-25 session opened with Redis down")
	} else if !strings.Contains(newErr.Error(), "shared state is unavailable") && !strings.Contains(newErr.Error(), http.StatusText(http.StatusServiceUnavailable)) {
		t.Errorf("a new session with Redis down: %v, want a 503 (the shared state is unavailable)", newErr)
	}
	t.Logf("redis down: /readyz %v; held session %d/%d calls ok, 2026-07-28 client %d/%d; unheld session on another replica: %d; new session: %v (%s)",
		ready, heldOK, calls, statelessOK, calls, unheld, newErr, tr.tally)

	// Back (empty: no persistence): new sessions open again.
	c.redis.Restart(t)
	back := time.Now()
	var fresh *client
	pollUntil(t, ctx, "a new session after Redis is back", func() bool {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		cl, err := c.connect(cctx, oldProtocol, nil, nil)
		if err != nil {
			return false
		}
		fresh = cl
		return true
	})
	defer fresh.cs.Close()
	if err := echo(ctx, fresh.cs, "after"); err != nil {
		t.Errorf("a new session after Redis is back: %v", err)
	}
	// What became of the earlier clients: a 2026-07-28 client has nothing
	// to lose; the sessions whose records Redis lost are ended (404), or
	// go on, never fail otherwise.
	var after []string
	for _, k := range []struct {
		name string
		cl   *client
	}{{"held everywhere", everywhere}, {"pinned", pinned}, {"2026-07-28", stateless}} {
		err := echo(ctx, k.cl.cs, "after")
		after = append(after, fmt.Sprintf("%s: %s", k.name, errString(err)))
		if err != nil && (k.cl == stateless || !errors.Is(err, mcp.ErrSessionMissing)) {
			t.Errorf("%s client after Redis is back: %v", k.name, errString(err))
		}
	}
	t.Logf("redis back (empty) after %v: new session ok; earlier clients: %v", time.Since(back).Round(time.Millisecond), after)
}

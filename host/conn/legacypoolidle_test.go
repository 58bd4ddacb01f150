package conn

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestLegacySessionPoolTimes: the pool's times, on the fake clock of a
// synctest bubble (the demo server in process, whose sessions' pipes are
// in memory): a further second session is closed LegacyIdle (1 minute by
// default) after its last call left it, not before; and a call beyond the
// bound waits up to LegacyWait (3 s) for a session free of other clients'
// calls, then the first session serves it.
func TestLegacySessionPoolTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := demoserver.New(&demoserver.Options{Name: "d", Passthrough: true})
		cfg := &config.Server{Name: "d", Transport: config.TransportInProcess, Approved: true, ConnectTimeout: 5 * time.Second, LegacyPool: 2}
		m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps, InProcess: map[string]*mcp.Server{"d": srv}})
		defer m.Close()
		ctx := context.Background()
		hold := make(chan struct{})
		type result struct {
			who string
			res *mcp.CallToolResult
			err error
		}
		done := make(chan result, 3)
		for i := range 3 {
			who := fmt.Sprintf("c%d", i)
			a := newAnswerer(who, who)
			a.hold = hold
			go func() {
				res, err := m.Call(ctx, "d", &mcp.CallToolParams{Name: "ask_old", Arguments: map[string]any{}}, &CallOptions{Requester: a, ClientVersion: LegacyProtocol})
				done <- result{who, res, err}
			}()
			synctest.Wait()
		}
		if inFlight, waiting := m.SecondSession(ctx, "d"); inFlight != 2 || waiting != 1 || m.SecondSessions(ctx, "d") != 2 {
			t.Fatalf("second sessions: %d open, %d calls in flight, %d waiting; want 2, 2, 1", m.SecondSessions(ctx, "d"), inFlight, waiting)
		}
		// The third waits 3 s, then the first session serves it: ask_old
		// cannot ask there.
		time.Sleep(legacyWait - time.Millisecond)
		synctest.Wait()
		if len(done) != 0 {
			t.Fatal("a call beyond the bound ended before LegacyWait")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if r := <-done; r.who != "c2" || (r.err == nil && !r.res.IsError) {
			t.Fatalf("the call beyond the bound after LegacyWait: %s %v %v; want c2's, failed on the first session", r.who, r.err, r.res)
		}
		close(hold)
		for range 2 {
			if r := <-done; r.err != nil || text(r.res) != "answer: "+r.who+" (mood: calm)" {
				t.Errorf("%s: %q %v", r.who, text(r.res), r.err)
			}
		}
		time.Sleep(legacyIdle - time.Millisecond)
		synctest.Wait()
		if n := m.SecondSessions(ctx, "d"); n != 2 {
			t.Fatalf("%d second sessions open before LegacyIdle, want 2", n)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if n := m.SecondSessions(ctx, "d"); n != 1 {
			t.Fatalf("%d second sessions open after LegacyIdle, want 1 (the first stays)", n)
		}
	})
}

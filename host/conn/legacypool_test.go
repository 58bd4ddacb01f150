package conn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// TestLegacySessionPool: 2025-11-25 clients call ask_old (a tool that asks
// by a request of its own) on a stdio server of 2026-07-28 at once, each
// held on its question. Up to legacy_pool of them are asked at once, each on
// a second session (a process) of its own, none waiting; the others wait
// for one to be free (not the first session's fallback: LegacyWait is long
// here). Each gets its own question and answer. A further session left idle
// for LegacyIdle is closed (its process ends); the first stays. (Real
// processes: synctest cannot advance time while goroutines wait on pipes,
// so the test polls, bounded.) Before the pool, a second client always
// waited (pool 1's row is that behaviour).
func TestLegacySessionPool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pool, clients, atOnce int
	}{
		{1, 2, 1},
		{3, 4, 3},
		{0, 4, config.DefaultLegacyPool}, // the default, 4
	} {
		t.Run(fmt.Sprintf("pool %d, %d clients", tc.pool, tc.clients), func(t *testing.T) {
			t.Parallel()
			cfg := demo("d", "-passthrough")
			cfg.LegacyPool = tc.pool
			const idle = 300 * time.Millisecond
			m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps, LegacyWait: time.Minute, LegacyIdle: idle})
			t.Cleanup(func() { m.Close() })
			ctx := context.Background()

			hold := make(chan struct{})
			var release sync.Once
			t.Cleanup(func() { release.Do(func() { close(hold) }) }) // (a failed check must not leave the calls waiting)
			asked := make(chan string, tc.clients)
			type answer struct {
				who, got string
				err      error
			}
			done := make(chan answer, tc.clients)
			for i := range tc.clients {
				who := fmt.Sprintf("client%d", i)
				a := newAnswerer(who, who)
				a.hold = hold
				go func() {
					res, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: "ask_old", Arguments: map[string]any{"question": "for " + who}},
						&CallOptions{Requester: a, ClientVersion: LegacyProtocol})
					if err == nil {
						done <- answer{who: who, got: text(res)}
						return
					}
					done <- answer{who: who, err: err}
				}()
				go func() {
					for p := range a.asked {
						asked <- who + ": " + p.Message
					}
				}()
			}
			for range tc.atOnce {
				select {
				case q := <-asked:
					if who, msg, _ := strings.Cut(q, ": "); msg != "for "+who {
						t.Errorf("asked %q", q)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("fewer than %d clients asked at once", tc.atOnce)
				}
			}
			waitFor(t, "the calls to settle", func() bool {
				inFlight, waiting := m.SecondSession(ctx, cfg.Name)
				return inFlight == tc.atOnce && waiting == tc.clients-tc.atOnce
			})
			if n := m.SecondSessions(ctx, cfg.Name); n != tc.atOnce {
				t.Fatalf("%d second sessions open, want %d", n, tc.atOnce)
			}
			select {
			case q := <-asked:
				t.Fatalf("asked beyond the pool's bound: %q", q)
			case <-time.After(100 * time.Millisecond):
			}
			pids := secondPIDs(m, cfg.Name)
			if len(pids) != tc.atOnce || slices.Contains(pids, 0) {
				t.Fatalf("second sessions' processes: %v", pids)
			}

			release.Do(func() { close(hold) })
			for range tc.clients {
				a := <-done
				if a.err != nil || a.got != "answer: "+a.who+" (mood: calm)" {
					t.Errorf("%s's call: %q, %v", a.who, a.got, a.err)
				}
			}
			// The further sessions idle out; the first stays.
			waitFor(t, "the idle sessions to close", func() bool { return m.SecondSessions(ctx, cfg.Name) == 1 })
			for _, pid := range pids[1:] {
				waitFor(t, fmt.Sprintf("process %d to end", pid), func() bool { return !alive(pid) })
			}
			if !alive(pids[0]) {
				t.Error("the first second session's process ended")
			}
			// A later call is served again, on the first second session.
			a := newAnswerer("later", "later")
			res, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: "ask_old", Arguments: map[string]any{}}, &CallOptions{Requester: a, ClientVersion: LegacyProtocol})
			if err != nil || text(res) != "answer: later (mood: calm)" || m.SecondSessions(ctx, cfg.Name) != 1 {
				t.Fatalf("a later call: %q, %v (%d second sessions)", text(res), err, m.SecondSessions(ctx, cfg.Name))
			}
		})
	}
}

// secondPIDs returns the processes of the server's second sessions, the
// first one's first.
func secondPIDs(m *Manager, server string) []int {
	c := m.For(context.Background(), server)
	c.legacy.mu.Lock()
	lcs := c.legacy.members()
	c.legacy.mu.Unlock()
	var pids []int
	for _, lc := range lcs {
		lc.mu.Lock()
		pids = append(pids, lc.pid)
		lc.mu.Unlock()
	}
	return pids
}

// waitFor polls cond, for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
	}
}

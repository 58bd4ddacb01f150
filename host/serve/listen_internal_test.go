package serve

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListenStreamIdle: a listen stream is ended (errListenIdle) once
// nothing was sent to its session for the idle timeout; a notification
// sent to the session starts the wait over, one sent to another session
// does not; a drain ends it at once; without an idle timeout it lasts.
func TestListenStreamIdle(t *testing.T) {
	const idle = time.Minute
	tests := []struct {
		name  string
		idle  time.Duration
		steps func(l *listenStreams, mine, other *mcp.ServerSession)
		after time.Duration // from the last step
		want  error         // the stream's end's cause, nil: still open
	}{
		{"idle", idle, func(*listenStreams, *mcp.ServerSession, *mcp.ServerSession) {}, idle, errListenIdle},
		{"not yet idle", idle, func(*listenStreams, *mcp.ServerSession, *mcp.ServerSession) {}, idle - time.Second, nil},
		{"kept alive", idle, func(l *listenStreams, mine, _ *mcp.ServerSession) {
			time.Sleep(idle - time.Second)
			l.touch(mine)
		}, idle - time.Second, nil},
		{"kept alive, then idle", idle, func(l *listenStreams, mine, _ *mcp.ServerSession) {
			time.Sleep(idle - time.Second)
			l.touch(mine)
		}, idle, errListenIdle},
		{"another session's notification", idle, func(l *listenStreams, _, other *mcp.ServerSession) {
			time.Sleep(idle - time.Second)
			l.touch(other)
		}, time.Second, errListenIdle},
		{"drained", idle, func(l *listenStreams, _, _ *mcp.ServerSession) {
			l.endAll(errListenDrained)
		}, 0, errListenDrained},
		{"no idle timeout", 0, func(*listenStreams, *mcp.ServerSession, *mcp.ServerSession) {}, 24 * time.Hour, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var l listenStreams
				l.setIdle(tc.idle)
				mine, other := &mcp.ServerSession{}, &mcp.ServerSession{}
				ctx, end := l.park(context.Background(), mine)
				_, endOther := l.park(context.Background(), other)
				defer endOther()
				tc.steps(&l, mine, other)
				time.Sleep(tc.after)
				synctest.Wait()
				if got := context.Cause(ctx); !errors.Is(got, tc.want) || (tc.want == nil) != (ctx.Err() == nil) {
					t.Errorf("stream ended by %v, want %v", got, tc.want)
				}
				end()
				if n := l.nParked.Load(); n != 1 {
					t.Errorf("%d streams parked after one ended, want 1", n)
				}
			})
		})
	}
}

// FuzzListenRequests: listenRequests never panics, and on a body the
// strict scan accepts it counts exactly the subscriptions/listen requests
// (with an id) encoding/json finds, each element of a batch; the id it
// returns is JSON.
func FuzzListenRequests(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`,
		`{"jsonrpc":"2.0","id":"a","method":"subscriptions\/listen"}`,
		`{"jsonrpc":"2.0","id":1,"method":"\u0073ubscriptions/listen"}`,
		`{"jsonrpc":"2.0","method":"subscriptions/listen"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"id":3,"method":"subscriptions/listen"}]`,
		`{"id":1,"method":"subscriptions/listen","method":"ping"}`,
		`{"id":1,"Method":"subscriptions/listen"}`,
		`{"id":1,"method":"subscriptions/listen"}{"id":2}`,
		"\x00\xff{}", `[]`, `[[]]`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, id := listenRequests(body)
		if n < 0 || !json.Valid(id) {
			t.Fatalf("listenRequests: %d, id %q", n, id)
		}
		if scanBody(body) != nil {
			return
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(body, &elems); err != nil {
			elems = []json.RawMessage{body}
		}
		want := 0
		for _, e := range elems {
			var m map[string]json.RawMessage
			if json.Unmarshal(e, &m) != nil {
				continue
			}
			var method string
			_, hasID := m["id"]
			if json.Unmarshal(m["method"], &method) == nil && method == methodListen && hasID {
				want++
			}
		}
		if n != want {
			t.Fatalf("listenRequests(%q) = %d, want %d", body, n, want)
		}
	})
}

package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListenStreamsReplaced (issue 33 item 1, review): a listen stream is
// never ended for being quiet; a principal's stream over its share ends
// that principal's stream on which nothing was sent for the longest (a
// notification sent to a session makes its streams the latest), never
// another principal's, and gives that one's place up at once (its POST
// still being answered); it is refused only when the principal's streams
// are all still starting; the gateway's cap refuses; a drain ends all.
func TestListenStreamsReplaced(t *testing.T) {
	const share, max = 2, 5
	type stream struct {
		ctx     context.Context
		ss      *mcp.ServerSession
		end     func() // the handler returns
		release func() // its POST is answered
	}
	type harness struct {
		l       *listenStreams
		streams []*stream
	}
	// open admits and parks a stream of owner (parked false: admitted
	// only, still starting).
	open := func(h *harness, owner string, parked bool) error {
		tk, release, err := h.l.admit(owner, 1, max, share)
		if err != nil {
			return err
		}
		st := &stream{ss: &mcp.ServerSession{}, release: release, ctx: context.Background(), end: func() {}}
		if parked {
			st.ctx, st.end = h.l.park(context.WithValue(context.Background(), listenTicketKey{}, tk), st.ss, owner)
		}
		h.streams = append(h.streams, st)
		time.Sleep(time.Second) // (each stream later than the last)
		return nil
	}
	tests := []struct {
		name    string
		steps   func(h *harness) error // the last step's error
		wantErr string                 // "" for admitted
		ended   []int                  // the streams ended (by index), with their cause
		cause   error
	}{
		{"quiet streams last", func(h *harness) error {
			open(h, "alice", true)
			open(h, "alice", true)
			time.Sleep(24 * time.Hour)
			return nil
		}, "", nil, nil},
		{"over the share, the quietest ends", func(h *harness) error {
			open(h, "alice", true)
			open(h, "alice", true)
			return open(h, "alice", true)
		}, "", []int{0}, errListenReplaced},
		{"a notification makes a stream the latest", func(h *harness) error {
			open(h, "alice", true)
			open(h, "alice", true)
			h.l.touch(h.streams[0].ss)
			return open(h, "alice", true)
		}, "", []int{1}, errListenReplaced},
		{"an ended stream's place is given up at once", func(h *harness) error {
			open(h, "alice", true)
			open(h, "alice", true)
			open(h, "alice", true) // ends 0, whose POST is still being answered
			return open(h, "alice", true)
		}, "", []int{0, 1}, errListenReplaced},
		{"another principal's streams are not replaced", func(h *harness) error {
			open(h, "bob", true)
			open(h, "alice", true)
			open(h, "bob", true)
			open(h, "alice", true)
			return open(h, "alice", true)
		}, "", []int{1}, errListenReplaced},
		{"all still starting", func(h *harness) error {
			open(h, "alice", false)
			open(h, "alice", false)
			return open(h, "alice", true)
		}, "one principal may have at most 2", nil, nil},
		{"the gateway's cap", func(h *harness) error {
			for _, who := range []string{"a", "b", "c", "d", "e"} {
				open(h, who, true)
			}
			return open(h, "f", true)
		}, "at most 5 subscriptions/listen streams", nil, nil},
		{"drained", func(h *harness) error {
			open(h, "alice", true)
			open(h, "bob", true)
			h.l.endAll(errListenDrained)
			return nil
		}, "", []int{0, 1}, errListenDrained},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &harness{l: &listenStreams{}}
				err := tc.steps(h)
				if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("last stream: %v, want %q", err, tc.wantErr)
				}
				for i, st := range h.streams {
					want := error(nil)
					if slices.Contains(tc.ended, i) {
						want = tc.cause
					}
					if got := context.Cause(st.ctx); !errors.Is(got, want) || (want == nil) != (st.ctx.Err() == nil) {
						t.Errorf("stream %d ended by %v, want %v", i, got, want)
					}
				}
				for _, st := range h.streams {
					st.end()
					st.release()
				}
				if h.l.open != 0 || len(h.l.byOwner) != 0 || h.l.nParked.Load() != 0 {
					t.Errorf("after every stream ended: %d open, by owner %v, %d parked", h.l.open, h.l.byOwner, h.l.nParked.Load())
				}
			})
		})
	}
}

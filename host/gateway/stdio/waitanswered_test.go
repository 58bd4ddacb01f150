package stdio

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// TestWaitAnswered: waitAnswered returns the moment the last pending
// request is answered (it waits on a signal, not by polling), or at its
// timeout if one never is; at once when none is pending.
func TestWaitAnswered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pending []string
		answer  time.Duration // when the requests are answered (0: never)
		want    time.Duration // when waitAnswered returns
	}{
		{name: "none pending", want: 0},
		{name: "answered", pending: []string{`1`, `"a"`}, answer: 3 * time.Second, want: 3 * time.Second},
		{name: "answered after a millisecond", pending: []string{`1`}, answer: time.Millisecond, want: time.Millisecond},
		{name: "never answered", pending: []string{`1`}, want: time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &relayConn{pending: map[string]context.CancelFunc{}}
				for _, id := range tc.pending {
					key, _ := rawjson.IDKey([]byte(id))
					c.pending[key] = nil
				}
				if tc.answer > 0 {
					go func() {
						time.Sleep(tc.answer)
						for _, id := range tc.pending {
							c.done1([]byte(id))
						}
					}()
				}
				start := time.Now()
				c.waitAnswered(time.Minute)
				if got := time.Since(start); got != tc.want {
					t.Errorf("waitAnswered returned after %v, want %v", got, tc.want)
				}
			})
		})
	}
}

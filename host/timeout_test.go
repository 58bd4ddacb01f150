package host

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/host/config"
)

// TestCallLimit: progress restarts the idle timeout, never the cap; a
// server that reports progress forever is still cut off at the cap.
func TestCallLimit(t *testing.T) {
	t.Parallel()
	const idle, most = time.Minute, 10 * time.Minute
	tests := []struct {
		name          string
		progressEvery time.Duration // 0: none
		progressUntil time.Duration // 0: forever
		cancelAt      time.Duration // the caller cancels; 0: never
		want          time.Duration // when the context ends
		wantErr       *TimeoutError
	}{
		{name: "no progress", want: idle, wantErr: &TimeoutError{Tool: "t", Limit: idle}},
		{name: "progress forever", progressEvery: 30 * time.Second, want: most, wantErr: &TimeoutError{Tool: "t", Limit: most, Cap: true}},
		{name: "progress faster than idle forever", progressEvery: time.Second, want: most, wantErr: &TimeoutError{Tool: "t", Limit: most, Cap: true}},
		{name: "progress then silence", progressEvery: 30 * time.Second, progressUntil: 3 * time.Minute, want: 3*time.Minute + idle, wantErr: &TimeoutError{Tool: "t", Limit: idle}},
		{name: "progress too slow", progressEvery: 2 * time.Minute, want: idle, wantErr: &TimeoutError{Tool: "t", Limit: idle}},
		{name: "caller cancels", progressEvery: 30 * time.Second, cancelAt: 5 * time.Minute, want: 5 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				start := time.Now()
				ctx, l := limitCall(parent, idle, most)
				defer l.stop()
				if tc.progressEvery > 0 {
					go func() { // the server's progress notifications
						for {
							select {
							case <-ctx.Done():
								return
							case <-time.After(tc.progressEvery):
							}
							if tc.progressUntil > 0 && time.Since(start) > tc.progressUntil {
								return
							}
							l.progress()
						}
					}()
				}
				<-ctx.Done()
				if got := time.Since(start); got != tc.want {
					t.Errorf("ended after %s, want %s", got, tc.want)
				}
				err := l.err(ctx, "t")
				if tc.wantErr == nil {
					if err != nil {
						t.Errorf("err = %v, want nil (not a timeout)", err)
					}
					return
				}
				var te *TimeoutError
				if !errors.As(err, &te) {
					t.Fatalf("err = %v, want a *TimeoutError", err)
				}
				if diff := cmp.Diff(tc.wantErr, te); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%v does not match ErrTimeout and DeadlineExceeded", err)
				}
			})
		})
	}
}

func TestToolLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		callTimeout time.Duration
		server      *config.Server
		idle, max   time.Duration
	}{
		{"defaults", 0, &config.Server{}, config.DefaultToolTimeout, config.DefaultMaxToolDuration},
		{"no server", 0, nil, config.DefaultToolTimeout, config.DefaultMaxToolDuration},
		{"server timeout", 0, &config.Server{ToolTimeout: time.Minute}, time.Minute, config.DefaultMaxToolDuration},
		{"server cap", 0, &config.Server{MaxToolDuration: 2 * time.Hour}, config.DefaultToolTimeout, 2 * time.Hour},
		{"call timeout wins", 5 * time.Second, &config.Server{ToolTimeout: time.Minute, MaxToolDuration: 2 * time.Minute}, 5 * time.Second, 2 * time.Minute},
		{"cap never below the timeout", 3 * time.Hour, &config.Server{}, 3 * time.Hour, 3 * time.Hour},
		{"server timeout above the default cap", 0, &config.Server{ToolTimeout: 2 * time.Hour}, 2 * time.Hour, 2 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idle, most := toolLimits(tc.callTimeout, tc.server)
			if diff := cmp.Diff([2]time.Duration{tc.idle, tc.max}, [2]time.Duration{idle, most}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

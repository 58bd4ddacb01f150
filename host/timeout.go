package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// ErrTimeout is matched (errors.Is) by the error of a tool call that ran out
// of time; see TimeoutError.
var ErrTimeout = errors.New("tool call timed out")

// TimeoutError is returned for a tool call that ran out of time: it went
// Limit without a result or a progress notification (tool_timeout), or it
// ran for Limit in all (Cap: max_tool_duration, which progress does not
// extend). The server was sent notifications/cancelled. It matches
// ErrTimeout and context.DeadlineExceeded.
type TimeoutError struct {
	Tool  string
	Limit time.Duration
	Cap   bool
}

func (e *TimeoutError) Error() string {
	if e.Cap {
		return fmt.Sprintf("calling %s: timed out after %s, the longest a call may run (max_tool_duration); progress notifications do not extend it", e.Tool, e.Limit)
	}
	return fmt.Sprintf("calling %s: timed out after %s without a result or progress (tool_timeout)", e.Tool, e.Limit)
}

// Is makes a TimeoutError match ErrTimeout and context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Causes of a call's context ending, told apart from the caller's own cancellation.
var (
	errIdle = errors.New("no result or progress within tool_timeout")
	errCap  = errors.New("max_tool_duration reached")
)

// callLimit bounds one tool call: idle (tool_timeout) restarts with every
// progress notification, max (max_tool_duration) never moves.
type callLimit struct {
	idle, max time.Duration
	timer     *time.Timer
	cancel    context.CancelCauseFunc
	stopMax   context.CancelFunc
}

// toolLimits resolves a call's limits: the call's own timeout, else the
// server's tool_timeout, else DefaultToolTimeout; and the server's
// max_tool_duration, else DefaultMaxToolDuration, never below the timeout.
func toolLimits(callTimeout time.Duration, s *config.Server) (idle, limit time.Duration) {
	idle = callTimeout
	if s != nil {
		if idle <= 0 {
			idle = s.ToolTimeout
		}
		limit = s.MaxToolDuration
	}
	if idle <= 0 {
		idle = config.DefaultToolTimeout
	}
	if limit <= 0 {
		limit = config.DefaultMaxToolDuration
	}
	return idle, max(limit, idle)
}

// limitCall returns a context for a call that ends after idle without
// progress (see progress) or after limit in all, whichever comes first. stop
// releases it.
func limitCall(ctx context.Context, idle, limit time.Duration) (context.Context, *callLimit) {
	l := &callLimit{idle: idle, max: limit}
	ctx, l.stopMax = context.WithTimeoutCause(ctx, limit, errCap)
	ctx, l.cancel = context.WithCancelCause(ctx)
	l.timer = time.AfterFunc(idle, func() { l.cancel(errIdle) })
	return ctx, l
}

// progress restarts the idle timeout: the server is working.
func (l *callLimit) progress() { l.timer.Reset(l.idle) }

// stop releases the limit's timers.
func (l *callLimit) stop() {
	l.timer.Stop()
	l.cancel(nil)
	l.stopMax()
}

// err returns the TimeoutError for a call whose context (from limitCall)
// ended because of the limit, or nil if it did not.
func (l *callLimit) err(ctx context.Context, tool string) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errIdle):
		return &TimeoutError{Tool: tool, Limit: l.idle}
	case errors.Is(cause, errCap):
		return &TimeoutError{Tool: tool, Limit: l.max, Cap: true}
	}
	return nil
}

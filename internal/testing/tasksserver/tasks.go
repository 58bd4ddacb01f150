package tasksserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Task statuses (SEP-2663).
const (
	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == statusCompleted || status == statusFailed || status == statusCancelled
}

// task is one task's state, guarded by Server.mu.
type task struct {
	id               string
	created, updated time.Time
	status           string
	result           json.RawMessage // completed
	err              *jsonrpc.Error  // failed
	// pending are the input requests not answered yet (input_required),
	// answers those answered since the tool asked.
	pending, answers map[string]json.RawMessage
	wake             chan struct{} // a token when answers arrive
	cancel           context.CancelFunc
}

// view is the task as the wire shows it: a CreateTaskResult (detail false)
// or a DetailedTask for tasks/get.
func (s *Server) viewLocked(t *task, detail bool) map[string]any {
	v := map[string]any{
		"resultType":     "complete",
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.UTC().Format(time.RFC3339Nano),
		"ttlMs":          s.opts.TTL.Milliseconds(),
		"pollIntervalMs": s.opts.PollInterval.Milliseconds(),
	}
	if !detail {
		v["resultType"] = "task"
		return v
	}
	switch t.status {
	case statusCompleted:
		v["result"] = t.result
	case statusFailed:
		v["error"] = t.err
	case statusInputRequired:
		v["inputRequests"] = maps.Clone(t.pending)
	}
	return v
}

// startTask creates a task running tl for call and returns its
// CreateTaskResult. The task is registered before this returns, so a
// tasks/get right after the reply finds it.
func (s *Server) startTask(tl *tool, call *callCtx) map[string]any {
	ctx, cancel := context.WithCancel(s.ctx)
	now := s.opts.Now()
	t := &task{id: newTaskID(), created: now, updated: now, status: statusWorking,
		wake: make(chan struct{}, 1), cancel: cancel}
	call.ask = func(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
		return s.askTask(ctx, t, reqs)
	}
	s.mu.Lock()
	s.pruneLocked(now)
	s.tasks[t.id] = t
	view := s.viewLocked(t, false)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := runGuarded(ctx, tl, call)
		s.finish(ctx, t, res, err)
	}()
	return view
}

// finish records how the task's tool ended, unless the task was cancelled.
func (s *Server) finish(ctx context.Context, t *task, res *toolResult, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if terminal(t.status) {
		return
	}
	t.updated = s.opts.Now()
	var jerr *jsonrpc.Error
	switch {
	case err == nil:
		raw, merr := json.Marshal(res)
		if merr != nil {
			t.status, t.err = statusFailed, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: merr.Error()}
			return
		}
		t.status, t.result = statusCompleted, raw
	case errors.As(err, &jerr):
		t.status, t.err = statusFailed, jerr
	case ctx.Err() != nil:
		t.status = statusCancelled
	default:
		t.status, t.err = statusFailed, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
}

// askTask parks the task in input_required with reqs until every one is
// answered by tasks/update, and returns the answers; a task that ends
// meanwhile (tasks/cancel) returns the context's error, never the answers
// given so far.
func (s *Server) askTask(ctx context.Context, t *task, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	s.mu.Lock()
	if terminal(t.status) {
		s.mu.Unlock()
		return nil, context.Canceled
	}
	t.pending, t.answers = maps.Clone(reqs), map[string]json.RawMessage{}
	t.status, t.updated = statusInputRequired, s.opts.Now()
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if terminal(t.status) {
			s.mu.Unlock()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, context.Canceled
		}
		if len(t.pending) == 0 {
			answers := t.answers
			t.answers = nil
			s.mu.Unlock()
			return answers, nil
		}
		s.mu.Unlock()
		select {
		case <-t.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Server) lookupLocked(id string) (*task, *jsonrpc.Error) {
	t, ok := s.tasks[id]
	if !ok {
		return nil, invalidParams("unknown task %q", id)
	}
	return t, nil
}

func (s *Server) getTask(id string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(s.opts.Now())
	t, err := s.lookupLocked(id)
	if err != nil {
		return nil, err
	}
	return s.viewLocked(t, true), nil
}

// updateTask delivers answers to a task's pending input requests; answers
// to keys not pending are ignored. The task is back to working once all are
// answered.
func (s *Server) updateTask(id string, responses map[string]json.RawMessage) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(id)
	if err != nil {
		return nil, err
	}
	if t.status == statusInputRequired {
		for k, v := range responses {
			if _, ok := t.pending[k]; ok {
				delete(t.pending, k)
				t.answers[k] = v
			}
		}
		if len(t.pending) == 0 {
			t.status = statusWorking
		}
		t.updated = s.opts.Now()
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	return ack(), nil
}

// cancelTask cancels a task that has not ended; on an ended one it does
// nothing. Either way the answer is the same empty ack.
func (s *Server) cancelTask(id string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(id)
	if err != nil {
		return nil, err
	}
	if !terminal(t.status) {
		t.status, t.updated = statusCancelled, s.opts.Now()
		t.pending = nil
		t.cancel()
	}
	return ack(), nil
}

func ack() map[string]any { return map[string]any{"resultType": "complete"} }

// pruneLocked forgets ended tasks older than the TTL.
func (s *Server) pruneLocked(now time.Time) {
	for id, t := range s.tasks {
		if terminal(t.status) && now.Sub(t.created) > s.opts.TTL {
			delete(s.tasks, id)
		}
	}
}

// runGuarded runs the tool, turning a panic into a protocol error (how
// protocol_error_job fails).
func runGuarded(ctx context.Context, tl *tool, call *callCtx) (res *toolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error: %s: %v", tl.name, p)}
		}
	}()
	return tl.run(ctx, call)
}

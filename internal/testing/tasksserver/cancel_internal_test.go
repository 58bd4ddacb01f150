package tasksserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
)

// TestCancelWhileInputRequired: a task cancelled while it waits for input,
// one answer given of two, ends its tool's wait with an error, never with
// the answers given so far (as if all were answered).
func TestCancelWhileInputRequired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{})
		// (The task's context is not the tool's here, so that only the
		// task's end, not a cancelled context, can end the wait.)
		tk := &task{id: "t1", status: statusWorking, wake: make(chan struct{}, 1), cancel: func() {}}
		s.mu.Lock()
		s.tasks[tk.id] = tk
		s.mu.Unlock()
		type out struct {
			answers map[string]json.RawMessage
			err     error
		}
		done := make(chan out, 1)
		go func() {
			a, err := s.askTask(context.Background(), tk, map[string]json.RawMessage{"a": json.RawMessage(`{}`), "b": json.RawMessage(`{}`)})
			done <- out{a, err}
		}()
		synctest.Wait() // (parked in input_required)
		if _, err := s.updateTask(tk.id, map[string]json.RawMessage{"a": json.RawMessage(`{"ok":true}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.cancelTask(tk.id); err != nil {
			t.Fatal(err)
		}
		got := <-done
		if got.err == nil || !errors.Is(got.err, context.Canceled) {
			t.Errorf("askTask after cancel: answers %s, error %v; want context.Canceled", got.answers, got.err)
		}
	})
}

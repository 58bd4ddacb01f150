package conn

import (
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestTaskNotesReusedID: a server that gives the id of a task still
// watched to another task (here for another watcher) has the statuses of
// that id reach neither watcher: which task a status is of cannot be told.
// On the old code the second receiver silently replaced the first, and
// the second watcher got the first's statuses.
func TestTaskNotesReusedID(t *testing.T) {
	t.Parallel()
	var tn taskNotes
	got := map[string]int{}
	if _, reused := tn.add("u1", func(json.RawMessage) { got["A"]++ }); reused {
		t.Fatal("the first add reported a reuse")
	}
	if _, reused := tn.add("u1", func(json.RawMessage) { got["B"]++ }); !reused {
		t.Fatal("the second add of u1 did not report a reuse")
	}
	if to := tn.to("u1", false); to != nil {
		to(nil)
	}
	if len(got) != 0 {
		t.Errorf("statuses of a reused id reached %v, want no one", got)
	}
}

// TestTaskNotesOrderRepeats: an id watched, ended, and watched again is
// kept once in the order of eviction: past the table's bound the oldest
// watched (x, watched before u1's second time) is forgotten, not u1. On
// the old code the first entry of u1, left in the order, evicted the live
// mapping of u1 instead.
func TestTaskNotesOrderRepeats(t *testing.T) {
	t.Parallel()
	var tn taskNotes
	nop := func(json.RawMessage) {}
	tn.add("u1", nop)
	tn.to("u1", true) // (ended)
	tn.add("x", nop)
	tn.add("u1", nop) // watched again
	for i := range maxTaskNotes - 1 {
		tn.add(fmt.Sprint("o", i), nop)
	}
	if tn.to("u1", false) == nil || tn.to("x", false) != nil {
		t.Errorf("past the bound: u1 watched %v, x watched %v; want u1 kept, x (the oldest) forgotten", tn.to("u1", false) != nil, tn.to("x", false) != nil)
	}
}

// TestEarlyNoteAge: a status of a task not known yet is kept for
// earlyNoteAge, and passed on when the task is watched within it; not
// after (review57 9b).
func TestEarlyNoteAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tn taskNotes
		tn.keep(earlyNote{id: "u1", params: json.RawMessage(`{}`), at: time.Now()})
		tn.keep(earlyNote{id: "u2", params: json.RawMessage(`{}`), at: time.Now()})
		time.Sleep(earlyNoteAge - time.Second)
		if early, _ := tn.add("u1", func(json.RawMessage) {}); len(early) != 1 {
			t.Errorf("within earlyNoteAge: %d early notes, want 1", len(early))
		}
		time.Sleep(2 * time.Second)
		if early, _ := tn.add("u2", func(json.RawMessage) {}); len(early) != 0 {
			t.Errorf("past earlyNoteAge: %d early notes, want none", len(early))
		}
	})
}

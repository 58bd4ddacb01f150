package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// NoteQueue holds the notifications waiting to be written to one session's
// client outside any call (a task's status, later a per-user
// list_changed), so that no shared goroutine ever writes to a client: the
// upstream's read loop, the shared state's subscription, the gateway only
// hand a notification to the session's queue (Add, which never blocks),
// and the queue's own goroutine writes it. A client that does not read
// holds only its own queue's goroutine.
//
// The queue is bounded: past MaxQueuedNotes, the oldest waiting is
// dropped. Of notifications with the same key (a task's outward id), only
// the latest waits: each status is a full snapshot of its task. Drops are
// counted and logged at most once per NoteDropLogEvery.
//
// The writer goroutine runs while notifications wait (none is kept for an
// idle session); it belongs to the queue, whose owner (the front's session
// or connection) ends it with Close: nothing is written after, and the
// write in progress, if any, is given a cancelled context.
type NoteQueue struct {
	log   hclog.Logger
	write func(context.Context, QueuedNote)
	ctx   context.Context
	stop  context.CancelFunc

	mu       sync.Mutex
	waiting  []QueuedNote
	running  bool // the writer goroutine runs
	closed   bool
	dropped  int       // drops not yet logged
	lastWarn time.Time // when drops were last logged
	idle     chan struct{}
}

// QueuedNote is a notification waiting in a NoteQueue.
type QueuedNote struct {
	// Key, when not empty, names what the notification is about: a newer
	// one with the same key replaces it while it waits.
	Key string
	// Msg is the JSON-RPC notification.
	Msg []byte
	// Relayed marks a notification another replica handed over (its
	// writer must not hand it on again).
	Relayed bool
}

// MaxQueuedNotes bounds the notifications waiting for one session.
const MaxQueuedNotes = 64

// NoteDropLogEvery is the least time between two log lines of a queue's
// dropped notifications.
const NoteDropLogEvery = 10 * time.Second

// NewNoteQueue returns an empty queue whose notifications write writes, one
// at a time, in order. log logs the drops.
func NewNoteQueue(log hclog.Logger, write func(context.Context, QueuedNote)) *NoteQueue {
	ctx, stop := context.WithCancel(context.Background())
	return &NoteQueue{log: log, write: write, ctx: ctx, stop: stop}
}

// Add queues n, never blocking; it does nothing once q is closed (or on a
// nil q).
func (q *NoteQueue) Add(n QueuedNote) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	replaced := false
	if n.Key != "" {
		for i := range q.waiting {
			if q.waiting[i].Key == n.Key {
				q.waiting[i] = n
				replaced = true
				break
			}
		}
	}
	if !replaced {
		if len(q.waiting) >= MaxQueuedNotes {
			q.waiting = q.waiting[1:]
			q.droppedLocked(1)
		}
		q.waiting = append(q.waiting, n)
	}
	if !q.running {
		q.running = true
		go q.run()
	}
}

// droppedLocked counts n drops, logging the count when the last line is old
// enough. q.mu is held.
func (q *NoteQueue) droppedLocked(n int) {
	q.dropped += n
	now := time.Now()
	if q.lastWarn.IsZero() || now.Sub(q.lastWarn) >= NoteDropLogEvery {
		q.log.Warn("notifications dropped: the session's client does not read them fast enough", "dropped", q.dropped)
		q.dropped, q.lastWarn = 0, now
	}
}

// run writes the waiting notifications until none waits, or q is closed.
func (q *NoteQueue) run() {
	for {
		q.mu.Lock()
		if q.closed || len(q.waiting) == 0 {
			q.running = false
			if q.idle != nil {
				close(q.idle)
				q.idle = nil
			}
			q.mu.Unlock()
			return
		}
		n := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.mu.Unlock()
		q.write(q.ctx, n)
	}
}

// Close ends q: what waits is dropped, nothing more is queued (nothing
// done on a nil q).
func (q *NoteQueue) Close() {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.closed = true
	q.waiting = nil
	q.mu.Unlock()
	q.stop()
}

// Idle returns a channel closed once no notification waits or is being
// written: a front waits on it so that the notifications a request was
// sent are written before its response (and tests).
func (q *NoteQueue) Idle() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := make(chan struct{})
	if !q.running {
		close(ch)
		return ch
	}
	if q.idle == nil {
		q.idle = make(chan struct{})
	}
	return q.idle
}

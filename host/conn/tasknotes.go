package conn

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// Status notifications of 2025-11-25's experimental tasks.
//
// A server tells its client of a change of a task's status by
// notifications/tasks/status, whose params are the task (taskId, status,
// statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval). The go-sdk
// client drops a notification method it does not know, so they are caught
// where notifications are read (routeNote; on a relayed call's own event
// stream, httpLane.note). A task a client of the gateway holds has an id of
// the gateway's, sealed for its principal (the gateway's tasks.go): the
// server's notification names the server's id, and must reach the client
// that created the task only. So each connection keeps, for the tasks
// created by calls through it, the server's task id and where its
// notifications go (taskNotes, filled by TaskWatcher.Watch when the
// CreateTaskResult is read); a notification of a task not in it (created
// by a caller that cannot be told, by another replica's connection, before
// the session was reconnected, or never) is dropped, never broadcast.

// A server may send a task's first status notification as soon as it has
// created the task, and it may be read before the CreateTaskResult is
// (over streamable HTTP, on another stream; the result's processing may
// wait for the call's other notifications): a notification of a task not
// known yet is kept a moment (the last maxEarlyNotes, for earlyNoteAge)
// and passed on when the task of its id is created on this connection.

// MethodTaskStatus is 2025-11-25's status notification of a task.
const MethodTaskStatus = "notifications/tasks/status"

// maxTaskNotes bounds the tasks a connection keeps the receivers of the
// status notifications of; past it, the oldest are forgotten.
const maxTaskNotes = 1024

// maxEarlyNotes and earlyNoteAge bound the notifications of tasks not
// known yet that a connection keeps.
const (
	maxEarlyNotes = 32
	earlyNoteAge  = 5 * time.Second
)

// TaskWatcher is implemented by a TaskIDs that passes on the status
// notifications of the 2025-11-25 tasks it names. Watch is called, on the
// connection's read loop (it must not block), with the context and
// Requester of the call that created the task upstreamID on server's
// session of version, and the id it was given (Outward's): it returns what
// to call with each status notification of that task (the server's
// params, unchanged; called on the read loop: it must not block), or nil
// when the call's client cannot be told.
type TaskWatcher interface {
	Watch(ctx context.Context, r Requester, server, version, upstreamID, outward string) func(params json.RawMessage)
}

// taskNotes are the receivers of a connection's tasks' status
// notifications, by the server's task id.
type taskNotes struct {
	mu    sync.Mutex
	m     map[string]func(json.RawMessage)
	order []string    // ids as added, oldest first (some maybe gone)
	early []earlyNote // of tasks not known yet, oldest first
}

// earlyNote is a notification of a task not known when it was read.
type earlyNote struct {
	id     string
	params json.RawMessage
	last   bool // its status is terminal
	at     time.Time
}

// add has the status notifications of the task id go to to, and returns
// those of it read before (early), to pass on now. When a receiver of id
// is kept already (the server gave the id of a task still watched again),
// neither is kept (which creator a status is of cannot be told: none is
// told rather than perhaps the wrong one), and reused is true.
func (t *taskNotes) add(id string, to func(json.RawMessage)) (early []earlyNote, reused bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.early[:0]
	for _, n := range t.early {
		switch {
		case time.Since(n.at) > earlyNoteAge:
		case n.id == id:
			early = append(early, n)
		default:
			kept = append(kept, n)
		}
	}
	clear(t.early[len(kept):])
	t.early = kept
	if _, ok := t.m[id]; ok {
		delete(t.m, id)
		return nil, true
	}
	if t.m == nil {
		t.m = map[string]func(json.RawMessage){}
	}
	t.m[id] = to
	t.order = append(slices.DeleteFunc(t.order, func(o string) bool { return o == id }), id) // (an earlier entry of id would evict it early)
	for len(t.m) > maxTaskNotes && len(t.order) > 0 {
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
	if len(t.order) > 2*maxTaskNotes { // (ids removed at their end)
		kept := make([]string, 0, len(t.m))
		for _, id := range t.order {
			if _, ok := t.m[id]; ok {
				kept = append(kept, id)
			}
		}
		t.order = kept
	}
	return early, false
}

// keep keeps n, of a task not known yet (the oldest dropped past
// maxEarlyNotes).
func (t *taskNotes) keep(n earlyNote) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.early) >= maxEarlyNotes {
		t.early = append(t.early[:0], t.early[1:]...)
	}
	t.early = append(t.early, n)
}

// to returns the receiver of the task id's notifications, forgetting it
// when the task ended (last).
func (t *taskNotes) to(id string, last bool) func(json.RawMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.m[id]
	if last {
		delete(t.m, id)
	}
	return f
}

// reset forgets every task (a new session: the tasks of the old one are
// gone, and the server may give their ids again).
func (t *taskNotes) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m, t.order, t.early = nil, nil, nil
}

// taskStatusOf returns the taskId and status of params, a
// notifications/tasks/status's (a JSON object; ok false otherwise, or
// without a string taskId).
func taskStatusOf(params []byte) (id, status string, ok bool) {
	var arr [16]rawjson.Member
	ms, err := rawjson.Members(arr[:0], params)
	if err != nil {
		return "", "", false
	}
	tid, found := rawjson.Find(ms, "taskId")
	if !found {
		return "", "", false
	}
	if id, ok = rawjson.String(tid.Value); !ok {
		return "", "", false
	}
	if st, found := rawjson.Find(ms, "status"); found {
		status, _ = rawjson.String(st.Value)
	}
	return id, status, true
}

// terminalStatus reports whether a task of status has ended.
func terminalStatus(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// taskStatusKey is the context key of WithTaskStatus.
type taskStatusKey struct{}

// WithTaskStatus returns ctx under which a tasks request (Manager.Request)
// has the status notifications read on its own stream (its event stream,
// or, on a connection without one, said by the server to belong to it)
// passed to to (the server's params; called on the read loop: it must not
// block) instead of to the receiver of the task on this connection, if
// any: the client polling a task is the client of the task, whichever
// replica's connection created it.
func WithTaskStatus(ctx context.Context, to func(params json.RawMessage)) context.Context {
	return context.WithValue(ctx, taskStatusKey{}, to)
}

// taskStatusFrom returns WithTaskStatus's receiver of ctx, or nil.
func taskStatusFrom(ctx context.Context) func(json.RawMessage) {
	to, _ := ctx.Value(taskStatusKey{}).(func(json.RawMessage))
	return to
}

// callTaskStatus passes on a status notification read on the stream of
// the call fc (nil: of none): to fc's receiver, when it has one, else as
// taskStatus does.
func (c *Conn) callTaskStatus(params json.RawMessage, fc *call) {
	if fc != nil && fc.taskStatus != nil {
		fc.taskStatus(params)
		return
	}
	c.taskStatus(params)
}

// taskStatus passes on a status notification read from the server (its
// params) to the receiver of its task, if any (see taskNotes).
func (c *Conn) taskStatus(params json.RawMessage) {
	id, status, ok := taskStatusOf(params)
	if !ok {
		c.log.Debug("a task status notification without a taskId: dropped")
		return
	}
	last := terminalStatus(status)
	to := c.taskNotes.to(id, last)
	if to == nil {
		// (Of a task no caller of this connection created, or not yet:
		// kept a moment, then dropped.)
		c.taskNotes.keep(earlyNote{id: id, params: params, last: last, at: time.Now()})
		return
	}
	to(params)
}

// watchTask has the status notifications of the task upstream, named
// outward, that a call of r created go where ids says (TaskWatcher). It
// returns what passes on the notifications of the task read before its
// CreateTaskResult (nil: none): the caller calls it once the result was
// handed on, so that no client reads a status of a task id it has not
// been given yet.
func (c *Conn) watchTask(ctx context.Context, ids TaskIDs, r Requester, version, upstream, outward string) (flush func()) {
	w, ok := ids.(TaskWatcher)
	if !ok {
		return nil
	}
	to := w.Watch(ctx, r, c.cfg.Name, version, upstream, outward)
	if to == nil {
		return nil
	}
	early, reused := c.taskNotes.add(upstream, to)
	if reused {
		c.log.Warn("the server gave the id of a task still watched to another task: the status notifications of neither are passed on", "task", upstream)
		return nil
	}
	if len(early) == 0 {
		return nil
	}
	return func() {
		for _, n := range early {
			to(n.params)
			if n.last {
				c.taskNotes.to(upstream, true)
			}
		}
	}
}

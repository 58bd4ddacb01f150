package conn

import (
	"context"
	"encoding/json"
	"sync"

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

// MethodTaskStatus is 2025-11-25's status notification of a task.
const MethodTaskStatus = "notifications/tasks/status"

// maxTaskNotes bounds the tasks a connection keeps the receivers of the
// status notifications of; past it, the oldest are forgotten.
const maxTaskNotes = 1024

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
	order []string // ids as added, oldest first (some maybe gone)
}

// add has the status notifications of the task id go to to.
func (t *taskNotes) add(id string, to func(json.RawMessage)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]func(json.RawMessage){}
	}
	t.m[id] = to
	t.order = append(t.order, id)
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
	t.m, t.order = nil, nil
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

// taskStatus passes on a status notification read from the server (its
// params) to the receiver of its task, if any (see taskNotes).
func (c *Conn) taskStatus(params json.RawMessage) {
	id, status, ok := taskStatusOf(params)
	if !ok {
		c.log.Debug("a task status notification without a taskId: dropped")
		return
	}
	to := c.taskNotes.to(id, terminalStatus(status))
	if to == nil {
		c.log.Debug("a status notification of a task no caller of this connection created: dropped")
		return
	}
	to(params)
}

// watchTask has the status notifications of the task upstream, named
// outward, that a call of r created go where ids says (TaskWatcher).
func (c *Conn) watchTask(ctx context.Context, ids TaskIDs, r Requester, version, upstream, outward string) {
	w, ok := ids.(TaskWatcher)
	if !ok {
		return
	}
	if to := w.Watch(ctx, r, c.cfg.Name, version, upstream, outward); to != nil {
		c.taskNotes.add(upstream, to)
	}
}

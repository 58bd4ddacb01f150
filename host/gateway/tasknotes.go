package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway/wire"
)

// Status notifications of 2025-11-25's tasks (notifications/tasks/status).
//
// The upstream connection catches them (conn's tasknotes.go) and passes
// each to the receiver Watch gave for its task when the task was created:
// the go-sdk session of the client whose call created it, the one session
// that holds the task's id (sealed for its principal; a session belongs to
// one principal). The notification goes to that session only, with the
// gateway's id of the task in place of the upstream's (renameTask: taskId
// and _meta's related-task), written by the front that holds the session
// (a NoteWriter: the go-sdk server cannot send a method it does not know).
// A notification of a task no client of this replica's connections created
// is dropped. They are written apart from the connection's read loop, by
// one goroutine of the gateway's, in order, from a bounded queue (past it,
// dropped and logged: a client that does not read must not hold the
// upstream's read loop).

// maxQueuedNotes bounds the status notifications waiting to be written.
const maxQueuedNotes = 256

// NoteWriter is a front that writes notifications the go-sdk server cannot
// send (a method it does not know) to its sessions' clients.
// AddNoteWriter registers one.
type NoteWriter interface {
	// WriteNote writes msg, a JSON-RPC notification, to the client of ss
	// outside any call, and reports whether ss is the front's (written,
	// or dropped when its client cannot be written to now).
	WriteNote(ctx context.Context, ss *mcp.ServerSession, msg []byte) bool
}

// noteWriters are the NoteWriters registered.
type noteWriters struct {
	mu   sync.Mutex
	list []NoteWriter
}

// AddNoteWriter registers w; remove undoes it.
func (g *Gateway) AddNoteWriter(w NoteWriter) (remove func()) {
	g.noteWriters.mu.Lock()
	g.noteWriters.list = append(g.noteWriters.list, w)
	g.noteWriters.mu.Unlock()
	return func() {
		g.noteWriters.mu.Lock()
		defer g.noteWriters.mu.Unlock()
		if i := slices.Index(g.noteWriters.list, w); i >= 0 {
			g.noteWriters.list = slices.Delete(g.noteWriters.list, i, i+1)
		}
	}
}

// writeNote writes msg to the client of ss through the front that holds
// it, and reports whether one did.
func (g *Gateway) writeNote(ctx context.Context, ss *mcp.ServerSession, msg []byte) bool {
	g.noteWriters.mu.Lock()
	list := slices.Clone(g.noteWriters.list)
	g.noteWriters.mu.Unlock()
	for _, w := range list {
		if w.WriteNote(ctx, ss, msg) {
			return true
		}
	}
	return false
}

// taskNote is a status notification to write to the client of ss.
type taskNote struct {
	ss  *mcp.ServerSession
	msg []byte
}

// startNotes starts g's writer of status notifications (owned by the
// gateway: it ends with its life; waitNotes waits for it).
func (t *taskTable) startNotes(g *Gateway) {
	t.notes = make(chan taskNote, maxQueuedNotes)
	t.notesDone = make(chan struct{})
	life := g.life
	go func() {
		defer close(t.notesDone)
		for {
			select {
			case <-life.Done():
				return
			case n := <-t.notes:
				if !g.writeNote(life, n.ss, n.msg) {
					g.log.Debug("a task's status notification: its session is not held here (ended, or its stream is on another replica): dropped")
				}
			}
		}
	}()
}

// waitNotes waits for the writer's end (the gateway's life ended).
func (t *taskTable) waitNotes() {
	if t.notesDone != nil {
		<-t.notesDone
	}
}

// Watch implements conn.TaskWatcher: the status notifications of a
// 2025-11-25 task go to the session of the client whose call created it
// (r's: a relayed call's Requester names its go-sdk session), under the
// id outward it was given; none when r names no session (a call without
// one, of a stateless client, say: nothing could reach it), or a session
// its front says is another principal's than the call's (which a session
// bound to its principal never is: a check, not a route).
func (t *taskIDs) Watch(ctx context.Context, r conn.Requester, _, _, upstream, outward string) func(json.RawMessage) {
	g := (*Gateway)(t)
	cl, ok := r.(interface{ Client() any })
	if !ok {
		return nil
	}
	ss, ok := cl.Client().(*mcp.ServerSession)
	if !ok || ss == nil {
		return nil
	}
	if p := g.sessionPrincipal(ss); p != nil && p.ID() != callerID(ctx) {
		g.log.Warn("a task created by a call of another principal than its session's: its status notifications are not passed on")
		return nil
	}
	return func(params json.RawMessage) {
		out, err := renameTask(params, func(id string) (string, bool) { return outward, id == upstream })
		if err != nil {
			return
		}
		select {
		case g.tasks.notes <- taskNote{ss: ss, msg: wire.Notification(conn.MethodTaskStatus, out)}:
		default:
			g.log.Warn("too many task status notifications waiting to be written: one dropped")
		}
	}
}

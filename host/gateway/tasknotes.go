package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// Status notifications of 2025-11-25's tasks (notifications/tasks/status).
//
// The upstream connection catches them (conn's tasknotes.go) and passes
// each to the receiver Watch gave for its task when the task was created:
// the go-sdk session of the client whose call created it, the one session
// that holds the task's id (sealed for its principal; a session belongs to
// one principal), named by its id where the front has ids (streamable
// HTTP: a replica's copy of the session may be evicted or rebuilt, and
// the session's stream held by another replica). The notification goes to that session only, with the
// gateway's id of the task in place of the upstream's (renameTask: taskId
// and _meta's related-task), written by the front that holds the session
// (a NoteWriter: the go-sdk server cannot send a method it does not know).
// A notification of a task no client of this replica's connections created
// is dropped. The receiver only hands the notification to the session's
// queue (a NoteQueue, the front's): neither the connection's read loop nor
// any goroutine shared by sessions writes to a client.

// NoteWriter is a front that writes notifications the go-sdk server cannot
// send (a method it does not know) to its sessions' clients.
// AddNoteWriter registers one.
type NoteWriter interface {
	// QueueNote hands msg, a JSON-RPC notification, to the queue of the
	// session of ss (a NoteQueue, which writes it to the client outside
	// any call), with key as its QueuedNote.Key, and reports whether ss is
	// the front's. It never blocks on the client.
	QueueNote(ss *mcp.ServerSession, key string, msg []byte) bool
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

// QueueNote hands msg to the queue of ss's session through the front that
// holds it (NoteWriter.QueueNote), and reports whether one did.
func (g *Gateway) QueueNote(ss *mcp.ServerSession, key string, msg []byte) bool {
	g.noteWriters.mu.Lock()
	list := slices.Clone(g.noteWriters.list)
	g.noteWriters.mu.Unlock()
	for _, w := range list {
		if w.QueueNote(ss, key, msg) {
			return true
		}
	}
	return false
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
		out, err := renameStatus(params, upstream, outward)
		if err != nil {
			return
		}
		if !g.QueueNote(ss, outward, wire.Notification(conn.MethodTaskStatus, out)) {
			g.log.Debug("a task's status notification: its session is not held here (ended, or evicted): dropped")
		}
	}
}

// noteSinkKey is the context key of WithNoteSink.
type noteSinkKey struct{}

// WithNoteSink returns ctx under which ServeTasks hands the status
// notifications the task's server sends on the request's own stream to
// sink (key and msg as NoteWriter.QueueNote's; it must not block): a front
// gives its session's queue.
func WithNoteSink(ctx context.Context, sink func(key string, msg []byte)) context.Context {
	return context.WithValue(ctx, noteSinkKey{}, sink)
}

// noteSinkOf returns WithNoteSink's sink of ctx, or nil.
func noteSinkOf(ctx context.Context) func(string, []byte) {
	sink, _ := ctx.Value(noteSinkKey{}).(func(string, []byte))
	return sink
}

// renameStatus is params, a server's notifications/tasks/status params of
// its task upstream, as the client is sent them: taskId is outward; of
// _meta, the protocol's members (of the server's hop) and the gateway's
// own are dropped, but for related-task, kept (as {"taskId": outward})
// only when it names upstream. It fails on params that are not an object
// or name another task.
func renameStatus(params json.RawMessage, upstream, outward string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil {
		return nil, err
	}
	var id string
	if obj == nil || json.Unmarshal(obj["taskId"], &id) != nil || id != upstream {
		return nil, errNotTask
	}
	obj["taskId"], _ = json.Marshal(outward)
	if raw, ok := obj["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			delete(obj, "_meta")
		} else {
			var rt struct {
				TaskID *string `json:"taskId"`
			}
			related := json.Unmarshal(meta[relatedTask], &rt) == nil && rt.TaskID != nil && *rt.TaskID == upstream
			for k := range meta {
				if mcpmeta.IsReserved(k) || mcpmeta.IsGateways(k) {
					delete(meta, k)
				}
			}
			if related {
				meta[relatedTask], _ = json.Marshal(map[string]string{"taskId": outward})
			}
			if len(meta) == 0 {
				delete(obj, "_meta")
			} else {
				obj["_meta"], _ = json.Marshal(meta)
			}
		}
	}
	return json.Marshal(obj)
}

package streamable

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Notifications the go-sdk server cannot send (a method it does not know:
// 2025-11-25's notifications/tasks/status, gateway.NoteWriter) are written
// on the session's standalone stream (its client's GET) through the
// connection of the session's transport, which the go-sdk server writes
// its own notifications through (keptTransport). The GET may be held by
// another replica: when this one holds none for the session, the
// notification is published on the sessions channel ("note SID REPLICA",
// sealed as every session change), and the replica holding the GET writes
// it (a replica holding the session without a GET drops it). While no
// replica holds a GET of the session (cluster.SessionStreamKey), a status
// of a task whose tasks/get or tasks/result POST is in flight here goes
// on that POST's own stream, before its response (deliverNote).

// keptTransport is the session's transport, keeping the connection it
// gives the go-sdk server.
type keptTransport struct {
	*mcp.StreamableServerTransport
	conn mcp.Connection
}

// Connect implements mcp.Transport.
func (t *keptTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.StreamableServerTransport.Connect(ctx)
	t.conn = c
	return c, err
}

// QueueNote implements gateway.NoteWriter: msg is queued for the
// standalone stream of the client of session ss.ID() (the session id, not
// the go-sdk session: this replica's copy of a session may have been
// evicted, or rebuilt, since the task was created); the session's queue
// writes it (deliverNote), on this replica or, through the sessions
// channel, the one holding the stream. When this replica no longer holds
// the session, the note is published for whichever replica does (through
// the front's queue of such notes: never on the caller's goroutine).
func (f *Front) QueueNote(ss *mcp.ServerSession, key string, msg []byte) bool {
	if ss == nil || ss.ID() == "" {
		return false
	}
	s, hs := f.heldSession(ss.ID())
	if hs != nil {
		s.mu.Lock()
		closing := hs.closing
		s.mu.Unlock()
		if !closing {
			hs.notes.Add(gateway.QueuedNote{Key: key, Msg: msg})
			return true
		}
	}
	c, err := f.openSession(ss.ID())
	if err != nil {
		return false // (not a session id of this front's)
	}
	f.unheldNotes.Add(gateway.QueuedNote{Key: c.SID + " " + key, Msg: []byte("note " + c.SID + " " + f.replica + "\n" + string(msg))})
	return true
}

// publishNote publishes n, a "note" change (QueueNote), on the goroutine
// of the front's queue of notes of sessions not held here.
func (f *Front) publishNote(ctx context.Context, n gateway.QueuedNote) {
	if err := f.state.Publish(ctx, cluster.SessionsChannel, f.sealChange(string(n.Msg))); err != nil {
		f.log.Warn("publishing a session's notification", "error", err)
	}
}

// deliverNote writes n on hs's standalone stream, on the goroutine of hs's
// queue; when this replica holds no stream of hs, n goes on the stream of
// a tasks/get or tasks/result POST of n's task in flight here (a
// notification related to that request, which MCP lets a server send on
// the request's stream: a client that opened no GET, and polls or awaits
// its task, gets its statuses), else it is published for the replica that
// holds a stream (unless n came from another replica).
//
// Whether another replica holds a GET of the session is read from the
// shared state (cluster.SessionStreamKey, which the replica holding a GET
// sets, markStream): then n is published for it, as before. A note relayed
// by another replica (a status its connection caught) is written on a GET
// only.
func (s *httpSessions) deliverNote(ctx context.Context, hs *httpSession, n gateway.QueuedNote) {
	if err := s.writeNote(ctx, hs, n.Msg); err == nil || n.Relayed {
		return
	}
	if s.writePolled(ctx, hs, n) {
		return
	}
	s.publish(ctx, "note "+hs.sid+" "+s.f.replica+"\n"+string(n.Msg))
}

// noteFlushWait bounds how long a tasks POST waits, before its response,
// for the statuses its request was sent to be written on its stream.
const noteFlushWait = time.Second

// poll records rw, the writer of a 2025-11-25 tasks/get or tasks/result
// POST of hs about the task its client holds as id, until forget.
func (s *httpSessions) poll(hs *httpSession, id string, rw *relayWriter) (forget func()) {
	s.mu.Lock()
	if hs.polls == nil {
		hs.polls = map[string][]*relayWriter{}
	}
	hs.polls[id] = append(hs.polls[id], rw)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		list := hs.polls[id]
		if i := slices.Index(list, rw); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(hs.polls, id)
		} else {
			hs.polls[id] = list
		}
	}
}

// writePolled writes n, a status of the task n.Key, on the stream of the
// latest POST of hs polling that task here (poll), unless another replica
// holds a standalone stream of hs, and reports whether it did (not after
// the POST's response).
func (s *httpSessions) writePolled(ctx context.Context, hs *httpSession, n gateway.QueuedNote) bool {
	if n.Key == "" {
		return false
	}
	s.mu.Lock()
	var rw *relayWriter
	if list := hs.polls[n.Key]; len(list) > 0 {
		rw = list[len(list)-1]
	}
	s.mu.Unlock()
	return rw != nil && !s.streamElsewhere(ctx, hs) && rw.event(n.Msg) == nil
}

// markStream records, in the shared state, that this replica holds a
// standalone stream of hs (SessionStreamKey), as it opens.
func (s *httpSessions) markStream(ctx context.Context, hs *httpSession) {
	if err := s.f.state.Put(ctx, cluster.SessionStreamKey(hs.sid), []byte(s.f.replica), s.idle+s.idle/4); err != nil {
		s.f.log.Warn("recording a session's standalone stream", "error", err)
	}
}

// unmarkStream undoes markStream once this replica holds no standalone
// stream of hs, unless another replica marked one since.
func (s *httpSessions) unmarkStream(ctx context.Context, hs *httpSession) {
	key := cluster.SessionStreamKey(hs.sid)
	if b, err := s.f.state.Get(ctx, key); err != nil || string(b) != s.f.replica {
		return
	}
	if err := s.f.state.Delete(ctx, key); err != nil {
		s.f.log.Warn("clearing a session's standalone stream", "error", err)
	}
}

// streamElsewhere reports whether another replica holds a standalone
// stream of hs, as the shared state says (markStream); false when it
// cannot be read.
func (s *httpSessions) streamElsewhere(ctx context.Context, hs *httpSession) bool {
	b, err := s.f.state.Get(ctx, cluster.SessionStreamKey(hs.sid))
	return err == nil && len(b) > 0 && string(b) != s.f.replica
}

// flushNotes waits, up to noteFlushWait or ctx's end, for hs's queue to
// have written what it holds, when this replica holds no standalone
// stream of hs (a POST's statuses then precede its response on its own
// stream).
func (s *httpSessions) flushNotes(ctx context.Context, hs *httpSession) {
	s.mu.Lock()
	gets := hs.gets
	s.mu.Unlock()
	if gets > 0 {
		return
	}
	timer := time.NewTimer(noteFlushWait)
	defer timer.Stop()
	select {
	case <-hs.notes.Idle():
	case <-timer.C:
	case <-ctx.Done():
	}
}

// writeNote writes msg, a notification, on hs's standalone stream, if this
// replica holds one.
func (s *httpSessions) writeNote(ctx context.Context, hs *httpSession, msg []byte) error {
	if hs.conn == nil {
		return fmt.Errorf("the session has no connection")
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return fmt.Errorf("decoding the notification: %w", err)
	}
	if err := hs.conn.Write(ctx, m); err != nil {
		return fmt.Errorf("writing the notification: %w", err)
	}
	return nil
}

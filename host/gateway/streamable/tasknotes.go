package streamable

import (
	"context"
	"fmt"

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
// it (a replica holding the session without a GET drops it).

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
// queue; when this replica holds no stream of hs, n is published for the
// one that does (unless n came from another replica).
func (s *httpSessions) deliverNote(ctx context.Context, hs *httpSession, n gateway.QueuedNote) {
	if err := s.writeNote(ctx, hs, n.Msg); err != nil && !n.Relayed {
		s.publish(ctx, "note "+hs.sid+" "+s.f.replica+"\n"+string(n.Msg))
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

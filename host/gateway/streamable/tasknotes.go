package streamable

import (
	"context"
	"fmt"

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

// WriteNote implements gateway.NoteWriter: msg goes to the standalone
// stream of ss's client, on this replica or the one holding it.
func (f *Front) WriteNote(ctx context.Context, ss *mcp.ServerSession, msg []byte) bool {
	if ss == nil || ss.ID() == "" {
		return false
	}
	s, hs := f.heldSession(ss.ID())
	if hs == nil || hs.ss != ss {
		return false
	}
	if err := s.writeNote(ctx, hs, msg); err != nil {
		s.publish(ctx, "note "+hs.sid+" "+f.replica+"\n"+string(msg))
	}
	return true
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

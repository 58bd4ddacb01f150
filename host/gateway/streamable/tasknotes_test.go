package streamable

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway"
)

// stalledConn is the connection of a session whose client does not read
// its standalone stream: every Write blocks until release is closed. (A
// fake: a real client that stops reading blocks go-sdk's SSE write only
// once the kernel's socket buffers, of a size the test cannot know, are
// full.)
type stalledConn struct {
	mcp.Connection
	release chan struct{}
	wrote   chan jsonrpc.Message
}

func (c *stalledConn) Write(_ context.Context, m jsonrpc.Message) error {
	<-c.release
	c.wrote <- m
	return nil
}

// TestNoteFromAnotherReplicaNeverBlocks: a notification another replica
// publishes for a session whose stream is held here ("note SID REPLICA")
// is handed to the session's queue: changed, which runs on the shared
// state's one subscription goroutine, returns at once even though the
// client reads nothing, and the queue writes it once the client reads.
// On the old code changed wrote it itself and blocked every channel of
// the replica.
func TestNoteFromAnotherReplicaNeverBlocks(t *testing.T) {
	t.Parallel()
	f := &Front{replica: "b", log: hclog.NewNullLogger()}
	s := newHTTPSessions(f, time.Minute, sessionCaps{max: 1})
	c := &stalledConn{release: make(chan struct{}), wrote: make(chan jsonrpc.Message, 128)}
	hs := &httpSession{sid: "S", conn: c, calls: map[string]context.CancelFunc{}}
	hs.notes = gateway.NewNoteQueue(f.log, func(ctx context.Context, n gateway.QueuedNote) { s.deliverNote(ctx, hs, n) })
	defer hs.notes.Close()
	s.bySID["S"] = hs
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			s.changed([]byte("note S a\n" + `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"mcpt-x","status":"working"}}`))
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		close(c.release)
		t.Fatal("changed blocked on a client that does not read")
	}
	close(c.release)
	select {
	case m := <-c.wrote:
		if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "notifications/tasks/status" {
			t.Errorf("wrote %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the note was never written")
	}
}

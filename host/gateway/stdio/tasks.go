package stdio

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/wire"
)

// serveTasks answers a tasks request (gateway.IsTasksRequest), which the
// go-sdk server does not know, on a worker: the gateway routes it to the
// task's server (gateway.ServeTasks).
func (c *relayConn) serveTasks(m *wire.Message) {
	key, err := m.IDKey()
	if err != nil {
		return
	}
	var ver string
	if v := c.version.Load(); v != nil {
		ver = *v
	}
	var caps []byte
	if p := c.caps.Load(); p != nil {
		caps = *p
	}
	// (m is on the read loop's stack: the worker parses the line again.)
	line := m.Raw // (the read loop gives the line up: Line owns it)
	c.run(func() {
		var mm wire.Message
		if wire.Parse(&mm, line) != nil {
			return
		}
		ctx := gateway.WithNoteSink(c.calls, func(key string, msg []byte) { c.notes.Add(gateway.QueuedNote{Key: key, Msg: msg}) })
		out := c.g.ServeTasks(ctx, &mm, ver, caps)
		c.forget(key)
		c.WriteLine(out)
	})
}

// QueueNote implements gateway.NoteWriter: msg, a notification the go-sdk
// server cannot send (a task's status), is queued for the client when ss is
// this connection's session (written by the connection's queue, never by
// the caller: a client that does not read its stdout holds only that).
func (c *relayConn) QueueNote(ss *mcp.ServerSession, key string, msg []byte) bool {
	select {
	case <-c.connected:
	default:
		return false
	}
	if ss == nil || ss != c.ss {
		return false
	}
	c.notes.Add(gateway.QueuedNote{Key: key, Msg: msg})
	return true
}

package stdio

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
		out := c.g.ServeTasks(c.calls, &mm, ver, caps)
		c.forget(key)
		c.WriteLine(out)
	})
}

// WriteNote implements gateway.NoteWriter: msg, a notification the go-sdk
// server cannot send (a task's status), is written to the client when ss
// is this connection's session.
func (c *relayConn) WriteNote(_ context.Context, ss *mcp.ServerSession, msg []byte) bool {
	select {
	case <-c.connected:
	default:
		return false
	}
	if ss == nil || ss != c.ss {
		return false
	}
	if err := c.WriteLine(msg); err != nil {
		c.g.Logger().Debug("writing a notification to the client failed", "error", err)
	}
	return true
}

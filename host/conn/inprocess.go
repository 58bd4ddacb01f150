package conn

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inProcessTransport links the host to an *mcp.Server of the same program
// (transport "inprocess"): each connection is a new session of that server
// over a pair of in-memory transports, with no process and no encoding
// beyond the go-sdk's own. The server session lives until the connection
// closes or the manager does.
type inProcessTransport struct {
	server *mcp.Server
	life   context.Context // the manager's: ends the server session on Close
}

func (t *inProcessTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := t.server.Connect(t.life, st, nil)
	if err != nil {
		return nil, fmt.Errorf("starting the in-process server's session: %w", err)
	}
	c, err := ct.Connect(ctx)
	if err != nil {
		ss.Close()
		return nil, err
	}
	return &inProcessConn{Connection: c, session: ss}, nil
}

// inProcessConn is the client side of an in-process session; closing it
// also ends the server's side.
type inProcessConn struct {
	mcp.Connection
	session *mcp.ServerSession
}

func (c *inProcessConn) Close() error {
	err := c.Connection.Close()
	c.session.Close()
	return err
}

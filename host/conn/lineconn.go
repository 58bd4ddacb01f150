package conn

import (
	"context"
	"errors"
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/internal/lineconn"
	"github.com/mcphost/mcphost/internal/lineio"
)

// errLineTooLong is returned when a server sends a message over the size cap.
var errLineTooLong = errors.New("message from the server exceeds the size limit")

// lineConn is the newline-delimited JSON-RPC connection to a stdio server. The
// go-sdk client runs on it as on any mcp.Connection; beside that, its raw
// lane (rawLane) sends pre-encoded requests and returns the server's
// response bytes without decoding them, for the gateway's relay path.
type lineConn struct {
	lineconn.Conn
	*rawLane
	noise noise
	// sent, if set, sees each message the go-sdk client writes, before
	// it is written (set before the connection is handed to the go-sdk).
	sent func(jsonrpc.Message)
}

// newLineConn starts a connection on r and w; route, if set, sees each
// message the go-sdk is handed, on the read loop (see routeNote): so a
// notification is routed to its call before the call's raw response, read
// after it, is returned. Lines that do not look like JSON-RPC are skipped,
// and logged to log if it is set (see noise).
func newLineConn(r io.ReadCloser, w io.WriteCloser, maxLine int, route func(jsonrpc.Message) jsonrpc.Message, log hclog.Logger) *lineConn {
	c := &lineConn{noise: noise{log: log}}
	c.rawLane = newRawLane(c.WriteLine)
	c.Start(r, w, lineconn.Config{ // the read loop ends when r is closed or the server closes its stdout
		MaxLine: maxLine,
		Line:    c.line,
		Batches: true,
		End:     c.end,
		Written: func(msg jsonrpc.Message) {
			c.written(msg)
			if c.sent != nil {
				c.sent(msg)
			}
		},
		Decoded: route,
	})
	return c
}

// line takes a line off the go-sdk's path: one that is not JSON-RPC (a
// banner, a warning), which is skipped, or a raw call's response.
func (c *lineConn) line(line []byte) bool {
	if !looksJSONRPC(line) {
		c.noise.skip(line)
		return true
	}
	return c.response(line)
}

// end ends the read loop: pending raw calls get no response. Read reports
// err.
func (c *lineConn) end(err error) error {
	c.noise.end()
	if errors.Is(err, lineio.ErrTooLong) {
		err = errLineTooLong
	}
	c.fail(err)
	return err
}

// CallRaw sends tools/call for tool with the given raw JSON arguments (nil
// for none) and returns the server's raw response line, as StartRaw does
// (and with its errors), waiting for it.
func (c *lineConn) CallRaw(ctx context.Context, tool string, args, caps []byte) ([]byte, error) {
	type result struct {
		resp []byte
		err  error
	}
	ch := make(chan result, 1)
	if err := c.StartRaw(ctx, rawRequest{tool: tool, args: args, caps: caps}, func(resp []byte, err error) { ch <- result{resp, err} }); err != nil {
		return nil, err
	}
	r := <-ch
	return r.resp, r.err
}

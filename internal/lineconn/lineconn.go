// Package lineconn is a newline-delimited JSON-RPC connection (the MCP stdio
// transport) on which the go-sdk runs as on any mcp.Connection, with hooks
// that let its owner take lines off the go-sdk's path. The host's connection
// to a stdio server (its raw lane) and the gateway's connection to its stdio
// client (the relay) are both built on it.
package lineconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
	"github.com/mcphost/mcphost/internal/lineio"
)

// Config is what a Conn's owner adds to it. Every hook is optional.
type Config struct {
	// MaxLine caps one incoming message; a longer one ends the read loop
	// with lineio.ErrTooLong.
	MaxLine int

	// Line sees every incoming line first, on the read loop, and owns it. It
	// returns true if it consumed the line (answered it, or routed it
	// elsewhere); otherwise the line is passed on as by Pass.
	Line func(line []byte) (consumed bool)

	// Batches accepts a line holding a JSON array of messages (protocol
	// versions before 2025-06-18); they are handed to Read one by one, or,
	// if one does not decode, none is.
	Batches bool

	// Invalid handles a passed line that does not decode as a JSON-RPC
	// message, and reading goes on. Without it, the decoding error ends the
	// read loop.
	Invalid func(line []byte, err error)

	// End maps the error that ended the read loop (the read error, io.EOF at
	// the end of the stream, lineio.ErrTooLong, a decoding error, or io.EOF
	// when the Conn was closed) to the one Read reports once the messages
	// are read. It runs on the read loop, before Read can report it.
	End func(err error) error

	// Written sees each message Write encoded, just before it is written.
	Written func(msg jsonrpc.Message)

	// Decoded sees each message passed on, before Read can return it, and
	// may replace it. It runs where the line was passed (on the read loop
	// for lines Line did not consume), so it sees the messages in the order
	// they arrived, before any line read after them.
	Decoded func(msg jsonrpc.Message) jsonrpc.Message

	// Closing runs in Close, once no line can be written any more and before
	// the streams are closed.
	Closing func()
}

// Conn is a newline-delimited JSON-RPC connection on r and w. It implements
// mcp.Connection. Its owner embeds it and calls Start once.
type Conn struct {
	r   io.ReadCloser
	w   io.WriteCloser
	cfg Config

	out      *lineio.Writer
	incoming chan jsonrpc.Message // unbuffered: a message is handed straight to a reader
	done     chan struct{}        // closed when the read loop ends
	readErr  error                // why it ended, as End mapped it; valid after done
	closed   chan struct{}
	close1   sync.Once
	closeErr error
}

// Start sets c up on r and w and starts its read loop, which ends when r
// reaches its end or fails, or the Conn is closed. Hooks may use c (and
// whatever they capture) as soon as Start is called.
func (c *Conn) Start(r io.ReadCloser, w io.WriteCloser, cfg Config) {
	c.r, c.w, c.cfg = r, w, cfg
	c.out = lineio.NewWriter(w)
	c.incoming = make(chan jsonrpc.Message)
	c.done = make(chan struct{})
	c.closed = make(chan struct{})
	go c.readLoop()
}

func (c *Conn) readLoop() {
	defer close(c.done)
	var stop error
	err := lineio.ReadLines(c.r, c.cfg.MaxLine, func(line []byte) bool {
		if c.cfg.Line != nil && c.cfg.Line(line) {
			return true
		}
		stop = c.pass(line)
		return stop == nil
	})
	if err == nil {
		err = stop
	}
	if c.cfg.End != nil {
		err = c.cfg.End(err)
	}
	c.readErr = err
}

// Pass decodes line and hands its messages to Read, as the read loop does
// with a line Line did not consume; it may be called from any goroutine, also
// after the read loop ended. It returns false if the Conn was closed first,
// or if line does not decode and there is no Invalid hook.
func (c *Conn) Pass(line []byte) bool { return c.pass(line) == nil }

// pass returns nil, a decoding error (without Invalid), or io.EOF if the
// Conn was closed.
func (c *Conn) pass(line []byte) error {
	if c.cfg.Batches && line[0] == '[' {
		msgs, err := decodeBatch(line)
		if err != nil {
			return c.invalid(line, err)
		}
		for _, m := range msgs {
			if err := c.deliver(m); err != nil {
				return err
			}
		}
		return nil
	}
	m, err := jsonrpcmsg.Decode(line)
	if err != nil {
		return c.invalid(line, err)
	}
	return c.deliver(m)
}

func (c *Conn) invalid(line []byte, err error) error {
	if c.cfg.Invalid == nil {
		return err
	}
	c.cfg.Invalid(line, err)
	return nil
}

func (c *Conn) deliver(m jsonrpc.Message) error {
	if c.cfg.Decoded != nil {
		m = c.cfg.Decoded(m)
	}
	select {
	case c.incoming <- m:
		return nil
	case <-c.closed:
		return io.EOF
	}
}

// decodeBatch decodes a JSON array of messages, all or none.
func decodeBatch(line []byte) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("invalid batch from server: %w", err)
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, r := range raws {
		m, err := jsonrpcmsg.Decode(r)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// SessionID implements mcp.Connection: a stdio connection has none.
func (c *Conn) SessionID() string { return "" }

// Read returns the next passed message. Once the read loop has ended and
// every message handed over is read, it returns the error the loop ended
// with (io.EOF if none); after Close, io.EOF.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.done:
		// Messages handed over by Pass after the loop ended are still delivered.
		select {
		case m := <-c.incoming:
			return m, nil
		default:
		}
		if c.readErr == nil {
			return nil, io.EOF
		}
		return nil, c.readErr
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write encodes msg and writes it as one line.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if c.cfg.Written != nil {
		c.cfg.Written(msg)
	}
	return c.out.WriteLine(data)
}

// WriteLine writes one pre-encoded message. It may be called concurrently;
// after Close it fails with io.ErrClosedPipe.
func (c *Conn) WriteLine(data []byte) error { return c.out.WriteLine(data) }

// Close stops the hand-over of messages (Read and Pass return), waits for
// lines being written, runs Closing, and closes w, then r. It returns the
// same error every time.
func (c *Conn) Close() error {
	c.close1.Do(func() {
		close(c.closed)
		c.out.Close()
		if c.cfg.Closing != nil {
			c.cfg.Closing()
		}
		c.closeErr = errors.Join(c.w.Close(), c.r.Close())
	})
	return c.closeErr
}

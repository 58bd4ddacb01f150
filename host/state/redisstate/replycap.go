package redisstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// ErrReplyTooLarge is the error of a call whose reply announced more than
// the backend accepts (Options.MaxReplyBytes, or too many or too deeply
// nested elements), or broke the protocol: the connection is closed before
// go-redis reads the announcement, so nothing of the announced size is
// allocated.
var ErrReplyTooLarge = errors.New("the reply is too large or malformed")

// DefaultMaxReplyBytes is Options.MaxReplyBytes's default.
const DefaultMaxReplyBytes = 32 << 20

// Limits of a reply besides its bytes: go-redis allocates the slice of an
// aggregate (16 bytes an element, more for a map) when it reads its
// header, before any element arrives, so the elements announced and not
// yet received are capped, as is the nesting (each level one such
// allocation, and a frame of go-redis's recursive reader).
const (
	maxPendingElements = 1 << 17
	maxDepth           = 32
	maxLineBytes       = 64 << 10 // a simple string, error or number line
)

// capDialer returns dial with every connection's reads checked by a
// replyCap of maxBytes.
//
// go-redis (v9) has no option that caps a reply: its reader allocates a
// bulk string of the length announced in its header (`$2000000000\r\n`),
// and an aggregate's slice of the count announced, before reading either.
// A hostile server, or whoever sits on a redis:// connection, would make
// every replica allocate gigabytes with a few bytes. This is hand-written
// for want of such an option: a small RESP scanner under go-redis's buffer
// that sees every byte before go-redis does and fails the read that
// completes an announcement over the limits.
func capDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error), maxBytes int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := &capConn{Conn: c, s: replyScanner{maxBytes: maxBytes}}
		if sc, ok := c.(syscall.Conn); ok {
			// go-redis checks a pooled connection's health through its
			// file descriptor (a peek, which reads nothing): keep it.
			return &capSysConn{capConn: cc, sc: sc}, nil
		}
		return cc, nil
	}
}

// capConn is a connection whose reads pass through a replyScanner. Reads
// are go-redis's, one at a time per connection.
type capConn struct {
	net.Conn
	s   replyScanner
	err error // sticky: once a reply is refused, the connection is done
}

func (c *capConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if serr := c.s.scan(p[:n]); serr != nil {
			// None of these bytes reaches go-redis: the announcement that
			// broke the limits is never parsed. The connection is closed
			// (go-redis drops it on a read error anyway).
			c.err = serr
			c.Conn.Close()
			return 0, serr
		}
	}
	if err != nil && c.s.midReply() {
		// A read that fails inside a reply ends the connection: go-redis
		// keeps a Pub/Sub connection whose read timed out (ReceiveTimeout
		// takes a timeout for a quiet channel) and parses what comes next
		// as a new reply, while the scanner would still count those bytes
		// as the rest of the cut one, and check none of them. The error is
		// not a timeout, so that go-redis drops the connection.
		c.err = fmt.Errorf("redis state: the connection failed inside a reply (%s): %w", err.Error(), io.ErrUnexpectedEOF)
		c.Conn.Close()
		return n, c.err
	}
	return n, err
}

// capSysConn is a capConn of a connection with a file descriptor.
type capSysConn struct {
	*capConn
	sc syscall.Conn
}

func (c *capSysConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }

// replyScanner follows the RESP2/RESP3 replies in a byte stream, without
// keeping them, and fails when one goes over its limits.
type replyScanner struct {
	maxBytes int64

	state    int   // scanType, scanLine, scanBulk
	typ      byte  // of the element whose header is being read
	lineLen  int   // bytes of the header line so far
	num      int64 // the header's number so far
	neg      bool  // the number is negative
	digits   bool  // the number has a digit
	bulkLeft int64 // bytes of the bulk (and its CRLF) still to come
	replyLen int64 // bytes of the current top-level reply so far
	stack    []frame
	pending  int64 // elements announced by aggregates and not yet received
}

type frame struct {
	left int64 // elements still to come
	attr bool  // an attribute map: its end completes no element of its parent
}

const (
	scanType = iota
	scanLine
	scanBulk
)

func (s *replyScanner) fail(format string, args ...any) error {
	return fmt.Errorf("redis state: %w: %s", ErrReplyTooLarge, fmt.Sprintf(format, args...))
}

// scan follows p, the next bytes of the stream.
func (s *replyScanner) scan(p []byte) error {
	for i := 0; i < len(p); {
		if s.state == scanBulk {
			n := min(int64(len(p)-i), s.bulkLeft)
			s.bulkLeft -= n
			s.replyLen += n
			i += int(n)
			if s.bulkLeft == 0 {
				s.state = scanType
				s.complete()
			}
			continue
		}
		b := p[i]
		i++
		s.replyLen++
		if s.replyLen > s.maxBytes+maxLineBytes {
			return s.fail("a reply longer than %d bytes", s.maxBytes)
		}
		if s.state == scanType {
			s.typ, s.state = b, scanLine
			s.lineLen, s.num, s.neg, s.digits = 0, 0, false, false
			switch s.typ {
			case '$', '!', '=', '*', '%', '~', '>', '|', // lengths
				'+', '-', ':', ',', '#', '(', '_': // lines
			default:
				return s.fail("unknown reply type %q", s.typ)
			}
			continue
		}
		// scanLine
		s.lineLen++
		if s.lineLen > maxLineBytes {
			return s.fail("a reply line longer than %d bytes", maxLineBytes)
		}
		if b == '\n' {
			if err := s.header(); err != nil {
				return err
			}
			continue
		}
		if b == '\r' || !s.counted() {
			continue
		}
		switch {
		case b == '-' && !s.digits && !s.neg:
			s.neg = true
		case b >= '0' && b <= '9':
			s.digits = true
			s.num = s.num*10 + int64(b-'0')
			if s.num > s.maxBytes || s.num > maxPendingElements && s.aggregate() {
				return s.fail("a reply announcing more than the limit")
			}
		default:
			return s.fail("a length that is not a number")
		}
	}
	return nil
}

// midReply reports whether the stream stopped inside a reply.
func (s *replyScanner) midReply() bool {
	return s.state != scanType || len(s.stack) > 0
}

// counted reports whether the element's line is a length or count.
func (s *replyScanner) counted() bool {
	switch s.typ {
	case '$', '!', '=', '*', '%', '~', '>', '|':
		return true
	}
	return false
}

func (s *replyScanner) aggregate() bool {
	switch s.typ {
	case '*', '%', '~', '>', '|':
		return true
	}
	return false
}

// header handles the end of an element's line.
func (s *replyScanner) header() error {
	s.state = scanType
	if !s.counted() {
		s.complete()
		return nil
	}
	if !s.digits {
		return s.fail("a length that is not a number")
	}
	if s.neg { // a null ($-1, *-1)
		s.complete()
		return nil
	}
	if !s.aggregate() {
		s.state, s.bulkLeft = scanBulk, s.num+2
		if s.replyLen+s.bulkLeft > s.maxBytes+maxLineBytes {
			return s.fail("a reply longer than %d bytes", s.maxBytes)
		}
		return nil
	}
	n := s.num
	if s.typ == '%' || s.typ == '|' {
		n *= 2
	}
	if n == 0 {
		if s.typ == '|' {
			return nil // an empty attribute: the reply follows
		}
		s.complete()
		return nil
	}
	if s.pending+n > maxPendingElements {
		return s.fail("a reply announcing more than %d elements", maxPendingElements)
	}
	if len(s.stack) >= maxDepth {
		return s.fail("a reply nested more than %d deep", maxDepth)
	}
	s.pending += n
	s.stack = append(s.stack, frame{left: n, attr: s.typ == '|'})
	return nil
}

// complete accounts for an element received in full.
func (s *replyScanner) complete() {
	for len(s.stack) > 0 {
		top := &s.stack[len(s.stack)-1]
		top.left--
		s.pending--
		if top.left > 0 {
			return
		}
		attr := top.attr
		s.stack = s.stack[:len(s.stack)-1]
		if attr {
			return // the element the attribute describes follows
		}
	}
	s.replyLen = 0 // a top-level reply ended
}

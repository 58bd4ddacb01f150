package conn

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sentinel errors returned by Session and Do.
var (
	ErrDisabled    = errors.New("server is disabled")
	ErrBlocked     = errors.New("blocked by policy")
	ErrNotApproved = errors.New("project server is not approved")
	ErrNeedsAuth   = errors.New("server needs authentication")
	ErrUnknown     = errors.New("unknown server")
	ErrClosed      = errors.New("connection manager is closed")
	// ErrRetired is met by a request on a connection that was closed for
	// good (a reload removed or replaced its server, or an idle per-user
	// connection was evicted) before the request was sent; the Manager's
	// methods then send it on the server's current connection, if any.
	ErrRetired = fmt.Errorf("%w: the server's connection was replaced", ErrClosed)
)

// registryNotApproved is ErrNotApproved for a server installed from an
// MCP Registry (in the user's own files: not a project server).
type registryNotApproved struct{ msg string }

func (e registryNotApproved) Error() string        { return e.msg }
func (e registryNotApproved) Is(target error) bool { return target == ErrNotApproved }

// CutError is the error of a call still in flight on a connection that a
// configuration reload removed or replaced when the drain deadline passed:
// the call was cancelled.
type CutError struct {
	Server string
	// Drain is the deadline the call was given.
	Drain time.Duration
}

func (e *CutError) Error() string {
	return fmt.Sprintf("call to %s cancelled: a configuration reload removed or changed the server, and the call did not finish within the drain deadline (%s)", e.Server, e.Drain)
}

// verifyError carries a Verify failure through Do untouched (it is not a
// transport error, whatever it wraps).
type verifyError struct{ err error }

func (e *verifyError) Error() string { return e.err.Error() }

// errTransportClosed is what this package's own connections (plugin
// connections, the stdio raw lane) report when the connection to a server is
// lost. It reads as mcp.ErrConnectionClosed does but is another value, because
// the two mean different things to Do: a session call that fails with
// mcp.ErrConnectionClosed was refused before it was written (see neverSent),
// while a call that fails with errTransportClosed may have gone out.
var errTransportClosed = errors.New("connection closed")

// neverSent reports whether err says the request was refused before it was
// written, because the connection was already closing.
//
// The go-sdk refuses a call on a connection that is closing, or whose read or
// write side has failed, before giving it to the transport (jsonrpc2's
// ErrClientClosing or ErrServerClosing), and reports that, and only that, as
// mcp.ErrConnectionClosed; those two errors themselves are internal to the
// go-sdk and are flattened to text on the way out. A call that was written and
// then lost its connection fails with the transport's own error instead, which
// for this package's transports is errTransportClosed, never
// mcp.ErrConnectionClosed. (A server that answers with jsonrpc2's "server is
// closing" code is refused in the same words: it did not handle the call
// either.)
func neverSent(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, errTransportClosed)
}

// connectionGone reports whether err says the session's connection is closed.
func connectionGone(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, errTransportClosed)
}

// IsTerminal reports whether err means the transport to a server is broken
// (connection reset or refused, timeouts, broken pipe, unreachable host, or a
// closed stream), as opposed to an error the server returned.
func IsTerminal(err error) bool {
	for _, target := range []error{
		syscall.ECONNRESET, syscall.ETIMEDOUT, syscall.EPIPE, syscall.EHOSTUNREACH,
		syscall.ECONNREFUSED, io.ErrUnexpectedEOF, mcp.ErrConnectionClosed, errTransportClosed,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

package conn

import (
	"errors"
	"io"
	"strings"
	"syscall"

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
)

// verifyError carries a Verify failure through Do untouched (it is not a
// transport error, whatever it wraps).
type verifyError struct{ err error }

func (e *verifyError) Error() string { return e.err.Error() }

// neverSent reports whether err says the request was refused before it was
// written, because the connection was already closing.
func neverSent(err error) bool {
	return strings.Contains(err.Error(), "client is closing")
}

// connectionGone reports whether err says the session's connection is closed.
func connectionGone(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection closed") || strings.Contains(msg, "client is closing")
}

// IsTerminal reports whether err means the transport to a server is broken
// (connection reset or refused, timeouts, broken pipe, unreachable host, or a
// closed stream), as opposed to an error the server returned.
func IsTerminal(err error) bool {
	for _, target := range []error{
		syscall.ECONNRESET, syscall.ETIMEDOUT, syscall.EPIPE, syscall.EHOSTUNREACH,
		syscall.ECONNREFUSED, io.ErrUnexpectedEOF, mcp.ErrConnectionClosed,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "stream disconnected") || strings.Contains(msg, "connection closed")
}

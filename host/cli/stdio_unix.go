//go:build unix

package cli

import (
	"io"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/mcphost/mcphost/internal/rawfd"
)

// pollable returns what reads or writes f — served by Go's network poller
// (polledBy) when f is a pipe or a socket: a goroutine reading it waits parked rather
// than holding a thread in a blocking read(2), which the runtime hands off
// to another thread once it blocks (a futex wake-up per message on a
// gateway's stdio), and closing it ends a read waiting on it. It is a
// duplicate of f's descriptor (close-on-exec) in non-blocking mode, which
// the open file f shares, so f is not to be used meanwhile; closing it puts
// back the blocking mode and closes f too. A terminal or a regular file (a
// terminal's mode is shared with other processes, the shell's), a FIFO on
// darwin (kqueue misses its end: golang.org/issue/24164), or f on any
// error, is returned as it is.
func pollable(f *os.File) (rwc io.ReadWriteCloser, polledBy bool) {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return f, false
	case fi.Mode()&os.ModeSocket != 0:
	case fi.Mode()&os.ModeNamedPipe != 0 && runtime.GOOS != "darwin" && runtime.GOOS != "ios":
		// (darwin reports every pipe as a FIFO: there, only sockets.)
	default:
		return f, false
	}
	if p := reopened(f, fi); p != nil {
		// A description of this process's own (linux): read and written
		// with raw system calls, its mode set apart from the shared one.
		return &polled{ReadWriteCloser: rawfd.New(p), orig: f, private: true}, true
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return f, false
	}
	fd := -1
	rc.Control(func(s uintptr) {
		// (At 3 or above: never a free 0-2, where another file of the
		// process would be expected.)
		if d, err := unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 3); err == nil {
			fd = d
		}
	})
	if fd < 0 {
		return f, false
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return f, false
	}
	// A duplicate shares its open file description with other holders
	// (the client, a shell): read with the poller's ordinary system calls,
	// never raw ones (see rawfd.New), should another holder put the mode
	// back.
	return &polled{ReadWriteCloser: os.NewFile(uintptr(fd), f.Name()), orig: f}, true
}

// polled is pollable's file: a pipe reopened as this process's own,
// read and written with raw system calls (rawfd.New: no wake-up of the
// runtime's monitor thread per message; private), or a duplicate of f in
// non-blocking mode.
type polled struct {
	io.ReadWriteCloser
	orig    *os.File
	private bool // a description of its own: the shared mode was left alone
}

// Close closes the duplicate (ending what waits on it), puts the shared
// blocking mode back through the original, and closes the original too (so
// the peer sees the end at once). It may be called more than once.
func (p *polled) Close() error {
	err := p.ReadWriteCloser.Close()
	if rc, cerr := p.orig.SyscallConn(); cerr == nil && !p.private {
		rc.Control(func(s uintptr) { unix.SetNonblock(int(s), false) })
	}
	p.orig.Close()
	return err
}

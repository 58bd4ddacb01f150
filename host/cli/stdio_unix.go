//go:build unix

package cli

import (
	"os"
	"syscall"
)

// pollable returns a file that Go's network poller serves, reading or
// writing what f does, when f is a pipe or a socket: a goroutine reading
// such a file waits parked rather than holding a thread in a blocking
// read(2), which the runtime hands off to another thread once it blocks
// (a futex wake-up per message on a gateway's stdio), and closing it ends a
// read waiting on it. The file is on a duplicate of f's descriptor (f stays
// open, and its owner's), in non-blocking mode — which f's descriptor
// shares, so f itself is not to be used meanwhile. A terminal or a regular
// file, or f on any error, is returned as it is: a terminal's mode may be
// shared with other processes (the shell).
func pollable(f *os.File) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	fd := -1
	rc.Control(func(s uintptr) {
		if d, err := syscall.Dup(int(s)); err == nil {
			syscall.CloseOnExec(d)
			fd = d
		}
	})
	if fd < 0 {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}

package rawfd

import (
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// file is New's file on linux.
type file struct {
	*os.File
	rc syscall.RawConn
}

func newRaw(f *os.File) *file {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	// Pipes and sockets are served by the poller; a descriptor os.File
	// does not poll (a regular file, a terminal) would make a raw read
	// block the thread, or the wait fail.
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil
	}
	nonblocking := false
	rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblocking = err == nil && fl&unix.O_NONBLOCK != 0
	})
	if !nonblocking {
		return nil
	}
	return &file{File: f, rc: rc}
}

// Read implements io.Reader as (*os.File).Read does.
func (f *file) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := f.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, f.wrap("read", err)
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write implements io.Writer as (*os.File).Write does: all of p, or an
// error.
func (f *file) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := f.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			b := p[n:]
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // full: wait in the poller
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, f.wrap("write", err)
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: errno}
	}
	return n, nil
}

// wrap is the error of a wait that failed: the file was closed (no
// deadline is set on it).
func (f *file) wrap(op string, err error) error {
	return &os.PathError{Op: op, Path: f.Name(), Err: os.ErrClosed}
}

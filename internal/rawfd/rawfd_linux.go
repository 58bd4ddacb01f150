package rawfd

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// file is New's file on linux. Its reads (and its writes) are made one at
// a time, each by a callback made once (a closure per call would be an
// allocation per message), on the state its mutex guards.
type file struct {
	f  *os.File // (not embedded: its Fd would put the descriptor in blocking mode)
	rc syscall.RawConn

	rmu   sync.Mutex
	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	rcall func(fd uintptr) bool

	wmu   sync.Mutex
	wbuf  []byte
	wn    int
	werr  syscall.Errno
	wcall func(fd uintptr) bool
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
	rf := &file{f: f, rc: rc}
	rf.rcall, rf.wcall = rf.read, rf.write
	return rf
}

// Read implements io.Reader as (*os.File).Read does.
func (f *file) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.rmu.Lock()
	defer f.rmu.Unlock()
	f.rbuf, f.rn, f.rerr = p, 0, 0
	err := f.rc.Read(f.rcall)
	n, errno := f.rn, f.rerr
	f.rbuf = nil
	switch {
	case err != nil:
		return 0, f.closed("read", err)
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: f.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is Read's callback: false to wait in the poller.
func (f *file) read(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&f.rbuf[0])), uintptr(len(f.rbuf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		f.rn, f.rerr = int(r), e
		return true
	}
}

// Write implements io.Writer as (*os.File).Write does: all of p, or an
// error.
func (f *file) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.wbuf, f.wn, f.werr = p, 0, 0
	err := f.rc.Write(f.wcall)
	n, errno := f.wn, f.werr
	f.wbuf = nil
	switch {
	case err != nil:
		return n, f.closed("write", err)
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: f.f.Name(), Err: errno}
	}
	return n, nil
}

// write is Write's callback: false to wait in the poller (the pipe is
// full).
func (f *file) write(fd uintptr) bool {
	for f.wn < len(f.wbuf) {
		b := f.wbuf[f.wn:]
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			f.wn += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			f.werr = e
			return true
		}
	}
	return true
}

// closed is the error of a wait in the poller that failed (err): the
// file was closed (os.ErrClosed), or a deadline set on it passed
// (os.ErrDeadlineExceeded), as (*os.File).Read reports them.
func (f *file) closed(op string, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: f.f.Name(), Err: err}
}

// Close closes the file, ending a read or write waiting on it.
func (f *file) Close() error { return f.f.Close() }

package cli

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// reopened returns f, a pipe, opened again through /proc/self/fd in
// non-blocking mode: the same pipe, under an open file description of this
// process's alone, whose mode no other holder of f's (the client, a shell)
// can change; nil for anything else or on any error.
func reopened(f *os.File, fi os.FileInfo) *os.File {
	if fi.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd, mode := -1, 0
	rc.Control(func(s uintptr) {
		if fl, err := unix.FcntlInt(s, unix.F_GETFL, 0); err == nil {
			fd, mode = int(s), fl&unix.O_ACCMODE
		}
	})
	if fd < 0 || mode == unix.O_RDWR {
		return nil
	}
	nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), mode|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // (no /proc, or a write end whose reader is gone: ENXIO)
	}
	return os.NewFile(uintptr(nfd), f.Name())
}

//go:build unix

package cli

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPollable: a pipe or a socket in blocking mode (as a client hands the
// gateway its stdin) is read through the runtime's poller: a read waiting
// on it ends when it is closed, as stdio.ReadClient needs when the gateway
// stops before its client said anything; closing it closes the original
// too. A regular file is left as it is.
func TestPollable(t *testing.T) {
	type pair struct{ r, w *os.File }
	cases := map[string]func(t *testing.T) pair{
		"socket": func(t *testing.T) pair {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			return pair{os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")}
		},
	}
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" { // (there, pipes are left alone)
		cases["pipe"] = func(t *testing.T) pair {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return pair{r, w}
		}
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			p := open(t)
			defer p.r.Close()
			defer p.w.Close()
			p.r.Fd() // As stdin is: a descriptor in blocking mode (Fd sets it so).
			rwc, polled := pollable(p.r)
			if !polled || rwc == io.ReadWriteCloser(p.r) {
				t.Fatal("not made pollable")
			}
			if name == "pipe" && runtime.GOOS == "linux" {
				// Reopened as this process's own: the shared description
				// keeps its blocking mode (another holder's to set), and
				// what the client writes is read through the new one.
				if nonblocking(t, p.r) {
					t.Error("the shared description was put in non-blocking mode")
				}
				if _, err := p.w.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
				if n, err := rwc.Read(make([]byte, 4)); n != 1 || err != nil {
					t.Fatalf("read %d, %v; want the client's byte", n, err)
				}
			}
			read := make(chan error, 1)
			go func() {
				_, err := rwc.Read(make([]byte, 1))
				read <- err
			}()
			time.Sleep(50 * time.Millisecond) // (by then the read is waiting, mostly; one that starts after the close fails at once)
			rwc.Close()
			select {
			case err := <-read:
				if err == nil {
					t.Fatal("read on a closed file succeeded")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("closing the file did not end the read waiting on it")
			}
			// The original is closed too.
			if _, err := p.r.Read(make([]byte, 1)); err == nil {
				t.Error("the original is still open")
			}
		})
	}

	f, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rwc, polled := pollable(f); polled || rwc != io.ReadWriteCloser(f) {
		t.Error("a regular file was replaced")
	}
}

// nonblocking reports whether f's open file description is in
// non-blocking mode.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	rc.Control(func(s uintptr) { fl, err = unix.FcntlInt(s, unix.F_GETFL, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

//go:build unix

package reexec

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// sweepTimeout bounds the final SIGKILL sweep of the tree.
const sweepTimeout = 5 * time.Second

// supervise is the supervisor's main function. fd 3 is the control pipe (the
// spec, then end of file when the host stops the child or dies); fd 4 is the
// status pipe to the host.
func supervise() int {
	ctl := os.NewFile(3, "control")
	status := os.NewFile(4, "status")
	if ctl == nil || status == nil {
		return 2
	}
	// Neither pipe may reach the child: the host must see end of file on
	// status when the supervisor exits, and only the host may hold control.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	// SIGINT and SIGHUP are the host's business (it closes its children in
	// order); SIGTERM stops the child. Catching rather than ignoring them
	// keeps the child's dispositions at their defaults.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM)

	in := bufio.NewReader(ctl)
	spec, err := DecodeSpec(in)
	if err != nil {
		return 2
	}
	send := func(m Message) error {
		_, err := status.Write(m.Encode())
		return err
	}
	becomeSubreaper()
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{
		Dir:   spec.Dir,
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   childAttr(),
	})
	if err != nil {
		m := Message{Error: err.Error()}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			m.Errno = int(errno)
		}
		send(m)
		return 1
	}
	// The child has its files; the supervisor keeps none of them, so it is
	// not in the data path and end of file reaches the host with the child.
	detachStdio()
	if send(Message{Pid: pid}) != nil {
		// The host is gone already.
		spec.Stop = nil
	}

	stopc := make(chan struct{})
	go func() { // ends at end of file: when the host stops the child or dies
		io.Copy(io.Discard, in)
		close(stopc)
	}()
	exited := make(chan syscall.WaitStatus, 1)
	empty := make(chan struct{})
	go reap(pid, exited, empty)

	var ws syscall.WaitStatus
	hostEnded := false
	for running := true; running; {
		select {
		case ws = <-exited:
			running = false
		case <-stopc:
			ws, running = stop(pid, spec.Stop, exited), false
			hostEnded = true
		case s := <-sigs:
			if s == syscall.SIGTERM {
				ws, running = stop(pid, spec.Stop, exited), false
			}
		}
	}
	send(Message{Exit: true, Status: uint32(ws)})
	// Stragglers (a shell's children, daemons that called setsid) go with
	// the child.
	sweep(pid, empty)
	if spec.RunDir != "" {
		removeRunDir(spec.RunDir, hostEnded)
	}
	return 0
}

// removeRunDir removes the host's run directory if the host is dead (its
// lock free). When the host's end of file ended the child (hostEnded), the
// host may be dying: the kernel closes a dying process's files one by one,
// so the end of file can arrive before the lock is released; the removal
// is tried again for a short while then. (A host that is alive and stopped
// the child keeps its lock, and removes the directory itself.)
func removeRunDir(dir string, hostEnded bool) {
	if RemoveIfStale(dir) || !hostEnded {
		return
	}
	for range 10 {
		time.Sleep(10 * time.Millisecond)
		if _, err := os.Lstat(dir); err != nil || RemoveIfStale(dir) {
			return
		}
	}
}

// reap waits for every child of the supervisor: the program, and (as a
// subreaper) every orphaned descendant. It reports the program's status on
// exited and closes empty when the supervisor has no child left, hence no
// descendant at all.
func reap(pid int, exited chan<- syscall.WaitStatus, empty chan<- struct{}) {
	defer close(empty)
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return // ECHILD
		}
		if wpid == pid {
			exited <- ws
		}
	}
}

// stop sends the stop sequence and returns the program's wait status. After
// the last step it keeps sending SIGKILL until the program is reaped.
func stop(pid int, steps []Step, exited <-chan syscall.WaitStatus) syscall.WaitStatus {
	for _, st := range steps {
		signalTree(pid, st.Signal)
		t := time.NewTimer(st.Grace)
		select {
		case ws := <-exited:
			t.Stop()
			return ws
		case <-t.C:
		}
	}
	for {
		signalTree(pid, syscall.SIGKILL)
		t := time.NewTimer(time.Second)
		select {
		case ws := <-exited:
			t.Stop()
			return ws
		case <-t.C:
		}
	}
}

// signalTree signals the program's process group and every descendant of the
// supervisor outside that group (each once).
func signalTree(pgid int, sig syscall.Signal) {
	syscall.Kill(-pgid, sig)
	for _, d := range descendants() {
		if d.pgid != pgid {
			syscall.Kill(d.pid, sig)
		}
	}
}

// sweep SIGKILLs what is left of the tree until the supervisor has no child.
func sweep(pgid int, empty <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGKILL)
	// With no child left there is no descendant left: skip reading /proc.
	quick := time.NewTimer(time.Millisecond)
	select {
	case <-empty:
		quick.Stop()
		return
	case <-quick.C:
	}
	deadline := time.NewTimer(sweepTimeout)
	defer deadline.Stop()
	for {
		syscall.Kill(-pgid, syscall.SIGKILL)
		for _, d := range descendants() {
			syscall.Kill(d.pid, syscall.SIGKILL)
		}
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-empty:
			t.Stop()
			return
		case <-deadline.C:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// detachStdio points fds 0, 1 and 2 at /dev/null.
func detachStdio() {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	for fd := 0; fd <= 2; fd++ {
		dup2(int(null.Fd()), fd)
	}
	null.Close()
}

//go:build unix

package supervisor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/host/supervisor/internal/reexec"
)

// startTimeout bounds the wait for the supervisor to report the child's pid.
const startTimeout = 10 * time.Second

type sysProcess struct {
	cmd      *exec.Cmd // the supervisor
	ctl      *os.File  // write end of the control pipe: closing it stops the child
	stopOnce sync.Once
}

func (s *sysProcess) stop() { s.stopOnce.Do(func() { s.ctl.Close() }) }

func (s *sysProcess) kill(pid int) {
	s.stop()
	if pid > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
	}
	s.cmd.Process.Kill()
}

// Start runs spec's program under a supervisor, with stdin, stdout and stderr
// as its standard files (nil: /dev/null), and returns once the program has
// been started, or failed to start. The caller keeps its copies of the files.
func Start(spec *Spec, stdin, stdout, stderr *os.File) (*Process, error) {
	l, err := Launch(stdin, stdout, stderr)
	if err != nil {
		return nil, err
	}
	return l.Start(spec)
}

// Launcher is a supervisor started ahead of the program it is to run, so
// that its start (an exec of the host's binary) overlaps the caller's other
// work, such as verifying that program. Exactly one of Start and Abort must
// be called.
type Launcher struct {
	cmd *exec.Cmd
	ctl *os.File // write end of the control pipe
	st  *os.File // read end of the status pipe
}

// Launch starts a supervisor, with stdin, stdout and stderr as the standard
// files of the program it will run (nil: /dev/null). The caller keeps its
// copies of the files.
func Launch(stdin, stdout, stderr *os.File) (*Launcher, error) {
	exe, err := self()
	if err != nil {
		return nil, fmt.Errorf("finding the host's binary to run the supervisor: %w", err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the supervisor's pipes: %w", err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, fmt.Errorf("creating the supervisor's pipes: %w", err)
	}
	cmd := &exec.Cmd{
		Path: exe,
		// argv[0] names it in ps.
		Args: []string{"mcphost-supervisor"},
		// One P is plenty; a race-enabled binary (tests) must not sleep a
		// second at exit (the race runtime's default atexit_sleep_ms).
		Env:        []string{reexec.EnvMarker + "=" + reexec.Version, "GOMAXPROCS=1", "GORACE=atexit_sleep_ms=0"},
		ExtraFiles: []*os.File{ctlR, stW}, // fds 3 and 4
		// Its own group: a terminal's Ctrl-C or hang-up reaches the host,
		// which then closes its servers in order. No Pdeathsig: the
		// supervisor must outlive the host to clean up after it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// Assign only non-nil files: a typed nil *os.File in an io.Reader would
	// not read as "none".
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	err = cmd.Start()
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return nil, fmt.Errorf("starting the supervisor: %w", err)
	}
	return &Launcher{cmd: cmd, ctl: ctlW, st: stR}, nil
}

// Abort ends a supervisor that will run nothing.
func (l *Launcher) Abort() {
	l.ctl.Close() // it exits when its control pipe ends
	l.cmd.Process.Kill()
	l.cmd.Wait()
	l.st.Close()
}

// Start runs spec's program under the supervisor, and returns once the
// program has been started, or failed to start.
func (l *Launcher) Start(spec *Spec) (*Process, error) {
	cmd, ctlW, stR := l.cmd, l.ctl, l.st
	p := &Process{sys: sysProcess{cmd: cmd, ctl: ctlW}, exited: make(chan struct{}), done: make(chan struct{})}
	fail := func(err error) (*Process, error) {
		ctlW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		stR.Close()
		return nil, err
	}
	if _, err := ctlW.Write(spec.Encode()); err != nil {
		return fail(fmt.Errorf("sending %s to its supervisor: %w", spec.Path, err))
	}
	in := bufio.NewReader(stR)
	stR.SetReadDeadline(time.Now().Add(startTimeout))
	m, err := reexec.ReadMessage(in)
	if err != nil {
		return fail(fmt.Errorf("the supervisor of %s did not report its start: %w", spec.Path, err))
	}
	stR.SetReadDeadline(time.Time{})
	if m.Error != "" || m.Pid <= 0 {
		// The supervisor has exited or is exiting; reap it.
		ctlW.Close()
		cmd.Wait()
		stR.Close()
		var err error = &startError{msg: m.Error}
		if m.Errno != 0 {
			err = syscall.Errno(m.Errno)
		}
		return nil, &os.PathError{Op: "fork/exec", Path: spec.Path, Err: err}
	}
	p.Pid = m.Pid
	go func() { // owned by p: ends when the supervisor exits
		defer close(p.done)
		exited := false
		for {
			m, err := reexec.ReadMessage(in)
			if err != nil {
				break
			}
			if m.Exit && !exited {
				exited = true
				p.err = exitError(syscall.WaitStatus(m.Status))
				close(p.exited)
			}
		}
		stR.Close()
		werr := cmd.Wait()
		if !exited {
			// The supervisor was killed: do what it can no longer do.
			syscall.Kill(-p.Pid, syscall.SIGKILL)
			p.err = fmt.Errorf("%w (%v)", ErrSupervisorDied, werr)
			close(p.exited)
		}
	}()
	return p, nil
}

type startError struct{ msg string }

func (e *startError) Error() string { return e.msg }

func exitError(ws syscall.WaitStatus) error {
	switch {
	case ws.Exited() && ws.ExitStatus() == 0:
		return nil
	case ws.Exited():
		return &ExitError{Code: ws.ExitStatus()}
	case ws.Signaled():
		return &ExitError{Code: -1, Signal: ws.Signal(), CoreDumped: ws.CoreDump()}
	}
	return &ExitError{Code: -1}
}

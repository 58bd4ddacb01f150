package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// On Windows the child runs directly: Stop waits the Spec's graces, then
// kills it. Descendants are not reached; a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE would reach them and survive a killed
// host, and is not implemented yet.

type sysProcess struct {
	cmd      *exec.Cmd
	grace    time.Duration
	stopOnce sync.Once
	timer    *time.Timer
	done     chan struct{}
}

func (s *sysProcess) stop() {
	s.stopOnce.Do(func() {
		s.timer = time.AfterFunc(s.grace, func() { s.cmd.Process.Kill() })
		go func() { // ends when the process exits
			<-s.done
			s.timer.Stop()
		}()
	})
}

func (s *sysProcess) kill(int) { s.cmd.Process.Kill() }

// Launcher holds the standard files of a program to be started (on
// Windows there is no supervisor to start ahead). Exactly one of Start and
// Abort must be called.
type Launcher struct{ stdin, stdout, stderr *os.File }

// Launch prepares to run a program with stdin, stdout and stderr as its
// standard files (nil: the null device).
func Launch(stdin, stdout, stderr *os.File) (*Launcher, error) {
	return &Launcher{stdin, stdout, stderr}, nil
}

// Start runs spec's program.
func (l *Launcher) Start(spec *Spec) (*Process, error) {
	return Start(spec, l.stdin, l.stdout, l.stderr)
}

// Abort gives up the launch.
func (l *Launcher) Abort() {}

// Start runs spec's program with stdin, stdout and stderr as its standard
// files (nil: the null device).
func Start(spec *Spec, stdin, stdout, stderr *os.File) (*Process, error) {
	cmd := &exec.Cmd{Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var grace time.Duration
	for _, st := range spec.Stop {
		grace += st.Grace
	}
	p := &Process{Pid: cmd.Process.Pid, exited: make(chan struct{}), done: make(chan struct{})}
	p.sys = sysProcess{cmd: cmd, grace: grace, done: p.done}
	go func() { // owned by p: ends when the process exits
		defer close(p.done)
		defer close(p.exited)
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.err = &ExitError{Code: ee.ExitCode()}
		} else if err != nil {
			p.err = fmt.Errorf("waiting for %s: %w", spec.Path, err)
		}
	}()
	return p, nil
}

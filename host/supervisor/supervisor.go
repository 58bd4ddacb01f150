// Package supervisor starts the host's child processes (stdio servers and
// plugins) so that none of them, nor anything they start, outlives the host,
// whatever ends the host: a clean exit, a crash, SIGHUP or SIGKILL.
//
// On Unix, Start re-executes the host's own binary as a small supervisor
// between the host and the child (the moby "reexec" pattern, made automatic:
// the init function of this package's internal/reexec recognises the supervisor's environment
// marker and runs the supervisor instead of the program, so the CLI, tests
// and every library user get it without calling anything). The supervisor
//
//   - starts the child with the stdin, stdout and stderr it was given, so it is
//     not in the data path (nothing is copied);
//   - runs the child in its own process group, with Pdeathsig on Linux;
//   - on Linux, is a child subreaper (PR_SET_CHILD_SUBREAPER): descendants
//     that leave the child's process group (setsid) or lose their parent are
//     reparented to it rather than to PID 1;
//   - watches a pipe whose write end only the host holds. End of file on it
//     means the host called Stop, or died, however it died. The supervisor
//     then sends the stop sequence (for a stdio server SIGINT, SIGTERM after
//     100 ms, SIGKILL after 400 ms more) to the child's process group and to
//     every other descendant, waits for the child, SIGKILLs whatever is left
//     of the tree, reaps it and exits;
//   - reports the child's pid and, at the end, its wait status to the host,
//     so crash detection and exit statuses work as for a direct child.
//
// On other Unix systems the supervisor works the same way but without a
// subreaper: a descendant that calls setsid and whose parent exits escapes.
// On Windows there is no supervisor process: Start runs the child in a Job
// Object of its own with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, created
// suspended and resumed once inside, so the child and everything it starts
// end when the host's handle closes (any exit, TerminateProcess included),
// and Stop terminates the whole job after the graces. (Built and vetted on
// Linux with GOOS=windows; not run on Windows by this project's CI.)
package supervisor

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mcphost/mcphost/host/supervisor/internal/reexec"
)

// EnvMarker is the environment variable that makes a binary which imports
// this package run as a supervisor.
const EnvMarker = reexec.EnvMarker

// ErrSupervisorDied reports that the supervisor itself exited without
// reporting the child's exit (it was killed): the host then kills the child's
// process group itself.
var ErrSupervisorDied = errors.New("the process supervisor died")

// Step is one step of a stop sequence: send Signal, then wait up to Grace for
// the child to exit.
type Step = reexec.Step

// Spec describes the child to run and how to stop it.
type Spec = reexec.Spec

// ExitError is a child's non-zero exit: an exit code or a signal.
type ExitError struct {
	// Code is the exit code; -1 if a signal ended the process.
	Code int
	// Signal is the signal that ended the process, if Code is -1.
	Signal syscall.Signal
	// CoreDumped is set if the process dumped core.
	CoreDumped bool
}

// Error reads like os.ProcessState's String: "exit status 1", "signal: killed".
func (e *ExitError) Error() string {
	if e.Code >= 0 {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	s := "signal: " + e.Signal.String()
	if e.CoreDumped {
		s += " (core dumped)"
	}
	return s
}

// Process is a child started by Start. Its methods are safe for concurrent use.
type Process struct {
	// Pid is the child's process id (not the supervisor's); on Unix it is
	// also the id of the child's process group.
	Pid int

	sys    sysProcess
	exited chan struct{}
	done   chan struct{}
	err    error
}

// Exited is closed as soon as the child has exited and Err is known, before
// the rest of its tree is swept: crash detection need not wait for that.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done is closed when the child and, on Unix, every descendant the
// supervisor could find are gone and reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the child's exit: nil for exit status 0, an *ExitError otherwise,
// or an error wrapping ErrSupervisorDied. Valid after Exited is closed.
func (p *Process) Err() error { return p.err }

// Stop starts the stop sequence of the Spec. It does not wait: wait on Done.
// Calling it again has no effect.
func (p *Process) Stop() { p.sys.stop() }

// Kill is the host's last resort if the supervisor does not finish the stop
// sequence: it SIGKILLs the child's process group and the supervisor.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.sys.kill(p.Pid)
}

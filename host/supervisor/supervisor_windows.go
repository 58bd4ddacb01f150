package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows the child runs in a Job Object of its own, created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: the job's only handle is the host's,
// so when the host exits, however it exits, Windows closes the handle and
// ends every process of the job — the child and everything it started
// (descendants join their parent's job). The child is created suspended and
// resumed only once it is in the job, so nothing it starts escapes. Stop
// waits the Spec's graces, then terminates the whole job; after the child
// exits, closing the job ends whatever it left behind.

type sysProcess struct {
	cmd      *exec.Cmd
	jobMu    sync.Mutex
	job      windows.Handle // 0 once closed (a closed handle's value may be reused)
	grace    time.Duration
	stopOnce sync.Once
	timer    *time.Timer
	done     chan struct{}
}

func (s *sysProcess) stop() {
	s.stopOnce.Do(func() {
		s.timer = time.AfterFunc(s.grace, s.terminate)
		go func() { // ends when the process exits
			<-s.done
			s.timer.Stop()
		}()
	})
}

func (s *sysProcess) kill(int) { s.terminate() }

// terminate ends every process of the job.
func (s *sysProcess) terminate() {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if s.job == 0 || windows.TerminateJobObject(s.job, 1) != nil {
		s.cmd.Process.Kill()
	}
}

// closeJob closes the job's handle, which ends what is left in it.
func (s *sysProcess) closeJob() {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if s.job != 0 {
		windows.CloseHandle(s.job)
		s.job = 0
	}
}

// newJob creates a Job Object whose processes end when its last handle
// closes.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("creating a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting the job object's limits: %w", err)
	}
	return job, nil
}

// ntResumeProcess resumes every thread of a process created suspended
// (os/exec does not hand out the main thread's handle).
var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// enterJob puts the suspended process pid into job, then resumes it.
func enterJob(job windows.Handle, pid int) error {
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("opening process %d: %w", pid, err)
	}
	defer windows.CloseHandle(ph)
	if err := windows.AssignProcessToJobObject(job, ph); err != nil {
		return fmt.Errorf("assigning process %d to its job: %w", pid, err)
	}
	if st, _, _ := ntResumeProcess.Call(uintptr(ph)); st != 0 {
		return fmt.Errorf("resuming process %d: NTSTATUS %#x", pid, st)
	}
	return nil
}

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
	job, err := newJob()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	if err := enterJob(job, cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		windows.CloseHandle(job)
		return nil, err
	}
	var grace time.Duration
	for _, st := range spec.Stop {
		grace += st.Grace
	}
	p := &Process{Pid: cmd.Process.Pid, exited: make(chan struct{}), done: make(chan struct{})}
	p.sys = sysProcess{cmd: cmd, job: job, grace: grace, done: p.done}
	sys := &p.sys
	go func() { // owned by p: ends when the process exits
		defer close(p.done)
		defer close(p.exited)
		err := cmd.Wait()
		// What the child left running ends with its job.
		sys.closeJob()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.err = &ExitError{Code: ee.ExitCode()}
		} else if err != nil {
			p.err = fmt.Errorf("waiting for %s: %w", spec.Path, err)
		}
	}()
	return p, nil
}

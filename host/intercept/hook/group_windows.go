package hook

import (
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ownGroup does nothing before the start on Windows: the process is put in
// a Job object once started (attachGroup).
func ownGroup(*exec.Cmd) {}

// group is a started hook's Job object: every process it starts is in it
// (no breakaway is allowed), and closing the last handle kills them all
// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE). A child the hook starts in the
// instant between its start and its assignment escapes; so does
// everything when the job cannot be made (then only the shell is killed).
type group struct {
	cmd *exec.Cmd
	job windows.Handle
}

// attachGroup puts cmd's process in a new Job object.
func attachGroup(cmd *exec.Cmd) *group {
	g := &group{cmd: cmd}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return g
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return g
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return g
	}
	defer windows.CloseHandle(ph)
	if err := windows.AssignProcessToJobObject(job, ph); err != nil {
		_ = windows.CloseHandle(job)
		return g
	}
	g.job = job
	return g
}

// kill ends every process of the job (the shell alone without one).
func (g *group) kill() {
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
		return
	}
	_ = g.cmd.Process.Kill()
}

// close releases the job, which kills what is left in it.
func (g *group) close() {
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
		g.job = 0
	}
}

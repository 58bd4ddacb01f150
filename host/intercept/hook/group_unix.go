//go:build unix

package hook

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in its own process group.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// group is a started hook's process group.
type group struct{ pgid int }

// attachGroup returns the group of cmd, started by ownGroup.
func attachGroup(cmd *exec.Cmd) *group { return &group{pgid: cmd.Process.Pid} }

// kill kills every process of the group (none left is no error).
func (g *group) kill() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) }

// close releases nothing on Unix.
func (g *group) close() {}

//go:build unix

package headershelper

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in its own process group, killed as a whole on cancel.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

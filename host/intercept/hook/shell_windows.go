package hook

import (
	"fmt"
	"os/exec"
	"syscall"

	"github.com/mcphost/mcphost/host/intercept"
)

// platformEnv is what a hook needs of the host's environment beyond
// conn.BaseEnv() on Windows: programs fail to start without SYSTEMROOT.
var platformEnv = []string{
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "USERNAME",
}

// shellArgv is the argv that runs command: bash -c when bash is
// installed, else cmd /C (the default, see windowsDefaultArgv), sh -c,
// bash -c, or PowerShell's -Command.
func shellArgv(shell, command string, _ func(string) (string, bool)) ([]string, error) {
	switch shell {
	case "":
		return windowsDefaultArgv(command, exec.LookPath), nil
	case "sh":
		return []string{"sh", "-c", command}, nil
	case "bash":
		return []string{"bash", "-c", command}, nil
	case "powershell":
		return []string{powershell(), "-NoProfile", "-NonInteractive", "-Command", command}, nil
	}
	return nil, fmt.Errorf("shell %q: %w (sh, bash, powershell)", shell, intercept.ErrUnsupported)
}

// powershell is pwsh when it is installed (PowerShell 7), else powershell.
func powershell() string {
	if _, err := exec.LookPath("pwsh"); err == nil {
		return "pwsh"
	}
	return "powershell"
}

// rawCommandLine passes cmd /C its command line as written: cmd does not
// parse the quoting Go would add.
func rawCommandLine(cmd *exec.Cmd) {
	if len(cmd.Args) == 3 && cmd.Args[0] == "cmd" && cmd.Args[1] == "/C" {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.CmdLine = "cmd /C " + cmd.Args[2]
	}
}

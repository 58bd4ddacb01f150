//go:build unix

package hook

import (
	"fmt"
	"os/exec"

	"github.com/mcphost/mcphost/host/intercept"
)

// platformEnv is what a hook needs of the host's environment beyond
// conn.BaseEnv() on this platform.
var platformEnv []string

// shellArgv is the argv that runs command: bash -c (the default, as Claude
// Code runs command hooks; sh -c where bash is not installed), sh -c, or
// PowerShell's -Command.
func shellArgv(shell, command string, _ func(string) (string, bool)) ([]string, error) {
	switch shell {
	case "":
		if _, err := exec.LookPath("bash"); err == nil {
			return []string{"bash", "-c", command}, nil
		}
		return []string{"sh", "-c", command}, nil
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

// rawCommandLine does nothing here: the argv is passed as is.
func rawCommandLine(*exec.Cmd) {}

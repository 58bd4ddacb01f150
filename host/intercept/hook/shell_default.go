package hook

// windowsDefaultArgv is the argv that runs command on Windows when the
// block names no shell: bash -c when lookPath finds bash (Git Bash, as
// Claude Code runs hooks on Windows: "$CLAUDE_PROJECT_DIR"/x.py and the
// rest of a hook written for it work), cmd /C otherwise. Platform-free so
// that it is tested everywhere.
func windowsDefaultArgv(command string, lookPath func(string) (string, error)) []string {
	if _, err := lookPath("bash"); err == nil {
		return []string{"bash", "-c", command}
	}
	return []string{"cmd", "/C", command}
}

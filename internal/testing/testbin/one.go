package testbin

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildOne builds the main package pkg (a path relative to the module's
// root, "./internal/testing/interceptorserver") into dir and returns the
// binary's path: for tests that need one program, not all of Build's.
func BuildOne(dir, pkg string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = Root()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

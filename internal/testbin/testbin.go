// Package testbin builds mcphost's binaries for tests that run them as real
// processes.
package testbin

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Root returns the module's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds ./cmd/... into dir and ./plugins/... into dir/plugins.
func Build(dir string) error {
	for _, b := range []struct{ out, pkgs string }{
		{dir, "./cmd/..."},
		{filepath.Join(dir, "plugins"), "./plugins/..."},
	} {
		cmd := exec.Command("go", "build", "-o", b.out+string(filepath.Separator), b.pkgs)
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", b.pkgs, err, out)
		}
	}
	return nil
}

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
	for _, b := range []struct {
		out  string
		args []string
	}{
		{dir, []string{"./cmd/..."}},
		// As `make build` builds them: plugins are hashed before every start,
		// so smaller binaries start faster.
		{filepath.Join(dir, "plugins"), []string{"-trimpath", "-ldflags=-s -w", "./plugins/..."}},
	} {
		args := append([]string{"build", "-o", b.out + string(filepath.Separator)}, b.args...)
		cmd := exec.Command("go", args...)
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %v: %v\n%s", b.args, err, out)
		}
	}
	return nil
}

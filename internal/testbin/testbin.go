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

// Build builds ./cmd/... into dir.
func Build(dir string) error {
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/...")
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building mcphost: %v\n%s", err, out)
	}
	return nil
}

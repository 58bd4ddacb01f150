//go:build linux

package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// TestMakeInstallDoesNotLockPlugins: `make install` does not run `mcphost
// plugins lock`, which would trust every binary already in the user's
// plugin directory; it prints the command instead. And with GOPATH a list,
// the binaries' directory is the first entry's bin (where go install puts
// them). Dry run (make -n): nothing is built or installed.
func TestMakeInstallDoesNotLockPlugins(t *testing.T) {
	dir := t.TempDir()
	gp1, gp2 := filepath.Join(dir, "gp1"), filepath.Join(dir, "gp2")
	cmd := exec.Command("make", "-n", "install")
	cmd.Dir = testbin.Root()
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"), "MCPHOST_CONFIG_DIR=",
		"MCPHOST_PLUGIN_DIR="+filepath.Join(dir, "plugins"), "GOBIN=", "GOPATH="+gp1+":"+gp2)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n install: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "plugins lock") && !strings.HasPrefix(strings.TrimSpace(line), "echo ") {
			t.Errorf("make install runs plugins lock: %s", line)
		}
	}
	for _, want := range []string{"plugins lock", "plugins list", "not locked", filepath.Join(gp1, "bin") + "/mcphost"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make install does not print %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), gp1+":"+gp2) {
		t.Errorf("GOPATH list used as one directory:\n%s", out)
	}
}

//go:build unix

package hook

import (
	"os/exec"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestDefaultShellIsBash: Claude Code runs command hooks with bash, so a
// hook written for it (bash syntax inline) runs unchanged by default; sh
// runs it only when asked for.
func TestDefaultShellIsBash(t *testing.T) {
	needShell(t, false)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is not installed: the default shell's test needs it (make test-deps)")
	}
	// [[ ]] is bash syntax; dash (Debian's sh) exits 2 on it, which denies.
	const cmd = `[[ -n "$BASH_VERSION" ]] && exit 0; exit 2`
	for _, tc := range []struct {
		shell string
		want  intercept.Action
	}{
		{"", intercept.Pass},
		{"bash", intercept.Pass},
	} {
		f := newHook(t, config.Hook{Event: "PreToolUse", Command: cmd, Shell: tc.shell}, nil)
		v, err := f.check(t, toolCall(`{}`), intercept.Request)
		if err != nil || v.Action != tc.want {
			t.Errorf("shell %q: verdict %v, %v; want %v", tc.shell, v.Action, err, tc.want)
		}
	}
}

package hook

import (
	"errors"
	"slices"
	"testing"
)

// TestWindowsDefaultShell: on Windows a hook runs under bash (Git Bash)
// when it is installed, as in Claude Code, and under cmd only without it
// (review 36a L2).
func TestWindowsDefaultShell(t *testing.T) {
	t.Parallel()
	found := func(string) (string, error) { return `C:\Program Files\Git\bin\bash.exe`, nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }
	if got := windowsDefaultArgv("x", found); !slices.Equal(got, []string{"bash", "-c", "x"}) {
		t.Errorf("with bash: %q", got)
	}
	if got := windowsDefaultArgv("x", missing); !slices.Equal(got, []string{"cmd", "/C", "x"}) {
		t.Errorf("without bash: %q", got)
	}
}

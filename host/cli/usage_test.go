package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestExitCodeByErrorKind: a command line that cannot run as typed exits
// with exitConfig, whatever cobra's words for it; a command that ran and
// failed exits with exitError, even when its error says "flag" or "unknown
// command" (the code used to be picked by matching those words).
func TestExitCodeByErrorKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    int
		wantErr string // in stderr
	}{
		{"unknown command", []string{"nope"}, exitConfig, `unknown command "nope" for "mcphost"`},
		{"unknown command, with suggestions", []string{"serv"}, exitConfig, "Did you mean this?"},
		{"unknown command under a group", []string{"servers", "bogus"}, exitConfig, `unknown command "bogus" for "mcphost servers"`},
		{"argument to a command without any", []string{"version", "extra"}, exitConfig, `unknown command "extra"`},
		{"argument to a completion command", []string{"completion", "bash", "extra"}, exitConfig, `unknown command "extra"`},
		{"exact arguments", []string{"auth", "logout"}, exitConfig, "accepts 1 arg(s), received 0"},
		{"minimum arguments", []string{"server", "add"}, exitConfig, "requires at least 1 arg(s)"},
		{"range of arguments", []string{"call"}, exitConfig, "accepts between 1 and 2 arg(s)"},
		{"unknown flag", []string{"version", "--nope"}, exitConfig, "unknown flag: --nope"},
		{"unknown shorthand flag", []string{"version", "-Z"}, exitConfig, "unknown shorthand flag"},
		{"flag without its value", []string{"servers", "--config"}, exitConfig, "flag needs an argument: --config"},
		{"bad flag value", []string{"call", "--timeout", "soon", "mcp__a__b"}, exitConfig, `invalid argument "soon" for "--timeout" flag`},
		{"runtime error that says flag", []string{"tools", "--server", "flagship"}, exitError, `no server named "flagship"`},
		{"runtime error that says unknown", []string{"call", "mcp__flagship__x", "{}"}, exitError, `unknown server "flagship"`},
		{"success", []string{"version"}, exitOK, ""},
		{"help", []string{"help"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code, _, stderr := runMcphost(ctx, t.TempDir(), tt.args...)
			if code != tt.want {
				t.Errorf("mcphost %s: exit %d, want %d\nstderr:\n%s", strings.Join(tt.args, " "), code, tt.want, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("mcphost %s: stderr %q, want it to say %q", strings.Join(tt.args, " "), stderr, tt.wantErr)
			}
		})
	}
}

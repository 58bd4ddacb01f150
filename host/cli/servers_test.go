package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestServersExitStatus: `mcphost servers` exits 3 when a server that
// should be connected is not, 0 when every such server is, and 2 for a
// configuration error (the documented codes).
func TestServersExitStatus(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("MCPHOST_CONFIG_DIR", filepath.Join(dir, "cfg"))
	t.Setenv("MCPHOST_MANAGED_CONFIG", filepath.Join(dir, "managed.hcl"))
	tests := []struct {
		name string
		hcl  string
		want int
	}{
		{"a server fails", "server \"broken\" {\n  command = \"sh\"\n  args = [\"-c\", \"exit 1\"]\n}\n", exitNotConnected},
		{"only a disabled server", "server \"off\" {\n  command = \"sh\"\n  disabled = true\n}\n", exitOK},
		{"no server", "", exitOK},
		{"invalid configuration", "server \"x\" {\n  transport = \"nope\"\n}\n", exitConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "cfg.hcl")
			if err := os.WriteFile(cfg, []byte(tt.hcl), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"--config", cfg, "servers"}, {"--config", cfg, "servers", "--json"}} {
				if got := run(context.Background(), nil, args, nil, io.Discard, io.Discard); got != tt.want {
					t.Errorf("%v: exit %d, want %d", args, got, tt.want)
				}
			}
		})
	}
}

package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRelativePathsResolveAgainstTheFile: command, cwd and headers_helper
// given by relative paths are relative to the declaring file's directory,
// not to the working directory; bare names stay names (PATH).
func TestRelativePathsResolveAgainstTheFile(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "conf")
	os.MkdirAll(cfgDir, 0o755)
	f := filepath.Join(cfgDir, "servers.hcl")
	os.WriteFile(f, []byte(`
server "rel" {
  command = "./bin/server"
  cwd     = "work"
}
server "up" {
  command = "../tools/server"
  cwd     = "/abs/dir"
}
server "bare" {
  command = "npx"
}
server "abs" {
  command = "/usr/bin/server"
}
server "remote" {
  transport      = "http"
  url            = "https://r.example.com/mcp"
  headers_helper = ["scripts/token.sh", "./not-resolved-arg"]
}
`), 0o600)
	other := filepath.Join(dir, "elsewhere")
	os.MkdirAll(other, 0o755)
	cfg, diags := Load(&LoadOptions{Files: []string{f}, WorkDir: other, LookupEnv: func(string) (string, bool) { return "", false }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		server, got, want string
	}{
		{"rel", cfg.Server("rel").Command, filepath.Join(cfgDir, "bin", "server")},
		{"rel cwd", cfg.Server("rel").Cwd, filepath.Join(cfgDir, "work")},
		{"up", cfg.Server("up").Command, filepath.Join(dir, "tools", "server")},
		{"up cwd", cfg.Server("up").Cwd, "/abs/dir"},
		{"bare", cfg.Server("bare").Command, "npx"},
		{"abs", cfg.Server("abs").Command, "/usr/bin/server"},
		{"helper", cfg.Server("remote").HeadersHelper[0], filepath.Join(cfgDir, "scripts", "token.sh")},
		{"helper arg", cfg.Server("remote").HeadersHelper[1], "./not-resolved-arg"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.server, tc.got, tc.want)
		}
	}
}

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
		{"rel (relative to its cwd, as exec runs it)", cfg.Server("rel").Command, filepath.Join(cfgDir, "work", "bin", "server")},
		{"rel cwd", cfg.Server("rel").Cwd, filepath.Join(cfgDir, "work")},
		{"up (relative to its cwd, as exec runs it)", cfg.Server("up").Command, "/abs/tools/server"},
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

	// The local scope's file lives in the config directory but is about
	// a project: its relative paths are relative to the project's root.
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
	local := filepath.Join(dir, "home", ".config", "mcphost", "projects", "p.hcl")
	os.MkdirAll(filepath.Dir(local), 0o700)
	os.WriteFile(local, []byte("server \"l\" {\n  command = \"./bin/server\"\n}\nserver \"c\" {\n  command = \"x\"\n  cwd = \".\"\n}\n"), 0o600)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), EnvLocalConfig: local, EnvManagedConfig: filepath.Join(dir, "none.hcl")}
	cfg, diags = Load(&LoadOptions{WorkDir: filepath.Join(proj, "sub"), LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got, want := cfg.Server("l").Command, filepath.Join(proj, "bin", "server"); got != want {
		t.Errorf("local scope command: %q, want %q", got, want)
	}
	if got := cfg.Server("c").Cwd; got != proj {
		t.Errorf("local scope cwd: %q, want %q", got, proj)
	}
}

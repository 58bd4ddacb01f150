package conn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestEnvFileChangedAfterApproval: a project server's approval covers its
// env_file's content. Changed after the configuration was loaded (a git
// pull under a running gateway), the connect is refused and no process
// starts; changed before a load, the server is not approved and says that
// the env file changed.
func TestEnvFileChangedAfterApproval(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the server is a /bin/sh script")
	}
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	marker := filepath.Join(root, "started")
	envFile := filepath.Join(proj, ".env")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(envFile, "A=1\n")
	write(filepath.Join(proj, config.ProjectFileName), fmt.Sprintf("server \"p\" {\n  command  = \"/bin/sh\"\n  args     = [\"-c\", \"touch %s; exit 1\"]\n  env_file = \".env\"\n}\n", marker))
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "PATH": os.Getenv("PATH")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	load := func() *config.Server {
		t.Helper()
		cfg, diags := config.Load(&config.LoadOptions{LookupEnv: lookup, WorkDir: proj})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return cfg.Server("p")
	}
	s := load()
	write(filepath.Join(home, ".config", "mcphost", "config.hcl"),
		fmt.Sprintf("settings {\n  approved_project_servers = { p = %q }\n}\n", s.ApprovalHash()))
	if s = load(); !s.Approved {
		t.Fatalf("not approved: %s", s.ApprovalNote())
	}

	// Changed under the loaded configuration: the connect is refused.
	write(envFile, "A=1\nNODE_OPTIONS=--require ./x.js\n")
	m := NewManager([]*config.Server{s}, &Options{LookupEnv: lookup})
	defer m.Close()
	_, err := m.Session(context.Background(), "p")
	var fe *EnvFileError
	if !errors.Is(err, config.ErrEnvFileChanged) || !errors.As(err, &fe) || fe.Path != envFile {
		t.Fatalf("err = %v, want an EnvFileError for %s wrapping ErrEnvFileChanged", err, envFile)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server's process started with a changed env_file")
	}

	// Loaded again: not approved, and the reason says so.
	s = load()
	m2 := NewManager([]*config.Server{s}, &Options{LookupEnv: lookup})
	defer m2.Close()
	_, err = m2.Session(context.Background(), "p")
	if s.Approved || !errors.Is(err, ErrNotApproved) || !strings.Contains(err.Error(), "env file "+envFile+" changed") ||
		!strings.Contains(err.Error(), "mcphost config approve p") {
		t.Fatalf("Approved = %v, err = %v: want not approved because the env file changed", s.Approved, err)
	}
}

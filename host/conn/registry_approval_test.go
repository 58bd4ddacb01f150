package conn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// TestRegistryNotApproved: a server installed from a registry in the
// user's own file, loaded as mcphost loads it, is disabled until approved
// (ErrNotApproved, with the command that approves it) and its process is
// never started; once its approval is in the settings, the same path
// starts it (so the test sees a process start when one happens).
func TestRegistryNotApproved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_CONFIG_HOME": filepath.Join(dir, "home", ".config"),
		config.EnvManagedConfig: filepath.Join(dir, "none.hcl"), config.EnvLocalConfig: filepath.Join(dir, "local.hcl")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	user := filepath.Join(dir, "home", ".config", "mcphost", "config.hcl")
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	block := fmt.Sprintf("server \"demo\" {\n  command  = \"/bin/sh\"\n  args     = [\"-c\", \"touch %s\"]\n  registry = \"io.example/demo@1.0.0\"\n}\n", marker)
	if err := os.WriteFile(user, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func() (Status, error) {
		t.Helper()
		cfg, diags := config.Load(&config.LoadOptions{LookupEnv: lookup, WorkDir: dir})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		s := cfg.Server("demo")
		if s == nil {
			t.Fatal("no server demo")
		}
		s.ConnectTimeout = 5 * time.Second
		m := NewManager(cfg.Servers, &Options{LookupEnv: lookup})
		defer m.Close()
		m.ConnectAll(context.Background(), nil)
		_, err := m.CallTool(context.Background(), "demo", &mcp.CallToolParams{Name: "echo"}, nil)
		return m.Status()[0], err
	}

	st, err := run()
	if st.State != StateDisabled || !strings.Contains(st.Error, "mcphost config approve demo") || !strings.Contains(st.Error, "io.example/demo@1.0.0") {
		t.Errorf("unapproved: %+v", st)
	}
	if !errors.Is(err, ErrNotApproved) {
		t.Errorf("a call: %v, want ErrNotApproved", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the unapproved server's process was started")
	}

	cfg, _ := config.Load(&config.LoadOptions{LookupEnv: lookup, WorkDir: dir})
	if err := config.WriteApprovals(user, map[string]string{"demo": cfg.Server("demo").ApprovalHash()}); err != nil {
		t.Fatal(err)
	}
	if st, _ := run(); st.State == StateDisabled {
		t.Fatalf("approved: %+v", st)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the approved server's process was not started")
	}
}

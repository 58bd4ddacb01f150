package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcphost/mcphost/host/mcpregistry"
	"github.com/mcphost/mcphost/host/mcpregistry/registrytest"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestMain registers the real mcphost CLI and the demo server as commands, so
// the scripts run the real host against real server processes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mcphost": func() {
			os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"mcphost-demo": func() { os.Exit(demoserver.Main(os.Args[1:], os.Stderr, os.Exit)) },
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	reg := registrytest.Load(t, "testdata/mcp-registry.json") // mcp_registry.txtar's MCP Registry
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv(mcpregistry.EnvURL, reg.URL)
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
			env.Setenv("MCPHOST_MANAGED_CONFIG", filepath.Join(env.WorkDir, "etc", "managed.hcl"))
			return os.MkdirAll(home, 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// isempty DIR: DIR has no entries (or does not exist).
			"isempty": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: isempty DIR")
				}
				entries, err := os.ReadDir(ts.MkAbs(args[0]))
				if err != nil && !os.IsNotExist(err) {
					ts.Fatalf("%v", err)
				}
				if empty := len(entries) == 0; empty == neg {
					ts.Fatalf("%s has %d entries", args[0], len(entries))
				}
			},
		},
	})
}

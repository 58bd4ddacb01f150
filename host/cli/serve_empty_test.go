package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeSaysWhenEmpty: serve with no server (none configured, or only
// local-scope servers of other directories) says so on stderr, with the
// files it read, the other directories' local files that have servers, and
// the command that adds one to the user scope. Run through the CLI.
func TestServeSaysWhenEmpty(t *testing.T) {
	for _, tc := range []struct {
		name    string
		user    string            // the user file ("": none)
		others  map[string]string // projects/NAME.hcl: other directories' local files
		managed string            // the managed file ("": none)
		want    []string
		notWant []string
	}{
		{
			name: "no file at all",
			want: []string{"no servers are configured: clients get no tools", "no configuration file was found",
				"no user-scope file at", "no local-scope file at", "mcphost server add -s user NAME -- COMMAND"},
			notWant: []string{"other directories"},
		},
		{
			name:   "only other directories' local servers",
			user:   "settings {\n}\n",
			others: map[string]string{"-home-u-src-app.hcl": "server \"fs\" {\n  command = \"fs-mcp\"\n}\nserver \"gh\" {\n  command = \"gh-mcp\"\n}\n", "-home-u-empty.hcl": "", "-home-u-bad.hcl": "server {"},
			want: []string{"no servers are configured", "(user scope)", "config.hcl", "-home-u-src-app.hcl: fs, gh",
				"add it again with -s user", "mcphost server add -s user NAME -- COMMAND"},
			notWant: []string{"-home-u-empty.hcl", "-home-u-bad.hcl", "no configuration file was found"},
		},
		{
			name: "every server disabled",
			user: "server \"off\" {\n  command  = \"x\"\n  disabled = true\n}\n",
			want: []string{"every configured server is disabled"},
		},
		{
			name:    "only an unapproved registry server",
			user:    "server \"reg\" {\n  command  = \"x\"\n  registry = \"io.example/reg@1.0.0\"\n}\n",
			want:    []string{"no configured server will run: clients get no tools", "not approved", "reg (", "mcphost config approve reg"},
			notWant: []string{"every configured server is disabled"},
		},
		{
			name:    "blocked by the managed policy, unapproved and disabled",
			user:    "server \"mine\" {\n  command = \"x\"\n}\nserver \"reg\" {\n  command  = \"x\"\n  registry = \"io.example/reg@1.0.0\"\n}\nserver \"off\" {\n  command  = \"y\"\n  disabled = true\n}\n",
			managed: "policy {\n  denied_servers = [{ name = \"mine\" }]\n}\n",
			want: []string{"no configured server will run", "blocked by the managed policy", "mine: denied_servers entry",
				"mcphost config approve reg", "disabled (disabled = true): off"},
		},
		{
			name:    "a server",
			user:    "server \"crashy\" {\n  command = \"sh\"\n  args    = [\"-c\", \"exit 3\"]\n}\n",
			notWant: []string{"no servers are configured", "disabled", "server add -s user"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			confDir := filepath.Join(dir, "config")
			t.Setenv("HOME", dir)
			t.Setenv("MCPHOST_CONFIG_DIR", confDir)
			t.Setenv("MCPHOST_MANAGED_CONFIG", filepath.Join(dir, "managed.hcl"))
			t.Setenv("MCPHOST_LOCAL_CONFIG", filepath.Join(dir, "local.hcl"))
			t.Setenv("MCPHOST_SERVE_TOKEN", "")
			if tc.user != "" {
				mustNoErr(t, os.MkdirAll(confDir, 0o755))
				mustNoErr(t, os.WriteFile(filepath.Join(confDir, "config.hcl"), []byte(tc.user), 0o600))
			}
			if tc.managed != "" {
				mustNoErr(t, os.WriteFile(filepath.Join(dir, "managed.hcl"), []byte(tc.managed), 0o600))
			}
			for name, src := range tc.others {
				p := filepath.Join(confDir, "projects", name)
				mustNoErr(t, os.MkdirAll(filepath.Dir(p), 0o755))
				mustNoErr(t, os.WriteFile(p, []byte(src), 0o600))
			}
			out := serveBanner(t, "serve", "--http", "127.0.0.1:0")
			if testing.Verbose() {
				t.Log(out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestServersShowConnectTimeoutHint: `mcphost servers` shows, under the
// table, which of the host's variables a stdio server that timed out did
// not get, and how to pass them (a real process that never answers).
func TestServersShowConnectTimeoutHint(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.hcl")
	mustNoErr(t, os.WriteFile(cfg, []byte("server \"silent\" {\n  command         = \"sleep\"\n  args            = [\"300\"]\n  connect_timeout = \"300ms\"\n}\n"), 0o600))
	t.Setenv("HOME", dir)
	t.Setenv("MCPHOST_CONFIG_DIR", filepath.Join(dir, "config"))
	t.Setenv("MCPHOST_MANAGED_CONFIG", filepath.Join(dir, "managed.hcl"))
	t.Setenv("CORP_PROXY_PAC", "http://pac.corp.example/s3cr3t.pac")
	var stdout, stderr strings.Builder
	Run(context.Background(), []string{"--config", cfg, "servers"}, strings.NewReader(""), &stdout, &stderr)
	out := stdout.String()
	if testing.Verbose() {
		t.Log(out)
	}
	for _, w := range []string{"silent: connecting to silent: connect timed out after 300ms", "not passed: ", "CORP_PROXY_PAC",
		`inherit_env = [`, "--inherit-env "} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s\n%s", w, out, stderr.String())
		}
	}
	if strings.Contains(out+stderr.String(), "s3cr3t") {
		t.Errorf("a value is shown:\n%s", out)
	}
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/mcpregistry"
	"github.com/mcphost/mcphost/host/mcpregistry/registrytest"
)

// hostileRegistry serves one server, io.example/keys 1.0.0 (npm package
// keys-mcp 1.0.0), whose environment variables are API_KEY (required, not
// marked secret) and, when withEscape, a required variable whose name and
// description carry terminal escapes.
func hostileRegistry(t *testing.T, withEscape bool) *registrytest.Server {
	t.Helper()
	env := []map[string]any{{"name": "API_KEY", "description": "the service's key", "isRequired": true}}
	if withEscape {
		env = append(env, map[string]any{"name": "K\x1b]0;TITLE\x07EY", "description": "clear \x1b[2J screen", "isRequired": true, "choices": []string{"a\x1b[31m", "b"}})
	}
	doc := map[string]any{"servers": []any{map[string]any{
		"server": map[string]any{"name": "io.example/keys", "description": "keys", "version": "1.0.0",
			"packages": []any{map[string]any{"registryType": "npm", "identifier": "keys-mcp", "version": "1.0.0",
				"transport": map[string]any{"type": "stdio"}, "environmentVariables": env}}},
		"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true}},
	}}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return registrytest.Load(t, path)
}

// TestRegistryInstallHardening: what server add --from-registry writes
// and prints when the registry's answer is careless or hostile.
func TestRegistryInstallHardening(t *testing.T) {
	tests := []struct {
		name   string
		escape bool
		setup  func(r *registryEnv) // before the add
		args   []string
		check  func(t *testing.T, r *registryEnv, err error)
	}{
		{
			name: "a value whose name says secret is stored as secret(), not marked isSecret",
			args: []string{"keys", "-e", "API_KEY=plain-s3cr3t"},
			check: func(t *testing.T, r *registryEnv, err error) {
				if err != nil {
					t.Fatal(err, r.stderr.String())
				}
				if l := r.local(); strings.Contains(l, "plain-s3cr3t") || !strings.Contains(l, "secret(") {
					t.Errorf("local file:\n%s", l)
				}
				if strings.Contains(r.stdout.String()+r.stderr.String(), "plain-s3cr3t") {
					t.Error("the secret is printed")
				}
			},
		},
		{
			name: "--inherit-env is written",
			args: []string{"keys", "-e", "API_KEY=k", "--inherit-env", "HTTPS_PROXY,NODE_EXTRA_CA_CERTS"},
			check: func(t *testing.T, r *registryEnv, err error) {
				if err != nil {
					t.Fatal(err, r.stderr.String())
				}
				if l := r.local(); !strings.Contains(l, `inherit_env = ["HTTPS_PROXY", "NODE_EXTRA_CA_CERTS"]`) {
					t.Errorf("local file:\n%s", l)
				}
			},
		},
		{
			name: "--inherit-env with a bad name is refused",
			args: []string{"keys", "-e", "API_KEY=k", "--inherit-env", "A=B"},
			check: func(t *testing.T, r *registryEnv, err error) {
				if err == nil || !strings.Contains(err.Error(), "--inherit-env") {
					t.Fatalf("got %v", err)
				}
			},
		},
		{
			name: "another server's secret file is neither replaced nor deleted",
			setup: func(r *registryEnv) {
				name := registrySecretName("keys", r.env[config.EnvLocalConfig], "API_KEY")
				if err := config.WriteSecret(r.secretsDir(), name, "other-servers-secret"); err != nil {
					r.t.Fatal(err)
				}
			},
			args: []string{"keys", "-e", "API_KEY=new-s3cr3t"},
			check: func(t *testing.T, r *registryEnv, err error) {
				if err != nil {
					t.Fatal(err, r.stderr.String())
				}
				name := registrySecretName("keys", r.env[config.EnvLocalConfig], "API_KEY")
				if b, _ := os.ReadFile(filepath.Join(r.secretsDir(), name)); string(b) != "other-servers-secret" {
					t.Errorf("the existing secret is now %q", b)
				}
				if !strings.Contains(r.local(), `secret("`+name+`-2")`) {
					t.Errorf("local file:\n%s", r.local())
				}
				if b, _ := os.ReadFile(filepath.Join(r.secretsDir(), name+"-2")); string(b) != "new-s3cr3t" {
					t.Errorf("the new secret: %q", b)
				}
			},
		},
		{
			name:   "escapes in a missing input's name and description are not printed",
			escape: true,
			args:   []string{"keys", "-e", "API_KEY=k"},
			check: func(t *testing.T, r *registryEnv, err error) {
				if err == nil {
					t.Fatal("installed without the required input")
				}
				if out := err.Error() + r.stdout.String() + r.stderr.String(); strings.ContainsAny(out, "\x1b\x07") {
					t.Errorf("escape printed: %q", out)
				}
			},
		},
		{
			name:   "escapes in a wrong choice's message are not printed",
			escape: true,
			args:   []string{"keys", "-e", "API_KEY=k", "-e", "K\x1b]0;TITLE\x07EY=c"},
			check: func(t *testing.T, r *registryEnv, err error) {
				if err == nil {
					t.Fatal("installed with a value outside the choices")
				}
				if out := err.Error() + r.stdout.String() + r.stderr.String(); strings.ContainsAny(out, "\x1b\x07") {
					t.Errorf("escape printed: %q", out)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRegistryEnv(t)
			r.t = t
			r.reg = hostileRegistry(t, tt.escape)
			r.env[mcpregistry.EnvURL] = r.reg.URL
			if tt.setup != nil {
				tt.setup(r)
			}
			err := r.run(append([]string{"server", "add", "--from-registry", "io.example/keys"}, tt.args...)...)
			tt.check(t, r, err)
		})
	}
}

// TestApprovalScreenKeys: a key with terminal escapes is shown quoted on
// the approval screen, never raw.
func TestApprovalScreenKeys(t *testing.T) {
	var b strings.Builder
	describeForApproval(&b, &config.Server{Name: "x", Transport: config.TransportStdio, Command: "npx", Registry: "io.example/x@1.0.0",
		Env: map[string]string{"K\x1b]0;TITLE\x07EY": "v", "PLAIN": "p"}})
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `"K\x1b]0;TITLE\aEY" = "v"`) || !strings.Contains(out, `PLAIN = "p"`) {
		t.Errorf("approval screen:\n%q", out)
	}
}

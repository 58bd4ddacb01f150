package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestEnvFileAttribute: env_file is a stdio server's, relative to the
// declaring file's directory, and its problems are diagnostics at the
// attribute (file:line:col).
func TestEnvFileAttribute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		src      string
		files    map[string]string // relative to the config's directory
		want     string            // EnvFile, relative to the config's directory
		severity hcl.DiagnosticSeverity
		summary  string
		line     int
	}{
		{name: "relative to the declaring file", src: "server \"s\" {\n  command  = \"x\"\n  env_file = \"envs/s.env\"\n}\n",
			files: map[string]string{"envs/s.env": "A=1\n"}, want: "envs/s.env"},
		{name: "missing: a warning, the connect fails", src: "server \"s\" {\n  command  = \"x\"\n  env_file = \"nope.env\"\n}\n",
			want: "nope.env", severity: hcl.DiagWarning, summary: "env_file not readable", line: 3},
		{name: "a directory", src: "server \"s\" {\n  command  = \"x\"\n\n  env_file = \"envs\"\n}\n",
			files: map[string]string{"envs/x": ""}, severity: hcl.DiagError, summary: "env_file is a directory", line: 4},
		{name: "empty", src: "server \"s\" {\n  command  = \"x\"\n  env_file = \"\"\n}\n",
			severity: hcl.DiagError, summary: "Empty env_file", line: 3},
		{name: "not for a remote server", src: "server \"s\" {\n  transport = \"http\"\n  url = \"https://example.com/mcp\"\n  env_file = \"s.env\"\n}\n",
			files: map[string]string{"s.env": ""}, severity: hcl.DiagError, summary: "Argument not valid for this transport", line: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			dir := filepath.Join(tr.home, ".config", "mcphost")
			for p, c := range tc.files {
				tr.write(filepath.Join(dir, p), c)
			}
			file := tr.user(tc.src)
			cfg, diags := tr.load()
			if tc.summary == "" {
				if len(diags) > 0 {
					t.Fatalf("diagnostics: %s", diags.Error())
				}
			} else {
				var found *hcl.Diagnostic
				for _, d := range diags {
					if d.Summary == tc.summary {
						found = d
					}
				}
				if found == nil || found.Severity != tc.severity || found.Subject == nil || found.Subject.Filename != file || found.Subject.Start.Line != tc.line || found.Subject.Start.Column < 3 {
					t.Fatalf("want a %q diagnostic at %s:%d, got %s", tc.summary, file, tc.line, diags.Error())
				}
			}
			if tc.want != "" {
				if len(cfg.Servers) != 1 || cfg.Servers[0].EnvFile != filepath.Join(dir, tc.want) {
					t.Fatalf("servers %+v, want env_file %s", cfg.Servers, filepath.Join(dir, tc.want))
				}
				if out := string(Render(cfg)); !strings.Contains(out, "env_file") {
					t.Errorf("config show lacks env_file:\n%s", out)
				}
			}
		})
	}
}

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestEnvFileApproval: the approval of a server that needs one (a project
// server, a registry server) covers its env_file's content as loaded; a
// changed file makes it unapproved again, saying so; approvals of servers
// without env_file keep their shape.
func TestEnvFileApproval(t *testing.T) {
	t.Parallel()
	const projBlock = "server \"p\" {\n  command  = \"p\"\n  env_file = \".env\"\n}\n"
	const regBlock = "server \"p\" {\n  command  = \"p\"\n  registry = \"io.example/p@1.0.0\"\n  env_file = \"p.env\"\n}\n"
	tests := []struct {
		name     string
		registry bool
		// edit runs between the approval and the second load.
		edit         func(tr *tree, envPath string)
		recorded     func(h string) string // the approval written (default: the hash at the first load)
		wantApproved bool
		wantNote     string
	}{
		{name: "project: unchanged file stays approved", wantApproved: true},
		{name: "project: a changed value is unapproved", wantNote: "env file",
			edit: func(tr *tree, p string) { tr.write(p, "A=1\nNODE_OPTIONS=--require ./x.js\n") }},
		{name: "project: a removed file is unapproved", wantNote: "changed",
			edit: func(tr *tree, p string) { must(tr.t, os.Remove(p)) }},
		{name: "project: an approval given before the content was covered", wantNote: "does not cover",
			recorded: func(h string) string { b, _, _ := strings.Cut(h, envFileHashSep); return b }},
		{name: "registry: unchanged file stays approved", registry: true, wantApproved: true},
		{name: "registry: a changed value is unapproved", registry: true, wantNote: "changed",
			edit: func(tr *tree, p string) { tr.write(p, "A=2\n") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			var envPath string
			if tc.registry {
				envPath = filepath.Join(tr.home, ".config", "mcphost", "p.env")
				tr.write(envPath, "A=1\n")
				tr.user(regBlock)
			} else {
				envPath = filepath.Join(tr.project, ".env")
				tr.write(envPath, "A=1\n")
				tr.proj(projBlock)
			}
			s := tr.mustLoad().Server("p")
			if s == nil || s.Approved {
				t.Fatalf("server before approval: %+v", s)
			}
			h := s.ApprovalHash()
			if !strings.Contains(h, envFileHashSep+DigestEnvFile([]byte("A=1\n"))) {
				t.Fatalf("approval hash %q does not cover the env_file's content", h)
			}
			if tc.recorded != nil {
				h = tc.recorded(h)
			}
			settings := fmt.Sprintf("settings {\n  approved_project_servers = { p = %q }\n}\n", h)
			if tc.registry {
				tr.user(regBlock + settings)
			} else {
				tr.local(settings)
			}
			if tc.edit != nil {
				tc.edit(tr, envPath)
			}
			s = tr.mustLoad().Server("p")
			if s.Approved != tc.wantApproved {
				t.Fatalf("Approved = %v, want %v (note %q)", s.Approved, tc.wantApproved, s.ApprovalNote())
			}
			if tc.wantNote != "" && !strings.Contains(s.ApprovalNote(), tc.wantNote) {
				t.Errorf("ApprovalNote = %q, want it to say %q", s.ApprovalNote(), tc.wantNote)
			}
			if tc.wantApproved && s.EnvFileDigest() != DigestEnvFile([]byte("A=1\n")) {
				t.Errorf("EnvFileDigest = %q: the connect cannot check the file", s.EnvFileDigest())
			}
		})
	}
}

// TestEnvFileApprovalHashShape: a server without env_file hashes as before
// (no env_file part), so its existing approvals stay valid.
func TestEnvFileApprovalHashShape(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.proj("server \"p\" {\n  command = \"p\"\n}\n")
	s := tr.mustLoad().Server("p")
	if h := s.ApprovalHash(); strings.Contains(h, envFileHashSep) || h != (&Server{Name: "p", Transport: TransportStdio, Command: "p"}).ApprovalHash() {
		t.Errorf("approval hash of a server without env_file changed shape: %q", h)
	}
}

// TestProjectEnvFileConfined: a project file's env_file must be a file of
// the project (the project file's directory), symlinks resolved; a
// diagnostic names file:line:col.
func TestProjectEnvFileConfined(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		envFile string
		setup   func(tr *tree)
		wantErr string
	}{
		{name: "inside", envFile: ".env"},
		{name: "in a subdirectory", envFile: "sub/s.env"},
		{name: "parent directory", envFile: "../other/.env", wantErr: "env_file outside the project"},
		{name: "absolute outside", envFile: "/etc/hostname", wantErr: "env_file outside the project"},
		{name: "symlink to outside", envFile: "link.env", wantErr: "env_file outside the project",
			setup: func(tr *tree) {
				out := tr.write(filepath.Join(tr.home, "secrets.env"), "TOKEN=x\n")
				if err := os.Symlink(out, filepath.Join(tr.project, "link.env")); err != nil {
					tr.t.Skipf("no symlinks: %v", err)
				}
			}},
		{name: "through a symlinked directory", envFile: "d/x.env", wantErr: "env_file outside the project",
			setup: func(tr *tree) {
				tr.write(filepath.Join(tr.home, "d", "x.env"), "TOKEN=x\n")
				if err := os.Symlink(filepath.Join(tr.home, "d"), filepath.Join(tr.project, "d")); err != nil {
					tr.t.Skipf("no symlinks: %v", err)
				}
			}},
		{name: "from env()", envFile: `env("ENVF")`, wantErr: "env_file from the environment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			tr.write(filepath.Join(tr.project, ".env"), "A=1\n")
			tr.write(filepath.Join(tr.project, "sub", "s.env"), "A=1\n")
			tr.write(filepath.Join(tr.home, "src", "other", ".env"), "A=1\n")
			if tc.setup != nil {
				tc.setup(tr)
			}
			expr := fmt.Sprintf("%q", tc.envFile)
			if strings.HasPrefix(tc.envFile, "env(") {
				expr = tc.envFile
			}
			file := tr.proj(fmt.Sprintf("server \"p\" {\n  command  = \"p\"\n  env_file = %s\n}\n", expr))
			cfg, diags := tr.load()
			var found *hcl.Diagnostic
			for _, d := range diags {
				if d.Summary == tc.wantErr { // (a warning in a project file: the block is skipped)
					found = d
				}
			}
			if tc.wantErr == "" {
				if diags.HasErrors() || cfg.Server("p") == nil {
					t.Fatalf("diagnostics: %s", diags.Error())
				}
				return
			}
			if found == nil || found.Subject == nil || found.Subject.Filename != file || found.Subject.Start.Line != 3 || found.Subject.Start.Column < 3 {
				t.Fatalf("want a %q error at %s:3:col, got %s", tc.wantErr, file, diags.Error())
			}
			if cfg != nil && cfg.Server("p") != nil {
				t.Errorf("server p loaded with an env_file outside the project")
			}
		})
	}
}

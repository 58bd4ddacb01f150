package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestRegistryServerNeedsApproval: a server with a registry attribute, in
// the user's own file, is unapproved (and its secret() not read) until its
// hash is approved, like a project server; the hash covers the block as
// written, so a rotated secret needs no new approval, while an edit does.
func TestRegistryServerNeedsApproval(t *testing.T) {
	t.Parallel()
	block := func(version, key string) string {
		return fmt.Sprintf("server \"brave\" {\n  command = \"npx\"\n  args = [\"-y\", \"@modelcontextprotocol/server-brave-search@%s\"]\n  env = {\n    BRAVE_API_KEY = %s\n  }\n  registry = \"io.modelcontextprotocol.anonymous/brave-search@%s\"\n}\n", version, key, version)
	}
	tr := newTree(t)
	user := block("1.0.2", `secret("brave.key")`)
	tr.user(user + stdio("plain", "plain-mcp"))

	// Unapproved: the secret does not exist yet, and is not read.
	cfg := tr.mustLoad()
	if got := strings.Join(summary(cfg), " "); got != "brave:user:unapproved plain:user" {
		t.Fatalf("servers: %s", got)
	}
	s := cfg.Server("brave")
	if s.Registry != "io.modelcontextprotocol.anonymous/brave-search@1.0.2" || s.Env["BRAVE_API_KEY"] != `${secret("brave.key")}` {
		t.Fatalf("before approval: %+v", s)
	}
	hash := s.ApprovalHash()

	// Approved: the secret is read.
	dir := SecretsDir(tr.env.lookup, tr.project)
	must(t, WriteSecret(dir, "brave.key", "bsk-1"))
	tr.local(fmt.Sprintf("settings {\n  approved_project_servers = { brave = %q }\n}\n", hash))
	cfg = tr.mustLoad()
	s = cfg.Server("brave")
	if !s.Approved || s.Env["BRAVE_API_KEY"] != "bsk-1" || s.ApprovalHash() != hash {
		t.Fatalf("after approval: approved %v, env %q", s.Approved, s.Env)
	}
	// A rotated secret keeps the approval.
	must(t, WriteSecret(dir, "brave.key", "bsk-2"))
	if s := tr.mustLoad().Server("brave"); !s.Approved || s.Env["BRAVE_API_KEY"] != "bsk-2" {
		t.Fatalf("rotated secret: approved %v", s.Approved)
	}
	// Another version needs approval again.
	tr.user(block("1.0.3", `secret("brave.key")`))
	if s := tr.mustLoad().Server("brave"); s.Approved {
		t.Fatal("a new version kept the approval")
	}
	// approve_all_project_servers is about project files only.
	tr.local("settings {\n  approve_all_project_servers = true\n}\n")
	if s := tr.mustLoad().Server("brave"); s.Approved {
		t.Fatal("approve_all_project_servers approved a registry server")
	}
}

// TestRegistryInProjectScope: a project server from a registry is approved
// as any project server (the hash covers the registry attribute).
func TestRegistryInProjectScope(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.proj("server \"w\" {\n  command = \"uvx\"\n  args = [\"weather-mcp-server==0.5.0\"]\n  env = { KEY = env(\"WEATHER_KEY\") }\n  registry = \"io.github.example/weather-mcp@0.5.0\"\n}\n")
	cfg := tr.mustLoad()
	s := cfg.Server("w")
	if s.Approved || s.Registry == "" {
		t.Fatalf("%+v", s)
	}
	plain := *s.Written()
	plain.Registry = ""
	if plain.ApprovalHash() == s.ApprovalHash() {
		t.Error("the approval hash does not cover the registry attribute")
	}
}

// TestRegistryAttrInvalid: a bad value is an error at its file:line:col.
func TestRegistryAttrInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, want string }{
		{"weather", `"weather" is not an MCP Registry server name`},
		{"io.github.example/weather-mcp", `want NAME@VERSION`},
		{"io.github.example/weather-mcp@", `not a version after the @`},
		{"io.github.example/weather mcp@1", `is not an MCP Registry server name`},
		// The version is shown on the approval screen: no escapes.
		{"io.github.example/weather-mcp@1.0\u202e", `not a version after the @`},
	} {
		tr := newTree(t)
		path := tr.user(fmt.Sprintf("server \"w\" {\n  command = \"uvx\"\n  registry = %q\n}\n", tc.value))
		_, diags := tr.load()
		if !diags.HasErrors() {
			t.Errorf("%q: accepted", tc.value)
			continue
		}
		d := diags[0]
		if d.Summary != "Invalid registry" || !strings.Contains(d.Detail, tc.want) || d.Subject == nil ||
			d.Subject.Filename != path || d.Subject.Start.Line != 3 || d.Subject.Start.Column != 14 {
			t.Errorf("%q: %s at %v", tc.value, d.Detail, d.Subject)
		}
	}
}

// TestApprovalHashWithoutRegistry: servers without the attribute hash as
// before it existed (their approvals stay valid).
func TestApprovalHashWithoutRegistry(t *testing.T) {
	t.Parallel()
	s := &Server{Name: "p", Transport: TransportStdio, Command: "p", Args: []string{"--x"}}
	r := *s
	r.Registry = "a/b@1"
	if s.approvalHash() == r.approvalHash() {
		t.Fatal("registry not hashed")
	}
	// The hash of this server as computed before the attribute was added.
	before := "sha256:" + hashJSON(struct {
		Command string
		Args    []string
		Env     map[string]string
		Inherit []string
		Cwd     string
		Legacy  bool `json:",omitempty"`
	}{Command: "p", Args: []string{"--x"}})
	if s.approvalHash() != before {
		t.Fatalf("hash changed: %s, was %s", s.approvalHash(), before)
	}
}

// TestAddServerBlockSecrets: secret values of env and headers are written
// as secret() and env() calls among the literal ones, sorted.
func TestAddServerBlockSecrets(t *testing.T) {
	t.Parallel()
	out, err := AddServerBlock(nil, "c.hcl", &ServerEntry{
		Name: "db", Command: "docker", Args: []string{"run"},
		Env:       map[string]string{"USER": "app", "PASSWORD": "not this"},
		SecretEnv: map[string]SecretRef{"PASSWORD": {Stored: "db.pw"}, "TOKEN": {Env: "DB_TOKEN"}},
		Registry:  "io.github.example/database-manager@3.1.0",
	})
	must(t, err)
	want := `server "db" {
  command = "docker"
  args    = ["run"]
  env = {
    PASSWORD = secret("db.pw")
    TOKEN    = env("DB_TOKEN")
    USER     = "app"
  }
  registry = "io.github.example/database-manager@3.1.0"
}
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, err = AddServerBlock(nil, "c.hcl", &ServerEntry{
		Name: "api", Transport: "http", URL: "https://api.example.com/mcp",
		SecretHeaders: map[string]SecretRef{"X-API-Key": {Stored: "api.key"}},
		Headers:       map[string]string{"X-Region": "eu"},
	})
	must(t, err)
	if !strings.Contains(string(out), `X-API-Key = secret("api.key")`) || !strings.Contains(string(out), `X-Region  = "eu"`) {
		t.Errorf("headers:\n%s", out)
	}
}

// TestParseRegistryRefVersion: a version holds no control or other
// characters (it reaches the approval screen); semver-like ones pass.
func TestParseRegistryRefVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ref string
		ok  bool
	}{
		{"io.github.example/w@1.0.2", true},
		{"io.github.example/w@0.4.0-beta+build.5", true},
		{"io.github.example/w@2025_01_02", true},
		{"io.github.example/w@1.0\x1b[2J", false},
		{"io.github.example/w@1.0\x1b]0;T\x07", false},
		{"io.github.example/w@\x9b31m", false},
		{"io.github.example/w@1.0\u202e", false},
		{"io.github.example/w@-1", false},
	} {
		_, _, err := ParseRegistryRef(tc.ref, true)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.ref, err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x1b\x07") {
			t.Errorf("%q: the error holds the escape: %q", tc.ref, err)
		}
	}
}

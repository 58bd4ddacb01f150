package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRemoveServerBlock(t *testing.T) {
	tests := []struct {
		name, src, remove, want string
		stored                  []string
	}{{
		name:   "middle, with its lead comment",
		remove: "b",
		src:    "# top\n\nserver \"a\" {\n  command = \"a\" # a's\n}\n\n# about b\nserver \"b\" {\n  command = \"b\"\n}\n\n# about c\nserver \"c\" {\n  command = \"c\"\n}\n",
		want:   "# top\n\nserver \"a\" {\n  command = \"a\" # a's\n}\n\n# about c\nserver \"c\" {\n  command = \"c\"\n}\n",
	}, {
		name:   "last",
		remove: "c",
		src:    "server \"a\" {\n  command = \"a\"\n}\n\n\n# about c\nserver \"c\" {\n  command = \"c\"\n}\n",
		want:   "server \"a\" {\n  command = \"a\"\n}\n",
	}, {
		name:   "first",
		remove: "a",
		src:    "server \"a\" {\n  command = \"a\"\n}\n\nserver \"b\" {\n  command = \"b\"\n}\n",
		want:   "server \"b\" {\n  command = \"b\"\n}\n",
	}, {
		name:   "the only block",
		remove: "a",
		src:    "server \"a\" {\n  command = \"a\"\n}\n",
		want:   "",
	}, {
		name:   "other blank lines and a heredoc stay",
		remove: "b",
		src:    "permissions {\n\n\n  allow = [\"x\"]\n}\n\nserver \"b\" {\n  command = \"b\"\n}\n\nserver \"h\" {\n  command = \"h\"\n  env = { TEXT = <<EOT\none\n\n\ntwo\nEOT\n  }\n}\n",
		want:   "permissions {\n\n\n  allow = [\"x\"]\n}\n\nserver \"h\" {\n  command = \"h\"\n  env = { TEXT = <<EOT\none\n\n\ntwo\nEOT\n  }\n}\n",
	}, {
		name:   "its stored secrets are reported",
		remove: "s",
		src:    "server \"s\" {\n  transport = \"http\"\n  url = \"https://x/mcp\"\n  oauth {\n    client_id = \"c\"\n    client_secret = secret(\"s.1234abcd.client_secret\")\n  }\n}\n",
		want:   "",
		stored: []string{"s.1234abcd.client_secret"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stored, err := RemoveServerBlock([]byte(tc.src), "f.hcl", tc.remove)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, tc.want)
			}
			if strings.Join(stored, ",") != strings.Join(tc.stored, ",") {
				t.Errorf("stored = %q, want %q", stored, tc.stored)
			}
		})
	}
	// A CRLF file stays CRLF, and its blank lines are joined the same way.
	crlf := "# top\r\n\r\nserver \"a\" {\r\n  command = \"a\"\r\n}\r\n\r\nserver \"b\" {\r\n  command = \"b\"\r\n}\r\n"
	out, _, err := RemoveServerBlock([]byte(crlf), "f.hcl", "a")
	if want := "# top\r\n\r\nserver \"b\" {\r\n  command = \"b\"\r\n}\r\n"; err != nil || string(out) != want {
		t.Errorf("CRLF removal: %q, %v; want %q", out, err, want)
	}
	added, err := AddServerBlock([]byte(crlf), "f.hcl", &ServerEntry{Name: "c", Command: "c"})
	if err != nil || !strings.HasSuffix(string(added), "}\r\n\r\nserver \"c\" {\r\n  command = \"c\"\r\n}\r\n") || strings.Count(string(added), "\n") != strings.Count(string(added), "\r\n") {
		t.Errorf("CRLF addition: %q, %v", added, err)
	}
	if _, _, err := RemoveServerBlock([]byte("server \"a\" {}\n"), "f.hcl", "b"); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("removing a missing server: %v, want ErrServerNotFound", err)
	}
	if _, _, err := RemoveServerBlock([]byte("server \"a\" {"), "f.hcl", "a"); err == nil {
		t.Error("an unparsable file was edited")
	}
}

func TestAddServerBlock(t *testing.T) {
	tests := []struct {
		name, src string
		entry     ServerEntry
		want      string
	}{{
		name:  "empty file",
		entry: ServerEntry{Name: "a", Command: "run", Args: []string{"-x", "${HOME}"}},
		want:  "server \"a\" {\n  command = \"run\"\n  args    = [\"-x\", \"$${HOME}\"]\n}\n",
	}, {
		name:  "no final newline, comments kept",
		src:   "# mine\nsettings {\n  tool_timeout = \"5m\" # long\n}",
		entry: ServerEntry{Name: "b", Transport: "http", URL: "https://b.example.com/mcp", Headers: map[string]string{"X-A": "1"}},
		want:  "# mine\nsettings {\n  tool_timeout = \"5m\" # long\n}\n\nserver \"b\" {\n  transport = \"http\"\n  url       = \"https://b.example.com/mcp\"\n  headers = {\n    X-A = \"1\"\n  }\n}\n",
	}, {
		name: "secrets by reference",
		entry: ServerEntry{Name: "c", Transport: "http", URL: "https://c/mcp",
			OAuth: &OAuthEntry{ClientID: "id", ClientSecret: SecretRef{Env: "C_SECRET"}, CallbackPort: 8080, Scopes: []string{"read"}}},
		want: "server \"c\" {\n  transport = \"http\"\n  url       = \"https://c/mcp\"\n  oauth {\n    client_id     = \"id\"\n    client_secret = env(\"C_SECRET\")\n    callback_port = 8080\n    scopes        = [\"read\"]\n  }\n}\n",
	}, {
		name: "xaa with a stored secret",
		entry: ServerEntry{Name: "d", Transport: "http", URL: "https://d/mcp", HeadersHelper: []string{"/bin/h"},
			XAA: &XAAEntry{IdP: "corp", ClientID: "d-app", ClientSecret: SecretRef{Stored: "d.x.client_secret"}}},
		want: "server \"d\" {\n  transport      = \"http\"\n  url            = \"https://d/mcp\"\n  headers_helper = \"/bin/h\"\n  auth \"xaa\" {\n    idp           = \"corp\"\n    client_id     = \"d-app\"\n    client_secret = secret(\"d.x.client_secret\")\n  }\n}\n",
	}, {
		name: "${VAR} expanded as env()",
		entry: ServerEntry{Name: "e", Command: "${HOME}/bin/x", Args: []string{"${TOKEN}", "a \"q\" %{x} $5"},
			Env: map[string]string{"K": "${K:-dflt \"v\"}"}, Expand: true},
		want: "server \"e\" {\n  command = \"${env(\"HOME\")}/bin/x\"\n  args    = [env(\"TOKEN\"), \"a \\\"q\\\" %%{x} $5\"]\n  env = {\n    K = env(\"K\", \"dflt \\\"v\\\"\")\n  }\n}\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := AddServerBlock([]byte(tc.src), "f.hcl", &tc.entry)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, tc.want)
			}
			// Adding then removing gives the file back (but for the final
			// newline the addition supplied).
			back, _, err := RemoveServerBlock(out, "f.hcl", tc.entry.Name)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimRight(tc.src, "\n"); strings.TrimRight(string(back), "\n") != want {
				t.Errorf("add then remove:\n%s\nwant:\n%s", back, want)
			}
		})
	}
	if _, err := AddServerBlock([]byte("server \"a\" {\n}\n"), "f.hcl", &ServerEntry{Name: "a", Command: "x"}); !errors.Is(err, ErrServerExists) {
		t.Errorf("adding an existing server: %v, want ErrServerExists", err)
	}
}

func TestServerEntryFromJSON(t *testing.T) {
	tests := []struct {
		name, json string
		check      func(*ServerEntry) bool
		wantErr    string
	}{
		{"stdio", `{"type":"stdio","command":"x","args":["-y"],"env":{"A":"1"}}`,
			func(e *ServerEntry) bool {
				return e.Transport == "" && e.Command == "x" && e.Args[0] == "-y" && e.Env["A"] == "1"
			}, ""},
		{"command without type", `{"command":"x"}`, func(e *ServerEntry) bool { return e.Transport == "" && e.Command == "x" }, ""},
		{"http by URL", `{"url":"https://a/mcp","headers":{"H":"v"}}`, func(e *ServerEntry) bool { return e.Transport == "http" && e.Headers["H"] == "v" }, ""},
		{"sse by URL", `{"url":"https://a/sse"}`, func(e *ServerEntry) bool { return e.Transport == "sse" }, ""},
		{"ws by URL", `{"url":"wss://a/mcp"}`, func(e *ServerEntry) bool { return e.Transport == "ws" }, ""},
		{"helper string", `{"type":"http","url":"https://a","headersHelper":"/h"}`, func(e *ServerEntry) bool { return len(e.HeadersHelper) == 1 }, ""},
		{"oauth", `{"type":"http","url":"https://a","oauth":{"clientId":"c","callbackPort":1}}`,
			func(e *ServerEntry) bool { return e.OAuth.ClientID == "c" && e.OAuth.CallbackPort == 1 }, ""},
		{"unknown member", `{"command":"x","bogus":1}`, nil, `unknown member "bogus"`},
		{"case variant", `{"Command":"x"}`, nil, `unknown member "Command"`},
		{"duplicate", `{"command":"x","command":"y"}`, nil, "duplicate"},
		{"duplicate in env", `{"command":"x","env":{"A":"1","A":"2"}}`, nil, "env"},
		{"secret in oauth", `{"url":"https://a","oauth":{"clientSecret":"s"}}`, nil, "--client-secret"},
		{"trailing data", `{"command":"x"} {}`, nil, "invalid"},
		{"neither", `{"env":{}}`, nil, `give "command"`},
		{"bad helper", `{"url":"https://a","headersHelper":3}`, nil, "headersHelper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ServerEntryFromJSON("n", []byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrServerJSON) {
					t.Fatalf("err = %v, want ErrServerJSON containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(e) {
				t.Errorf("got %+v", e)
			}
		})
	}
}

// TestSecretFunction: secret("NAME") reads an owner-only file of the
// secrets directory in the user, local and cli scopes; a project file
// cannot call it, and a file others can read is refused without its value
// in the message.
func TestSecretFunction(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	cfgDir := filepath.Join(home, ".config", "mcphost")
	secrets := filepath.Join(cfgDir, SecretsDirName)
	if err := WriteSecret(secrets, "tok", "canary-secret-value\n"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, EnvManagedConfig: filepath.Join(dir, "none.hcl")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	user := filepath.Join(cfgDir, "config.hcl")
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	block := "server \"r\" {\n  transport = \"http\"\n  url = \"https://r.example.com/mcp\"\n  headers = { Authorization = \"Bearer ${secret(\"tok\")}\" }\n}\n"

	write(user, block)
	cfg, diags := Load(&LoadOptions{LookupEnv: lookup, WorkDir: proj})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := cfg.Servers[0].Headers["Authorization"]; got != "Bearer canary-secret-value" {
		t.Errorf("header = %q", got)
	}

	// Others can read it: refused, and the value is not in the message.
	os.Chmod(filepath.Join(secrets, "tok"), 0o644)
	_, diags = Load(&LoadOptions{LookupEnv: lookup, WorkDir: proj})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "accessible to others") || strings.Contains(diags.Error(), "canary") {
		t.Errorf("a readable secret: %v", diags)
	}
	os.Chmod(filepath.Join(secrets, "tok"), 0o600)

	// A project file cannot read it.
	os.Remove(user)
	write(filepath.Join(proj, ProjectFileName), block+"settings {}\n")
	write(user, "settings {\n  approve_all_project_servers = true\n}\n")
	cfg, diags = Load(&LoadOptions{LookupEnv: lookup, WorkDir: proj})
	if len(cfg.Servers) != 0 {
		t.Errorf("a project server read a secret: %+v", cfg.Servers[0].Headers)
	}
	if !strings.Contains(diags.Error(), `no function named "secret"`) {
		t.Errorf("no diagnostic for secret() in a project file: %v", diags)
	}

	// Names are checked.
	for _, bad := range []string{"../x", "", ".hidden", "a/b", strings.Repeat("x", 200)} {
		if err := CheckSecretName(bad); !errors.Is(err, ErrSecretName) {
			t.Errorf("CheckSecretName(%q) = %v", bad, err)
		}
	}
	if err := DeleteSecret(secrets, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(secrets, "tok")); !os.IsNotExist(err) {
		t.Errorf("secret not deleted: %v", err)
	}
}

// TestLoadOverlay: an overlay replaces a file's content, and a project file
// that exists only in the overlay is found.
func TestLoadOverlay(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), EnvManagedConfig: filepath.Join(dir, "none.hcl")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p := filepath.Join(proj, ProjectFileName)
	cfg, diags := Load(&LoadOptions{LookupEnv: lookup, WorkDir: proj, Overlay: map[string][]byte{p: []byte("server \"o\" {\n  command = \"x\"\n}\n")}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "o" || cfg.Servers[0].Origin.File != p {
		t.Fatalf("servers = %+v", cfg.Servers)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("the overlay was written")
	}
	_, diags = Load(&LoadOptions{LookupEnv: lookup, WorkDir: proj, Overlay: map[string][]byte{p: []byte("server \"o\" {")}})
	if len(diags) == 0 || !IsProjectError(diags[0]) || diags[0].Subject == nil || diags[0].Subject.Filename != p {
		t.Errorf("an overlay's error is not reported at its file as a project error: %v", diags)
	}
}

// TestExpandedValuesLoad: what Expand writes loads back as the other hosts
// mean their ${VAR} values, and text that only looks like a template stays
// text.
func TestExpandedValuesLoad(t *testing.T) {
	e := &ServerEntry{Name: "e", Command: "${BASE}/bin/x", Args: []string{"${TOKEN}", "--k=${K:-dflt}", "%{literal} $5 ${open", "cost: $${TOKEN}"}, Expand: true}
	out, err := AddServerBlock(nil, "f.hcl", e)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "f.hcl")
	os.WriteFile(f, out, 0o600)
	env := map[string]string{"BASE": "/opt/b", "TOKEN": "tok"}
	cfg, diags := Load(&LoadOptions{Files: []string{f}, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if diags.HasErrors() {
		t.Fatalf("%v\n%s", diags, out)
	}
	s := cfg.Server("e")
	if s.Command != "/opt/b/bin/x" || strings.Join(s.Args, "|") != "tok|--k=dflt|%{literal} $5 ${open|cost: $tok" {
		t.Errorf("command %q args %q\n%s", s.Command, s.Args, out)
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/host/clientconf"
	"github.com/mcphost/mcphost/host/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/import")

// importEnv is a fake user for import tests: a home, a project with .git
// (the working directory), and the local scope in local.hcl.
type importEnv struct {
	dir, home, proj, local string
	wd                     string // the working directory, if not proj
	env                    map[string]string
}

func newImportEnv(t *testing.T) *importEnv {
	t.Helper()
	dir := t.TempDir()
	ie := &importEnv{dir: dir, home: filepath.Join(dir, "home"), proj: filepath.Join(dir, "proj"), local: filepath.Join(dir, "local.hcl")}
	ie.env = map[string]string{
		"HOME": ie.home, "XDG_CONFIG_HOME": filepath.Join(ie.home, ".config"), "APPDATA": filepath.Join(ie.home, "AppData"),
		config.EnvManagedConfig: filepath.Join(dir, "none.hcl"), config.EnvLocalConfig: ie.local,
	}
	for _, d := range []string{ie.home, filepath.Join(ie.proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ie
}

// run runs mcphost with args in the project and returns its exit code and
// output (stdout then stderr).
func (ie *importEnv) run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	wd := ie.proj
	if ie.wd != "" {
		wd = ie.wd
	}
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		lookupEnv: func(k string) (string, bool) { v, ok := ie.env[k]; return v, ok }, workDir: wd}
	code := a.execute(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

func (ie *importEnv) write(t *testing.T, rel string, data []byte) string {
	t.Helper()
	p := filepath.Join(ie.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hashRE matches the hash of the file path in stored secrets' names.
var hashRE = regexp.MustCompile(`\.[0-9a-f]{8}\.`)

// normalize makes output comparable: the temporary directory is $WORK,
// the path hash of secret names HASH.
func (ie *importEnv) normalize(s string) string {
	s = strings.ReplaceAll(s, ie.dir, "$WORK")
	return filepath.ToSlash(hashRE.ReplaceAllString(s, ".HASH."))
}

// golden compares got with testdata/import/name (or rewrites it with
// -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "import", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", p, d)
	}
}

// canaries are the secret values of the testdata files: never in the
// written file nor the output.
var canaries = []string{"ghp_canaryCanaryCanary0123456789abcdefAB", "canary-gemini-api-key-0123456789"}

// TestImportFiles imports each client's file (the testdata of clientconf)
// into an empty local scope: the blocks written (golden), the report
// (golden), the exit code, and no secret in the file or the output while
// the secrets directory holds them.
func TestImportFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file, as string
		env            map[string]string
		code           int
	}{
		{"claude-desktop", "claude_desktop_config.json", "claude_desktop_config.json", nil, 0},
		{"vscode", "mcp.json", "proj/.vscode/mcp.json", map[string]string{"LOG_LEVEL": "info", "GITHUB_TOKEN": "x"}, 0},
		{"vscode-unset", "mcp.json", "proj/.vscode/mcp.json", nil, 1},
		{"gemini", "settings.json", "home/.gemini/settings.json", map[string]string{"DB_URL": "postgres://h/db"}, 0},
		{"codex", "config.toml", "home/.codex/config.toml", map[string]string{"LINEAR_TOKEN": "x"}, 0},
		{"claude-code", "claude.json", "home/.claude.json", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ie := newImportEnv(t)
			for k, v := range tc.env {
				ie.env[k] = v
			}
			data, err := os.ReadFile(filepath.Join("..", "clientconf", "testdata", "read", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p := ie.write(t, tc.as, data)
			code, stdout, stderr := ie.run("import", p)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			written, _ := os.ReadFile(ie.local)
			golden(t, tc.name+".hcl", ie.normalize(string(written)))
			golden(t, tc.name+".out", ie.normalize(stdout+stderr))
			for _, c := range canaries {
				if strings.Contains(string(written), c) || strings.Contains(stdout+stderr, c) {
					t.Errorf("the secret %q is in the file or the output", c)
				}
			}
			// The secrets it mentions are stored, and hold the values.
			for _, m := range regexp.MustCompile(`secret\("([^"]+)"\)`).FindAllStringSubmatch(string(written), -1) {
				b, err := os.ReadFile(filepath.Join(ie.home, ".config", "mcphost", config.SecretsDirName, m[1]))
				if err != nil || !strings.Contains(strings.Join(canaries, " "), string(b)) {
					t.Errorf("secret %s: %q, %v", m[1], b, err)
				}
			}
			// What was written loads.
			if code == 0 {
				if code, out, errs := ie.run("server", "list"); code != 0 {
					t.Errorf("server list: %d\n%s%s", code, out, errs)
				}
			}
		})
	}
}

// TestImportClient imports Claude Code's servers by client name: those it
// keeps for this directory in ~/.claude.json (its local scope), its
// project's .mcp.json and its user servers, in that order of precedence;
// a name in two of them is taken once.
func TestImportClient(t *testing.T) {
	ie := newImportEnv(t)
	ie.write(t, "home/.claude.json", []byte(`{
  "mcpServers": {
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
    "shared": {"command": "from-user"}
  },
  "projects": {
    `+strconvQuote(filepath.ToSlash(ie.proj))+`: {"mcpServers": {"db": {"type": "stdio", "command": "${HOME}/bin/db-mcp"}}},
    "/elsewhere": {"mcpServers": {"nope": {"command": "nope"}}}
  }
}`))
	ie.write(t, "proj/.mcp.json", []byte(`{"mcpServers": {"shared": {"command": "from-project"}, "My Server!": {"url": "http://127.0.0.1:9/mcp", "type": "http"}}}`))
	code, stdout, stderr := ie.run("import", "claude-code")
	if code != 0 {
		t.Fatalf("exit code %d\n%s%s", code, stdout, stderr)
	}
	written, _ := os.ReadFile(ie.local)
	golden(t, "client-claude-code.hcl", ie.normalize(string(written)))
	golden(t, "client-claude-code.out", ie.normalize(stdout+stderr))
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestImportOptions: --dry-run writes nothing and shows the blocks;
// --only picks entries; a name already configured is skipped; -s project
// refuses a literal secret (a shared file cannot read secret()) and says
// the servers need approval; nothing imported and something refused
// exits non-zero.
func TestImportOptions(t *testing.T) {
	src := []byte(`{"mcpServers": {
  "a": {"command": "a-mcp"},
  "b": {"command": "b-mcp", "env": {"API_KEY": "canary-literal-key"}},
  "c": {"command": "c-mcp"}
}}`)
	for _, tc := range []struct {
		name    string
		args    []string
		local   string // server blocks already in local.hcl
		code    int
		written []string // the servers the target holds after
		out     []string // regexps the output matches
	}{
		{"dry run", []string{"--dry-run"}, "", 0, nil,
			[]string{`(?m)^  imported  a `, `server "b" \{`, `API_KEY = secret\("b\.[0-9a-f]{8}\.env\.API_KEY"\)`, `Would import 3 server`, `1 secret value\(s\) would be stored`}},
		{"only", []string{"--only", "a,c"}, "", 0, []string{"a", "c"}, []string{`Imported 2 server`}},
		{"only unknown", []string{"--only", "zz"}, "", 1, nil, []string{`refused +zz`, `no such server`}},
		{"already configured", nil, "server \"a\" {\n  command = \"other\"\n}\n", 0, []string{"a", "b", "c"},
			[]string{`skipped +a .*\n +"a" is already configured in .*local.hcl \(local scope\)`, `Imported 2 server`}},
		{"project scope", []string{"-s", "project"}, "", 0, []string{"a", "c"},
			[]string{`refused +b .*\n +env.API_KEY: a secret written as text: it cannot go into this file`, `Project servers run only once approved: mcphost config approve a c`}},
		{"project scope, secret only", []string{"-s", "project", "--only", "b"}, "", 1, nil, []string{`Imported 0 server`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ie := newImportEnv(t)
			p := ie.write(t, "servers.json", src)
			if tc.local != "" {
				ie.write(t, "local.hcl", []byte(tc.local))
			}
			code, stdout, stderr := ie.run(append([]string{"import", p}, tc.args...)...)
			out := stdout + stderr
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s", code, tc.code, out)
			}
			for _, re := range tc.out {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("output does not match %s:\n%s", re, out)
				}
			}
			if strings.Contains(out, "canary") {
				t.Errorf("the secret is in the output:\n%s", out)
			}
			target := ie.local
			if slices.Contains(tc.args, "project") {
				target = filepath.Join(ie.proj, config.ProjectFileName)
			}
			data, _ := os.ReadFile(target)
			if strings.Contains(string(data), "canary") {
				t.Errorf("the secret is in the file:\n%s", data)
			}
			var got []string
			for _, m := range regexp.MustCompile(`server "([^"]+)"`).FindAllStringSubmatch(string(data), -1) {
				got = append(got, m[1])
			}
			if d := cmp.Diff(tc.written, got); d != "" {
				t.Errorf("servers in %s (-want +got):\n%s\n%s", target, d, data)
			}
			secrets, _ := os.ReadDir(filepath.Join(ie.home, ".config", "mcphost", config.SecretsDirName))
			if slices.Contains(tc.args, "--dry-run") || slices.Contains(tc.args, "project") || slices.Contains(tc.args, "--only") {
				if len(secrets) != 0 {
					t.Errorf("secrets stored: %v", secrets)
				}
			}
		})
	}
}

// TestImportErrors: an argument that is neither a client nor a file, and a
// file that is not a client configuration.
func TestImportErrors(t *testing.T) {
	ie := newImportEnv(t)
	if code, _, stderr := ie.run("import", "nosuch-client"); code == 0 || !strings.Contains(stderr, "give a client (claude-code, claude-desktop") {
		t.Errorf("unknown client: %d %s", code, stderr)
	}
	p := ie.write(t, "x.json", []byte(`{"other": {}}`))
	if code, _, stderr := ie.run("import", p); code == 0 || !strings.Contains(stderr, "not a client configuration file") {
		t.Errorf("not a client file: %d %s", code, stderr)
	}
	if code, _, stderr := ie.run("import", "codex"); code == 0 || !strings.Contains(stderr, "no configuration of Codex found") {
		t.Errorf("no codex file: %d %s", code, stderr)
	}
}

// TestAddJSONVariablePath: add-json keeps "${HOME}/bin/x" as env("HOME")
// followed by /bin/x (it was joined to the working directory), and stores
// a literal token of the JSON with secret().
func TestAddJSONVariablePath(t *testing.T) {
	ie := newImportEnv(t)
	code, stdout, stderr := ie.run("server", "add-json", "x", `{"command":"${HOME}/bin/x","cwd":"${HOME}/work","env":{"GITHUB_TOKEN":"canary-add-json-token"}}`)
	if code != 0 {
		t.Fatalf("exit code %d\n%s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(ie.local)
	for _, want := range []string{`command = "${env("HOME")}/bin/x"`, `cwd = "${env("HOME")}/work"`, `GITHUB_TOKEN = secret("x.`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %s in:\n%s", want, data)
		}
	}
	if strings.Contains(string(data)+stdout+stderr, "canary") || strings.Contains(string(data), ie.proj) {
		t.Errorf("the secret or the working directory is in the file or output:\n%s%s%s", data, stdout, stderr)
	}
}

// TestSanitizeServerName: names other clients allow become valid names.
func TestSanitizeServerName(t *testing.T) {
	for in, want := range map[string]string{
		"github": "github", "My Server!": "My-Server", "@acme/tools": "acme-tools", "a__b": "a_b", "a.b_c": "a-b_c",
		"---": "server", "日本": "server", strings.Repeat("x", 50): strings.Repeat("x", 40),
	} {
		if got := sanitizeServerName(in); got != want || !config.ValidServerName(got) {
			t.Errorf("sanitizeServerName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestImportEachClient imports by client name from each client's own file
// (where clientconf says it is on this OS, in the user scope and, where the
// client has one, the project scope), each in its own format.
func TestImportEachClient(t *testing.T) {
	for _, tc := range []struct {
		client string
		user   string   // the user file's content; "" for none
		proj   string   // the project file's content
		want   []string // the servers of the local scope, then of the project scope
	}{
		{"claude-desktop", `{"mcpServers": {"a": {"command": "a-mcp"}}}`, "", []string{"a"}},
		{"cursor", `{"mcpServers": {"a": {"command": "a-mcp"}}}`, `{"mcpServers": {"p": {"url": "http://127.0.0.1:9/mcp"}}}`, []string{"a", "p"}},
		{"vscode", "// user\n{\"servers\": {\"a\": {\"type\": \"stdio\", \"command\": \"a-mcp\",},},}", `{"servers": {"p": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}`, []string{"a", "p"}},
		{"gemini", `{"mcpServers": {"a": {"httpUrl": "http://127.0.0.1:9/mcp"}}}`, `{"mcpServers": {"p": {"command": "p-mcp"}}}`, []string{"a", "p"}},
		{"codex", "[mcp_servers.a]\ncommand = \"a-mcp\"\n", "", []string{"a"}},
		{"claude-code", `{"mcpServers": {"a": {"command": "a-mcp"}}}`, `{"mcpServers": {"p": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}`, []string{"a", "p"}},
	} {
		t.Run(tc.client, func(t *testing.T) {
			ie := newImportEnv(t)
			c, err := clientconf.Lookup(tc.client)
			if err != nil {
				t.Fatal(err)
			}
			env := clientconf.Env{LookupEnv: func(k string) (string, bool) { v, ok := ie.env[k]; return v, ok }, WorkDir: ie.proj, ProjectDir: ie.proj, GOOS: runtime.GOOS}
			for scope, content := range map[clientconf.Scope]string{clientconf.ScopeUser: tc.user, clientconf.ScopeProject: tc.proj} {
				if content == "" {
					continue
				}
				p, err := c.Path(scope, env)
				if err != nil {
					t.Fatal(err)
				}
				rel, _ := filepath.Rel(ie.dir, p)
				ie.write(t, rel, []byte(content))
			}
			code, stdout, stderr := ie.run("import", tc.client)
			if code != 0 {
				t.Fatalf("exit code %d\n%s%s", code, stdout, stderr)
			}
			data, _ := os.ReadFile(ie.local)
			projData, _ := os.ReadFile(filepath.Join(ie.proj, config.ProjectFileName))
			data = append(data, projData...)
			var got []string
			for _, m := range regexp.MustCompile(`server "([^"]+)"`).FindAllStringSubmatch(string(data), -1) {
				got = append(got, m[1])
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("servers (-want +got):\n%s\n%s", d, stdout)
			}
		})
	}
}

// TestImportProjectPaths: the relative paths of a project's file are the
// project's (where the client runs its servers), even when mcphost runs in
// a subdirectory; a user file's are the working directory's. (The file is
// named: imported by client name, a project file goes to the project
// scope, see TestImportProjectFileNeedsApproval.)
func TestImportProjectPaths(t *testing.T) {
	ie := newImportEnv(t)
	ie.wd = filepath.Join(ie.proj, "sub")
	if err := os.MkdirAll(ie.wd, 0o755); err != nil {
		t.Fatal(err)
	}
	p := ie.write(t, "proj/.mcp.json", []byte(`{"mcpServers": {"p": {"command": "./scripts/srv"}, "d": {"command": "./x", "cwd": "data"}, "bare": {"command": "srv"}}}`))
	code, stdout, stderr := ie.run("import", p)
	if code != 0 {
		t.Fatalf("exit code %d\n%s%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(ie.local)
	for _, want := range []string{
		`command = ` + strconvQuote(filepath.Join(ie.proj, "scripts", "srv")),
		`command = "./x"`, // relative to its cwd, as exec runs it
		`cwd     = ` + strconvQuote(filepath.Join(ie.proj, "data")),
		`command = "srv"`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %s in:\n%s", want, data)
		}
	}
}

// TestImportProjectFileNeedsApproval: the servers of a client's project
// file (a repository's .mcp.json, .vscode/mcp.json, …) never become servers
// that run without approval. By default they go to the project scope
// (unapproved until `mcphost config approve`); -s local or -s user refuses
// them, naming -s project; a server the user refused in Claude Code
// (disabledMcpjsonServers in ~/.claude.json) is not imported; the file
// named on the command line is the user's choice and goes where -s says.
func TestImportProjectFileNeedsApproval(t *testing.T) {
	const evil = `{"mcpServers": {"evil": {"command": "sh", "args": ["-c", "echo pwned"]}, "nope": {"command": "nope-mcp"}}}`
	for _, tc := range []struct {
		name           string
		args           []string
		claude         string // ~/.claude.json
		code           int
		local, project []string // the servers written in each
		out            []string // regexps the output matches
	}{
		{"default: project scope, unapproved", []string{"claude-code"}, "", 0, nil, []string{"evil", "nope"},
			[]string{`into .*\.mcphost\.hcl \(project scope\)`, `mcphost config approve evil nope`}},
		{"-s local refused", []string{"claude-code", "-s", "local"}, "", 1, nil, nil,
			[]string{`refused +evil .*\n +read from .*\.mcp\.json, a repository's file: its servers run only once approved`, `fix: .*-s project`}},
		{"-s user refused", []string{"claude-code", "-s", "user"}, "", 1, nil, nil, []string{`(?s)refused +evil .*refused +nope .*-s project`}},
		{"-s project", []string{"claude-code", "-s", "project"}, "", 0, nil, []string{"evil", "nope"}, []string{`mcphost config approve evil nope`}},
		{"refused in claude code", []string{"claude-code"},
			`{"projects": {PROJ: {"disabledMcpjsonServers": ["evil"], "enabledMcpjsonServers": ["nope"]}}}`, 0, nil, []string{"nope"},
			[]string{`skipped +evil .*\n +you refused it in Claude Code \(disabledMcpjsonServers`, `imported +nope`}},
		{"not yet approved in claude code", []string{"claude-code"}, `{"projects": {PROJ: {"enabledMcpjsonServers": ["nope"]}}}`, 0, nil, []string{"evil", "nope"},
			[]string{`imported +evil .*\n +note: Claude Code has not approved it either`}},
		{"the file named", []string{"PROJ/.mcp.json"}, "", 0, []string{"evil", "nope"}, nil, []string{`\(local scope\)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ie := newImportEnv(t)
			ie.write(t, "proj/.mcp.json", []byte(evil))
			if tc.claude != "" {
				ie.write(t, "home/.claude.json", []byte(strings.ReplaceAll(tc.claude, "PROJ", strconvQuote(filepath.ToSlash(ie.proj)))))
			}
			args := []string{"import"}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "PROJ", ie.proj))
			}
			code, stdout, stderr := ie.run(args...)
			out := stdout + stderr
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s", code, tc.code, out)
			}
			for _, re := range tc.out {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("output does not match %s:\n%s", re, out)
				}
			}
			servers := func(p string) []string {
				data, _ := os.ReadFile(p)
				var got []string
				for _, m := range regexp.MustCompile(`server "([^"]+)"`).FindAllStringSubmatch(string(data), -1) {
					got = append(got, m[1])
				}
				return got
			}
			if d := cmp.Diff(tc.local, servers(ie.local)); d != "" {
				t.Errorf("local scope (-want +got):\n%s\n%s", d, out)
			}
			if d := cmp.Diff(tc.project, servers(filepath.Join(ie.proj, config.ProjectFileName))); d != "" {
				t.Errorf("project scope (-want +got):\n%s\n%s", d, out)
			}
			if d := cmp.Diff(tc.local, servers(filepath.Join(ie.home, ".config", "mcphost", "config.hcl"))); tc.local == nil && d != "" {
				t.Errorf("user scope (-want +got):\n%s", d)
			}
			// Nothing of the repository's runs without approval.
			cfg, _ := config.Load(&config.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := ie.env[k]; return v, ok }, WorkDir: ie.proj})
			for _, s := range cfg.Servers {
				if (s.Name == "evil" || s.Name == "nope") && (!s.NeedsApproval() || s.Approved) && tc.local == nil {
					t.Errorf("%s (%s scope) runs without approval", s.Name, s.Origin.Scope)
				}
			}
		})
	}
}

// TestImportOutputIsSanitized: names, keys and values of the imported file
// that reach the terminal (the report's names, problems and notes, the
// blocks of --dry-run) carry no escape sequence or control character.
func TestImportOutputIsSanitized(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"entry name", `{"mcpServers": {"\u001b]0;TITLE\u0007bad": {"command": "x"}, "ok\u001b[2J": {"command": "\u0007"}}}`},
		{"input reference", `{"mcpServers": {"s": {"command": "x", "args": ["${input:\u001b[2Jtok}"]}}}`},
		{"env key", `{"mcpServers": {"s": {"command": "x", "env": {"K\u001b[31m": "${input:a}", "\u009b2J": 1}}}}`},
		{"unknown member", `{"mcpServers": {"s": {"command": "x", "\u001b[8mhidden": 1}}}`},
		{"note", `{"mcpServers": {"s": {"command": "x", "description": "d"}, "s\u202e": {"command": "y"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ie := newImportEnv(t)
			p := ie.write(t, "servers.json", []byte(tc.file))
			for _, args := range [][]string{{"import", p, "--dry-run"}, {"import", p}} {
				_, stdout, stderr := ie.run(args...)
				out := stdout + stderr
				if i := strings.IndexFunc(out, func(r rune) bool {
					return r < ' ' && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e'
				}); i >= 0 {
					t.Errorf("%v: a control character %q in the output:\n%q", args, out[i], out)
				}
			}
		})
	}
}

package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host/permissions"
)

// checksTree is a tree with plugins for interceptors: guard-regex (locked,
// an interceptor with a schema), transport-ws (locked, a transport only)
// and newbie (discovered, not locked); and a base file (settings and a
// server "pii") to load before a case's file.
func checksTree(t *testing.T) (*tree, string) {
	t.Helper()
	tr := newTree(t)
	pluginDir := filepath.Join(tr.root, "plugins")
	for _, name := range []string{"guard-regex", "transport-ws", "newbie"} {
		must(t, os.Chmod(tr.write(filepath.Join(pluginDir, name), "#!/bin/sh\n"), 0o755))
	}
	lockPath := filepath.Join(tr.root, "lock.hcl")
	must(t, WriteLock(lockPath, &Lock{Plugins: []*LockedPlugin{
		{Name: "guard-regex", Path: filepath.Join(pluginDir, "guard-regex"), SHA256: strings.Repeat("ab", 32), Protocol: 1, Interceptor: true,
			Components: []*LockedComponent{{Kind: "interceptor", Name: "guard-regex", Attributes: []*LockedAttribute{
				{Name: "deny_arguments", Type: "list(string)"},
				{Name: "redact_results", Type: "list(string)"},
			}}}},
		{Name: "transport-ws", Path: filepath.Join(pluginDir, "transport-ws"), SHA256: strings.Repeat("cd", 32), Protocol: 1, Transports: []string{"ws"},
			Components: []*LockedComponent{{Kind: "transport", Name: "ws"}}},
	}}))
	base := tr.write(filepath.Join(tr.root, "base.hcl"), fmt.Sprintf(`settings {
  plugin_dir  = %q
  plugin_lock = %q
}
server "pii" {
  command = "pii-server"
}
server "github" {
  command = "gh-server"
}
`, pluginDir, lockPath))
	return tr, base
}

// TestDecodeChecks: every attribute of hook and interceptor blocks lands
// in Config.Hooks and Config.Interceptors, in declared order, with the
// defaults filled; a server an interceptor names is marked.
func TestDecodeChecks(t *testing.T) {
	t.Parallel()
	tr, base := checksTree(t)
	f := tr.write(filepath.Join(tr.root, "checks.hcl"), `
hook "PreToolUse" {
  matcher     = "mcp__github__.*"
  command     = "python3 /opt/hooks/check.py"
  shell       = "bash"
  env         = { POLICY = "strict" }
  inherit_env = ["AWS_PROFILE"]
  timeout     = "30s"
  fail_open   = true
  mode        = "audit"
  match {
    servers = ["github"]
    tools   = ["mcp__github__*"]
    principals {
      groups   = ["eng"]
      subjects = ["alice"]
    }
  }
}
hook "PostToolUse" {
  url              = "https://hooks.example.com/post"
  headers          = { Authorization = "Bearer $HOOK_TOKEN" }
  allowed_env_vars = ["HOOK_TOKEN"]
}
interceptor "guard" {
  plugin    = "guard-regex"
  options   = { deny_arguments = ["(?i)drop\\s+table"], redact_results = ["AKIA[0-9A-Z]{16}"] }
  events    = ["tools/call", "prompts/get"]
  phases    = ["request"]
  mode      = "enforce"
  fail_open = false
  timeout   = "2s"
  match { servers = ["github"] }
}
interceptor "pii" {
  server   = "pii"
  names    = ["pii-redactor"]
  protocol = "sep-2624/2026-09"
}
interceptor "args" { builtin = "validate_input" }
interceptor "out"  { builtin = "validate_output" }
interceptor "keys" {
  builtin = "secrets"
  action  = "redact"
}
`)
	cfg := tr.mustLoad(base, f)
	if len(cfg.Hooks) != 2 || len(cfg.Interceptors) != 5 {
		t.Fatalf("got %d hooks, %d interceptors", len(cfg.Hooks), len(cfg.Interceptors))
	}
	h := cfg.Hooks[0]
	wantHook := &Hook{Event: "PreToolUse", Matcher: "mcp__github__.*", Command: "python3 /opt/hooks/check.py", Shell: "bash",
		Env: map[string]string{"POLICY": "strict"}, InheritEnv: []string{"AWS_PROFILE"}, Timeout: 30 * time.Second, FailOpen: true, Mode: "audit",
		Match: &CheckMatch{Servers: []string{"github"}, Tools: []string{"mcp__github__*"}, Principals: &permissions.Principals{Groups: []string{"eng"}, Subjects: []string{"alice"}}},
		Dir:   tr.root, Origin: Origin{Scope: ScopeCLI, File: f, Range: h.Origin.Range}, Approved: true}
	if diff := cmp.Diff(wantHook, h); diff != "" {
		t.Errorf("hook (-want +got):\n%s", diff)
	}
	if h.Origin.Range.Start.Line != 2 {
		t.Errorf("hook origin line %d", h.Origin.Range.Start.Line)
	}
	if got := cfg.Hooks[1]; got.URL != "https://hooks.example.com/post" || got.Headers["Authorization"] != "Bearer $HOOK_TOKEN" ||
		!slices.Equal(got.AllowedEnvVars, []string{"HOOK_TOKEN"}) || got.Timeout != DefaultHookTimeout || got.Mode != "" {
		t.Errorf("HTTP hook = %+v", got)
	}
	var names []string
	for _, ic := range cfg.Interceptors {
		names = append(names, ic.Name)
	}
	if want := []string{"guard", "pii", "args", "out", "keys"}; !slices.Equal(names, want) {
		t.Errorf("interceptor order %q, want %q", names, want)
	}
	g := cfg.Interceptors[0]
	if g.Plugin != "guard-regex" || string(g.Options) != `{"deny_arguments":["(?i)drop\\s+table"],"redact_results":["AKIA[0-9A-Z]{16}"]}` ||
		!slices.Equal(g.Events, []string{"tools/call", "prompts/get"}) || !slices.Equal(g.Phases, []string{"request"}) ||
		g.Mode != "enforce" || g.Timeout != 2*time.Second || g.Match == nil || !slices.Equal(g.Match.Servers, []string{"github"}) || !g.Approved {
		t.Errorf("guard = %+v", g)
	}
	p := cfg.Interceptors[1]
	if p.Server != "pii" || !slices.Equal(p.Names, []string{"pii-redactor"}) || p.Protocol != SEPRevision || p.Timeout != DefaultInterceptorTimeout ||
		!slices.Equal(p.Events, []string{"tools/call"}) || !slices.Equal(p.Phases, []string{"request", "response"}) {
		t.Errorf("pii = %+v", p)
	}
	for _, c := range []struct {
		ic     *Interceptor
		phases []string
	}{{cfg.Interceptors[2], []string{"request"}}, {cfg.Interceptors[3], []string{"response"}}, {cfg.Interceptors[4], []string{"request", "response"}}} {
		if !slices.Equal(c.ic.Phases, c.phases) || !slices.Equal(c.ic.Events, []string{"tools/call"}) {
			t.Errorf("%s: events %q phases %q", c.ic.Name, c.ic.Events, c.ic.Phases)
		}
	}
	if cfg.Interceptors[4].Action != "redact" {
		t.Errorf("keys action %q", cfg.Interceptors[4].Action)
	}
	if !cfg.Server("pii").InterceptorOnly || cfg.Server("github").InterceptorOnly {
		t.Errorf("InterceptorOnly: pii %v, github %v", cfg.Server("pii").InterceptorOnly, cfg.Server("github").InterceptorOnly)
	}
	if cfg.ChecksApprovalHash() != "" {
		t.Errorf("no project file, hash %q", cfg.ChecksApprovalHash())
	}
}

// TestChecksDiagnostics: each mistake in a hook or interceptor block is an
// error at its own range, saying what is allowed.
func TestChecksDiagnostics(t *testing.T) {
	t.Parallel()
	tr, base := checksTree(t)
	tests := []struct {
		name, src string
		want      []string // "line:col: summary: detail substring"
	}{
		{"unknown event", `hook "PreToolUs" {
  command = "x"
}`, []string{`1:6: Unknown hook event: "PreToolUs" is not a hook event. Events: PreToolUse, PostToolUse, PostToolUseFailure, Elicitation, ElicitationResult. Did you mean "PreToolUse"?`}},
		{"event in another case", `hook "pretooluse" {
  command = "x"
}`, []string{`1:6: Unknown hook event: `, `Did you mean "PreToolUse"?`}},
		{"lookaround", `hook "PreToolUse" {
  matcher = "mcp__(?!github)"
  command = "x"
}`, []string{`2:13: Invalid matcher: matcher "mcp__(?!github)": Go's RE2 has no lookaround ((?!…); rewrite the matcher or use match { tools = [...] }.`}},
		{"backreference", `hook "PreToolUse" {
  matcher = "(a)\\1"
  command = "x"
}`, []string{`2:13: Invalid matcher: `, `Go's RE2 has no backreferences (\1)`}},
		{"bad regexp", `hook "PreToolUse" {
  matcher = "mcp__[a"
  command = "x"
}`, []string{`2:13: Invalid matcher: matcher "mcp__[a": not a regular expression: `}},
		{"both command and url", `hook "PreToolUse" {
  command = "x"
  url     = "https://h.example.com/"
}`, []string{`3:3: Both command and url: A hook runs a command or POSTs its input to a url, not both`}},
		{"neither command nor url", `hook "PreToolUse" {
  timeout = "1s"
}`, []string{`1:1: Missing command or url: A hook needs a command`}},
		{"empty command", `hook "PreToolUse" {
  command = " "
}`, []string{`2:13: Missing command: command must not be empty.`}},
		{"headers on a command hook", `hook "PreToolUse" {
  command          = "x"
  headers          = { A = "b" }
  allowed_env_vars = ["A"]
}`, []string{`3:3: Argument not valid for this hook: "headers" is not used by a command hook`, `4:3: Argument not valid for this hook: "allowed_env_vars" is not used by a command hook`}},
		{"env on an HTTP hook", `hook "PostToolUse" {
  url         = "https://h.example.com/"
  env         = { A = "b" }
  shell       = "bash"
  inherit_env = ["A"]
}`, []string{`3:3: Argument not valid for this hook: "env" is not used by an HTTP hook`, `4:3: Argument not valid for this hook: "shell" is not used by an HTTP hook`, `5:3: Argument not valid for this hook: "inherit_env" is not used by an HTTP hook`}},
		{"url not http", `hook "PreToolUse" {
  url = "ftp://h.example.com/"
}`, []string{`2:9: Invalid url: "ftp://h.example.com/" has scheme "ftp"; an HTTP hook's url is http or https.`}},
		{"url with credentials", `hook "PreToolUse" {
  url = "https://u:p@h.example.com/"
}`, []string{`2:9: Invalid url: credentials in the url are not allowed`}},
		{"bad shell", `hook "PreToolUse" {
  command = "x"
  shell   = "zsh"
}`, []string{`3:13: Invalid shell: shell must be one of sh, bash, powershell, got "zsh"`}},
		{"bad env names", `hook "PreToolUse" {
  command     = "x"
  env         = { "1A" = "b" }
  inherit_env = ["OK", "2B"]
}`, []string{`3:17: Invalid environment variable name: "1A"`, `4:24: Invalid environment variable name: "2B"`}},
		{"bad header and allowed var", `hook "PreToolUse" {
  url              = "https://h.example.com/"
  headers          = { "a b" = "c" }
  allowed_env_vars = ["-X"]
}`, []string{`3:22: Invalid header name: "a b"`, `4:23: Invalid environment variable name: "-X"`}},
		{"bad timeout", `hook "PreToolUse" {
  command = "x"
  timeout = "soon"
}`, []string{`3:13: Invalid duration: "soon" is not a positive duration`}},
		{"bad mode", `hook "PreToolUse" {
  command = "x"
  mode    = "warn"
}`, []string{`3:13: Invalid mode: mode must be "enforce" (the default) or "audit"`}},
		{"unknown hook attribute", `hook "PreToolUse" {
  command = "x"
  matchr  = "y"
}`, []string{`3:3: Unsupported argument: An argument named "matchr" is not expected here. Did you mean "matcher"?`}},
		{"match mistakes", `hook "PreToolUse" {
  command = "x"
  match {
    servers = ["a b"]
    tools   = ["github__x"]
    principals {
    }
  }
  match {
  }
}`, []string{`4:16: Invalid server name: "a b"`, `5:16: Invalid tool pattern: pattern "github__x" must start with "mcp__"`, `6:5: Empty principals: `, `9:3: Duplicate match block: `}},
		{"tools on an elicitation hook", `hook "Elicitation" {
  command = "x"
  match {
    tools = ["mcp__a__b"]
  }
}`, []string{`3:3: match.tools not valid for this hook: An Elicitation hook is about a server's question`}},
		{"no kind", `interceptor "x" {
  mode = "audit"
}`, []string{`1:1: Missing interceptor kind: An interceptor names exactly one of plugin`}},
		{"two kinds", `interceptor "x" {
  plugin  = "guard-regex"
  builtin = "secrets"
}`, []string{`3:3: Two interceptor kinds: An interceptor names exactly one of plugin, server or builtin; plugin is set at`}},
		{"unknown builtin", `interceptor "x" {
  builtin = "validate_inputs"
}`, []string{`2:13: Unknown builtin: "validate_inputs" is not a built-in interceptor. Built-ins: validate_input, validate_output, secrets. Did you mean "validate_input"?`}},
		{"action without secrets", `interceptor "x" {
  builtin = "validate_input"
  action  = "block"
}`, []string{`3:3: Argument not valid for this interceptor: "action" applies only to an interceptor with builtin = "secrets".`}},
		{"bad action", `interceptor "x" {
  builtin = "secrets"
  action  = "warn"
}`, []string{`3:13: Invalid action: action must be "block"`}},
		{"builtin event and phase", `interceptor "x" {
  builtin = "validate_input"
  events  = ["prompts/get"]
  phases  = ["response"]
}`, []string{`3:14: Invalid event: "prompts/get" is not one of the events the validate_input built-in can check. Allowed: tools/call.`, `4:14: Invalid phase: "response" is not one of the phases the validate_input built-in can check. Allowed: request.`}},
		{"validate_output request", `interceptor "x" {
  builtin = "validate_output"
  phases  = ["request"]
}`, []string{`3:14: Invalid phase: "request" is not one of the phases the validate_output built-in can check. Allowed: response.`}},
		{"plugin events and phases", `interceptor "x" {
  plugin = "guard-regex"
  events = ["tools/call", "sampling/createMessage", "tools/call"]
  phases = []
}`, []string{`3:27: Invalid event: "sampling/createMessage" is not one of the events a plugin interceptor can check. Allowed: tools/call, prompts/get, resources/read, tools/list, prompts/list, resources/list, resources/templates/list.`, `3:53: Duplicate event: "tools/call" is listed twice.`, `4:12: Empty phases: `}},
		{"list request only", `interceptor "x" {
  plugin = "guard-regex"
  events = ["tools/list", "resources/templates/list"]
  phases = ["request"]
}`, []string{`4:12: Nothing to check: A list (tools/list, resources/templates/list) is checked in its response only`}},
		{"unknown plugin", `interceptor "x" {
  plugin = "guard-regx"
}`, []string{`2:12: Unknown interceptor plugin: No plugin named "guard-regx" is configured or discovered. Plugins that provide an interceptor: guard-regex. Plugins whose components are not known yet: newbie; run ` + "`mcphost plugins lock`."}},
		{"unlocked plugin", `interceptor "x" {
  plugin = "newbie"
}`, []string{`2:12: Unknown interceptor plugin: Plugin "newbie" is not in the lock file, so what it provides is not known; run ` + "`mcphost plugins lock`."}},
		{"plugin without interceptor", `interceptor "x" {
  plugin = "transport-ws"
}`, []string{`2:12: Unknown interceptor plugin: Plugin "transport-ws" provides no interceptor (it provides transport ws). Plugins that provide an interceptor: guard-regex.`}},
		{"options against the schema", `interceptor "x" {
  plugin  = "guard-regex"
  options = { deny_argument = ["a"], redact_results = "b" }
}`, []string{`3:15: Unsupported option: The guard-regex interceptor (plugin guard-regex) does not take "deny_argument". Allowed: deny_arguments, redact_results. Did you mean "deny_arguments"?`, `3:55: Wrong option type: Option "redact_results" of the guard-regex interceptor (plugin guard-regex) must be a list(string), got string.`}},
		{"options not an object", `interceptor "x" {
  plugin  = "guard-regex"
  options = ["a"]
}`, []string{`3:13: Invalid options: options must be an object`}},
		{"options without a plugin", `interceptor "x" {
  builtin = "secrets"
  options = { a = "b" }
}`, []string{`3:3: Argument not valid for this interceptor: "options" applies only to an interceptor with plugin`}},
		{"unknown server", `interceptor "x" {
  server = "pi"
}`, []string{`2:12: Unknown server: No server named "pi" is configured; an interceptor's server names a server block (a SEP-2624 interceptor server). Did you mean "pii"?`}},
		{"names and protocol without server", `interceptor "x" {
  builtin  = "secrets"
  names    = ["a"]
  protocol = "sep-2624/2026-09"
}`, []string{`3:3: Argument not valid for this interceptor: "names" applies only to an interceptor with server`, `4:3: Argument not valid for this interceptor: "protocol" applies only to an interceptor with server.`}},
		{"other protocol", `interceptor "x" {
  server   = "pii"
  protocol = "sep-2624/2026-04"
}`, []string{`3:14: Unsupported protocol: protocol "sep-2624/2026-04" is not implemented; the one revision of SEP-2624 (MCP interceptors) implemented is "sep-2624/2026-09"`}},
		{"empty names", `interceptor "x" {
  server = "pii"
  names  = []
}`, []string{`3:12: Invalid names: `}},
		{"empty kind", `interceptor "x" {
  server = ""
}`, []string{`2:12: Empty server: server must name a server block.`}},
		{"bad interceptor name", `interceptor "a b" {
  builtin = "secrets"
}`, []string{`1:13: Invalid interceptor name: `}},
		{"duplicate interceptor", `interceptor "x" {
  builtin = "secrets"
}
interceptor "x" {
  builtin = "validate_input"
}`, []string{`4:1: Duplicate interceptor: An interceptor named "x" is already declared at cli scope, `}},
		{"bad interceptor timeout and mode", `interceptor "x" {
  builtin = "secrets"
  timeout = "0s"
  mode    = "permissive"
}`, []string{`3:13: Invalid duration: "0s" is not a positive duration`, `4:13: Invalid mode: `}},
		{"managed_hooks_only outside managed", `settings {
  managed_hooks_only = true
}`, []string{`2:3: managed_hooks_only has no effect here: managed_hooks_only is only honoured in the managed file`}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tr.write(filepath.Join(tr.root, fmt.Sprintf("case%d.hcl", i)), tt.src)
			cfg, diags := tr.load(base, f)
			var mine hcl.Diagnostics
			for _, d := range diags {
				if d.Subject != nil && d.Subject.Filename == f {
					mine = append(mine, d)
				}
			}
			all := diagsAt(t, f, mine)
			for _, want := range tt.want {
				if !strings.Contains(all, want) {
					t.Errorf("diagnostics lack %q:\n%s", want, all)
				}
			}
			n := 0 // a want of its own starts "line:col:"; others are more of the one before
			for _, w := range tt.want {
				if positionRE.MatchString(w) {
					n++
				}
			}
			if len(mine) != n {
				t.Errorf("%d diagnostics, want %d:\n%s", len(mine), n, all)
			}
			if tt.name != "managed_hooks_only outside managed" && !diags.HasErrors() {
				t.Errorf("no error")
			}
			if cfg.Settings.ManagedHooksOnly {
				t.Errorf("managed_hooks_only honoured outside the managed scope")
			}
		})
	}
}

var positionRE = regexp.MustCompile(`^\d+:\d+: `)

// TestCompileMatcher: Claude Code's matcher semantics.
func TestCompileMatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		matcher string
		match   []string
		nomatch []string
		err     string
	}{
		{matcher: "", match: []string{"mcp__a__b", "Bash", ""}},
		{matcher: "*", match: []string{"mcp__a__b", "Bash"}},
		{matcher: "Bash", match: []string{"Bash"}, nomatch: []string{"Bash2", "bash", "xBash"}},
		{matcher: "Edit|Write", match: []string{"Edit", "Write"}, nomatch: []string{"Edit|Write", "EditWrite", "Read"}},
		{matcher: "mcp__memory", nomatch: []string{"mcp__memory__create", "mcp__memory"[:10]}, match: []string{"mcp__memory"}},
		{matcher: "mcp__memory__.*", match: []string{"mcp__memory__create", "mcp__memory__"}, nomatch: []string{"mcp__github__x"}},
		{matcher: "^mcp__.*__write.*", match: []string{"mcp__fs__write_file", "mcp__a-b__writer"}, nomatch: []string{"mcp__fs__read", "x_mcp__fs__write"}},
		{matcher: "write", match: []string{"write"}, nomatch: []string{"mcp__fs__write_file"}},
		{matcher: "mcp__fs__(read|write).*", match: []string{"mcp__fs__read_file", "xmcp__fs__write"}, nomatch: []string{"mcp__fs__stat"}},
		{matcher: "(?=x)", err: "no lookaround"},
		{matcher: "a(?<!b)", err: "no lookaround"},
		{matcher: `(a)\1`, err: "no backreferences"},
		{matcher: "mcp__[", err: "not a regular expression"},
	}
	for _, tt := range tests {
		m, err := CompileMatcher(tt.matcher)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("CompileMatcher(%q) error = %v, want %q", tt.matcher, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("CompileMatcher(%q): %v", tt.matcher, err)
			continue
		}
		for _, n := range tt.match {
			if !m(n) {
				t.Errorf("matcher %q does not match %q", tt.matcher, n)
			}
		}
		for _, n := range tt.nomatch {
			if m(n) {
				t.Errorf("matcher %q matches %q", tt.matcher, n)
			}
		}
	}
}

// TestChecksApproval: a project file's hooks and interceptors are kept,
// unapproved, with a warning each, and env() is not read; approving the
// hash (@checks) applies them with the environment; an edit unapproves
// them; approve_all_project_servers covers them.
func TestChecksApproval(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	proj := tr.proj(`server "a" {
  command = "a-server"
}
hook "PreToolUse" {
  matcher = "mcp__a__.*"
  command = "python3 check.py"
  env     = { TOKEN = env("TOKEN") }
}
interceptor "args" { builtin = "validate_input" }
interceptor "pii" { server = "a" }
`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var warned []string
	for _, d := range diags {
		if d.Summary == "Ignored until approved" {
			warned = append(warned, fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column))
			if !strings.Contains(d.Detail, "run `mcphost config approve @checks`") {
				t.Errorf("warning detail %q", d.Detail)
			}
		}
	}
	if want := []string{"4:1", "9:1", "10:1"}; !slices.Equal(warned, want) {
		t.Errorf("warnings at %q, want %q", warned, want)
	}
	if len(cfg.Hooks) != 1 || len(cfg.Interceptors) != 2 || cfg.Hooks[0].Approved || cfg.Interceptors[0].Approved || cfg.Interceptors[1].Approved {
		t.Fatalf("hooks %+v interceptors %+v", cfg.Hooks, cfg.Interceptors)
	}
	if got := cfg.Hooks[0].Env["TOKEN"]; got != `${env("TOKEN")}` {
		t.Errorf("unapproved hook env read: %q", got)
	}
	if cfg.Hooks[0].Dir != tr.project {
		t.Errorf("project hook Dir %q, want %q", cfg.Hooks[0].Dir, tr.project)
	}
	if cfg.Server("a").InterceptorOnly {
		t.Errorf("an unapproved interceptor marked its server")
	}
	h := cfg.ChecksApprovalHash()
	if !strings.HasPrefix(h, "sha256:") {
		t.Fatalf("hash %q", h)
	}
	hooks, ics := cfg.ProjectChecks()
	if len(hooks) != 1 || len(ics) != 2 || hooks[0].Env["TOKEN"] != `${env("TOKEN")}` {
		t.Errorf("ProjectChecks = %+v, %+v", hooks, ics)
	}

	loc := Locate(tr.env.lookup, filepath.Join(tr.project, "sub"))
	must(t, WriteApprovals(loc.Local, map[string]string{ApprovalKeyChecks: h}))
	if b, _ := os.ReadFile(loc.Local); !strings.Contains(string(b), `"@checks" = "`+h+`"`) {
		t.Errorf("local file:\n%s", b)
	}
	cfg, diags = tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, d := range diags {
		if d.Summary == "Ignored until approved" {
			t.Errorf("approved, still warned: %s", d.Error())
		}
	}
	if !cfg.Hooks[0].Approved || !cfg.Interceptors[0].Approved || cfg.Hooks[0].Env["TOKEN"] != "s3cret" {
		t.Errorf("approved: hook %+v", cfg.Hooks[0])
	}
	if cfg.ChecksApprovalHash() != h {
		t.Errorf("the hash depends on the environment: %q, %q", cfg.ChecksApprovalHash(), h)
	}
	if !cfg.Server("a").InterceptorOnly {
		t.Errorf("an approved interceptor did not mark its server")
	}

	// An edit (a comment and layout do not count; a value does).
	src, _ := os.ReadFile(proj)
	tr.proj("# a comment\n\n" + string(src))
	if cfg := tr.mustLoad(); cfg.ChecksApprovalHash() != h || !cfg.Hooks[0].Approved {
		t.Errorf("a comment unapproved the checks")
	}
	tr.proj(strings.Replace(string(src), "check.py", "check2.py", 1))
	cfg = tr.mustLoad()
	if cfg.ChecksApprovalHash() == h || cfg.Hooks[0].Approved || cfg.Interceptors[0].Approved {
		t.Errorf("an edit kept the approval")
	}
	tr.proj(strings.Replace(string(src), `"validate_input"`, `"validate_output"`, 1))
	if cfg := tr.mustLoad(); cfg.Interceptors[0].Approved {
		t.Errorf("an interceptor edit kept the approval")
	}

	// approve_all_project_servers covers them.
	tr.user("settings {\n  approve_all_project_servers = true\n}\n")
	if cfg := tr.mustLoad(); !cfg.Hooks[0].Approved || !cfg.Interceptors[1].Approved {
		t.Errorf("approve_all_project_servers does not cover the checks")
	}
}

// TestProjectChecksCannotCompute: a project's hook blocks allow only
// values that are what is written, like its server blocks; a broken one
// is a warning and is left out.
func TestProjectChecksCannotCompute(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.proj(`hook "PreToolUse" {
  command = env("X") == "" ? "a" : "b"
}
hook "PostToolUse" {
  command = "ok"
}
hook "Bogus" {
  command = "x"
}
`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	got := warningsAt(diags)
	for _, want := range []string{"Expression not allowed in a project file@2", "Unknown hook event@7"} {
		if !slices.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	if len(cfg.Hooks) != 1 || cfg.Hooks[0].Event != "PostToolUse" {
		t.Errorf("hooks %+v", cfg.Hooks)
	}
}

// TestManagedHooksOnly: managed_hooks_only in the managed file drops every
// other scope's hook and interceptor, a warning each.
func TestManagedHooksOnly(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`hook "PreToolUse" {
  command = "user-hook"
}
interceptor "keys" { builtin = "secrets" }
`)
	tr.proj(`hook "PostToolUse" {
  command = "project-hook"
}
`)
	tr.managed(`settings {
  managed_hooks_only = true
}
hook "PreToolUse" {
  command = "managed-hook"
}
`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if !cfg.Settings.ManagedHooksOnly {
		t.Fatal("managed_hooks_only not honoured in the managed scope")
	}
	if len(cfg.Hooks) != 1 || cfg.Hooks[0].Command != "managed-hook" || len(cfg.Interceptors) != 0 {
		t.Errorf("hooks %+v interceptors %+v", cfg.Hooks, cfg.Interceptors)
	}
	if cfg.Hooks[0].Dir != filepath.Dir(tr.env[EnvManagedConfig]) || !cfg.Hooks[0].Approved {
		t.Errorf("managed hook %+v", cfg.Hooks[0])
	}
	var n int
	for _, d := range diags {
		if d.Summary == "Ignored: managed_hooks_only" {
			n++
		}
		if d.Summary == "Ignored until approved" {
			t.Errorf("a dropped block is also reported unapproved: %s", d.Error())
		}
	}
	if n != 3 {
		t.Errorf("%d managed_hooks_only warnings, want 3:\n%s", n, diags.Error())
	}

	// Without it, every scope's blocks load, in load order.
	tr.managed(`hook "PreToolUse" {
  command = "managed-hook"
}
`)
	cfg = tr.mustLoad()
	var cmds []string
	for _, h := range cfg.Hooks {
		cmds = append(cmds, h.Command)
	}
	if want := []string{"user-hook", "project-hook", "managed-hook"}; !slices.Equal(cmds, want) {
		t.Errorf("hooks %q, want %q", cmds, want)
	}
	if cfg.Hooks[0].Dir != filepath.Join(tr.home, ".config", "mcphost") {
		t.Errorf("user hook Dir %q", cfg.Hooks[0].Dir)
	}

	// A project setting is ignored like every project setting.
	tr.proj("settings {\n  managed_hooks_only = true\n}\n")
	cfg, diags = tr.load()
	if cfg.Settings.ManagedHooksOnly || !slices.Contains(warningsAt(diags), "Ignored in project scope@2") {
		t.Errorf("project managed_hooks_only: %v %q", cfg.Settings.ManagedHooksOnly, warningsAt(diags))
	}
}

// TestProjectInterceptorNameClash: a project's interceptor never displaces
// another scope's of the same name.
func TestProjectInterceptorNameClash(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.proj(`interceptor "keys" { builtin = "validate_input" }`)
	tr.local(`interceptor "keys" { builtin = "secrets" }`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(cfg.Interceptors) != 1 || cfg.Interceptors[0].Builtin != "secrets" {
		t.Errorf("interceptors %+v", cfg.Interceptors)
	}
	if !slices.Contains(warningsAt(diags), "Duplicate interceptor@1") {
		t.Errorf("warnings %q", warningsAt(diags))
	}
}

// TestAllAttributesFile: the fuzz seed with every attribute loads (in
// the managed scope, where managed_hooks_only is honoured).
func TestAllAttributesFile(t *testing.T) {
	t.Parallel()
	tr, base := checksTree(t)
	src, err := os.ReadFile("testdata/hooks/all.hcl")
	must(t, err)
	tr.managed(strings.Replace(string(src), `server   = "a"`, `server   = "pii"`, 1))
	cfg := tr.mustLoad(base)
	if len(cfg.Hooks) != 3 || len(cfg.Interceptors) != 5 || !cfg.Settings.ManagedHooksOnly {
		t.Errorf("hooks %d, interceptors %d, managed_hooks_only %v", len(cfg.Hooks), len(cfg.Interceptors), cfg.Settings.ManagedHooksOnly)
	}
}

// TestInterceptorServerNotConnected: an interceptor naming a disabled
// server loads, with a warning that its calls fail closed.
func TestInterceptorServerNotConnected(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	f := tr.write(filepath.Join(tr.root, "c.hcl"), `server "pii" {
  command  = "pii-server"
  disabled = true
}
interceptor "pii" { server = "pii" }
`)
	cfg, diags := tr.load(f)
	if diags.HasErrors() || len(cfg.Interceptors) != 1 {
		t.Fatalf("%+v: %s", cfg.Interceptors, diags.Error())
	}
	if got := diagsAt(t, f, diags); !strings.Contains(got, `5:30: Interceptor server not connected: Server "pii" is disabled, so it is not connected: every call interceptor "pii" checks fails (closed, unless fail_open = true).`) {
		t.Errorf("diagnostics:\n%s", got)
	}
}

// TestChecksJSON: the hooks and interceptors are in the configuration's
// JSON (config show --json).
func TestChecksJSON(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	f := tr.write(filepath.Join(tr.root, "c.hcl"), `interceptor "keys" {
  builtin = "secrets"
  action  = "block"
}`)
	b, err := json.Marshal(tr.mustLoad(f))
	must(t, err)
	if !strings.Contains(string(b), `"interceptors":[{"name":"keys","builtin":"secrets","action":"block","events":["tools/call"],"phases":["request","response"],"timeout":5000000000,`) {
		t.Errorf("JSON: %s", b)
	}
}

// TestApprovedChecksAreWhatWasShown: a project block that decodes only
// with the environment (a timeout from env()) was not shown nor hashed
// when approving, so approving the others never makes it run.
func TestApprovedChecksAreWhatWasShown(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.env["T"] = "5s"
	tr.proj(`hook "PreToolUse" {
  command = "shown"
}
hook "PreToolUse" {
  command = "hidden"
  timeout = env("T")
}
`)
	cfg, diags := tr.load()
	if diags.HasErrors() || len(cfg.Hooks) != 1 {
		t.Fatalf("hooks %+v: %s", cfg.Hooks, diags.Error())
	}
	loc := Locate(tr.env.lookup, filepath.Join(tr.project, "sub"))
	must(t, WriteApprovals(loc.Local, map[string]string{ApprovalKeyChecks: cfg.ChecksApprovalHash()}))
	cfg, diags = tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(cfg.Hooks) != 1 || cfg.Hooks[0].Command != "shown" || !cfg.Hooks[0].Approved {
		t.Errorf("approved hooks %+v", cfg.Hooks)
	}
	if !slices.Contains(warningsAt(diags), "Invalid duration@6") {
		t.Errorf("warnings %q", warningsAt(diags))
	}
}

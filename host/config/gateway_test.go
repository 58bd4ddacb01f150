package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/host/permissions"
)

func TestGatewayBlock(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`gateway {
  url = "https://mcp.corp.example/mcp"
  oauth {
    issuer = "https://login.corp.example"
    scopes = ["mcp"]
    introspection_url = "https://login.corp.example/introspect"
    client_id = "gw"
    client_secret = "s3cret"
    accept_jwt_types = ["at+jwt", "JWT"]
  }
  rate_limit {
    per_principal = "20/s"
    burst = 40
    max_concurrent = 16
  }
}
audit { path = "audit.jsonl" }
`)
	cfg := tr.mustLoad()
	g := cfg.Gateway
	if g == nil || g.URL != "https://mcp.corp.example/mcp" || g.OAuth == nil || g.RateLimit == nil {
		t.Fatalf("gateway = %+v", g)
	}
	o := g.OAuth
	if o.Issuer != "https://login.corp.example" || strings.Join(o.Audience, ",") != g.URL || o.GroupsClaim != "groups" || o.ClientSecret != "s3cret" {
		t.Errorf("oauth = %+v (the audience defaults to the url, groups_claim to groups)", o)
	}
	if strings.Join(o.AcceptJWTTypes, ",") != "at+jwt,JWT" {
		t.Errorf("accept_jwt_types = %q", o.AcceptJWTTypes)
	}
	if out := string(Render(cfg)); !regexp.MustCompile(`accept_jwt_types +=  *\["at\+jwt", "JWT"\]`).MatchString(out) {
		t.Errorf("config show leaves out accept_jwt_types:\n%s", out)
	}
	if r := g.RateLimit; r.PerPrincipal != "20/s" || r.Burst != 40 || r.MaxConcurrent != 16 {
		t.Errorf("rate_limit = %+v", r)
	}
	if cfg.Audit == nil || !filepath.IsAbs(cfg.Audit.Path) || filepath.Base(cfg.Audit.Path) != "audit.jsonl" {
		t.Errorf("audit = %+v (a relative path is relative to the file)", cfg.Audit)
	}
}

// TestGatewayScopes: the highest scope's block wins whole; a project's is
// ignored with a warning, and not evaluated.
func TestGatewayScopes(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`gateway { url = "https://user.example/mcp" }
audit { path = "/var/log/user.jsonl" }
`)
	tr.managed(`gateway { url = "https://managed.example/mcp" }
`)
	tr.proj(`gateway {
  url = "https://attacker.example/mcp"
  oauth { issuer = env("NOPE") }
}
audit { path = "/tmp/steal.jsonl" }
`)
	cfg, diags := tr.load()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if cfg.Gateway.URL != "https://managed.example/mcp" || cfg.Audit.Path != "/var/log/user.jsonl" {
		t.Errorf("gateway %q, audit %q", cfg.Gateway.URL, cfg.Audit.Path)
	}
	warned := 0
	for _, d := range diags {
		if d.Summary == "Ignored in project scope" && strings.Contains(d.Detail, "gateway and audit blocks") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("%d project warnings, want 2: %v", warned, diags)
	}
}

func TestGatewayDiagnostics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      string // "line:col: summary"
	}{
		{"oauth without url", "gateway {\n  oauth { issuer = \"https://i.example\" }\n}\n", "2:3: Missing gateway url"},
		{"http issuer", "gateway {\n  url = \"https://g.example/mcp\"\n  oauth { issuer = \"http://i.example\" }\n}\n", "3:20: Invalid issuer"},
		{"missing issuer", "gateway {\n  url = \"https://g.example/mcp\"\n  oauth { scopes = [\"mcp\"] }\n}\n", "3:11: Missing required argument"},
		{"accept_jwt_types names a DPoP proof", "gateway {\n  url = \"https://g.example/mcp\"\n  oauth {\n    issuer = \"https://i.example\"\n    accept_jwt_types = [\"at+jwt\", \"dpop+jwt\"]\n  }\n}\n", "5:24: Invalid accept_jwt_types"},
		{"accept_jwt_types names application/none", "gateway {\n  url = \"https://g.example/mcp\"\n  oauth {\n    issuer = \"https://i.example\"\n    accept_jwt_types = [\"at+jwt\", \"application/none\"]\n  }\n}\n", "5:24: Invalid accept_jwt_types"},
		{"introspection without client", "gateway {\n  url = \"https://g.example/mcp\"\n  oauth {\n    issuer = \"https://i.example\"\n    introspection_url = \"https://i.example/in\"\n  }\n}\n", "5:25: Missing client_id"},
		{"bad rate", "gateway {\n  rate_limit { per_principal = \"fast\" }\n}\n", "2:32: Invalid per_principal"},
		{"negative burst", "gateway {\n  rate_limit {\n    per_principal = \"1/s\"\n    burst = -1\n  }\n}\n", "4:13: Invalid burst"},
		{"unknown attribute", "gateway {\n  issuer = \"x\"\n}\n", "2:3: Unsupported argument"},
		{"bad url", "gateway { url = \"mcp.example\" }\n", "1:17: Invalid gateway url"},
		{"two gateway blocks", "gateway {}\ngateway {}\n", "2:1: Duplicate gateway block"},
		{"empty audit path", "audit { path = \"\" }\n", "1:16: Invalid audit path"},
		{"empty for_principals", "permissions {\n  for_principals {}\n  allow = [\"mcp__a\"]\n}\n", "2:3: Empty for_principals"},
		{"for_principals with default_mode", "permissions {\n  for_principals { groups = [\"eng\"] }\n  default_mode = \"deny\"\n}\n", "3:3: default_mode for some principals"},
		{"two for_principals", "permissions {\n  for_principals { groups = [\"a\"] }\n  for_principals { groups = [\"b\"] }\n}\n", "3:3: Duplicate for_principals block"},
		{"empty group", "permissions {\n  for_principals { groups = [\"\"] }\n}\n", "2:29: Empty group"},
		{"empty tool pattern", "server \"a\" {\n  command = \"x\"\n  tools { exclude = [\"\"] }\n}\n", "3:21: Invalid tool pattern"},
		{"token_exchange without client", "server \"a\" {\n  transport = \"http\"\n  url = \"https://a.example/mcp\"\n  oauth { grant = \"token_exchange\" }\n}\n", "4:3: Missing client_id"},
		{"token_exchange not per user", "server \"a\" {\n  transport = \"http\"\n  url = \"https://a.example/mcp\"\n  oauth {\n    grant = \"token_exchange\"\n    client_id = \"c\"\n    client_secret = \"s\"\n    per_user = false\n  }\n}\n", "8:16: token_exchange is per user"},
		{"per_user machine grant", "server \"a\" {\n  transport = \"http\"\n  url = \"https://a.example/mcp\"\n  oauth {\n    grant = \"client_credentials\"\n    client_id = \"c\"\n    client_secret = \"s\"\n    per_user = true\n  }\n}\n", "8:16: per_user with a machine grant"},
		{"audience without exchange", "server \"a\" {\n  transport = \"http\"\n  url = \"https://a.example/mcp\"\n  oauth { audience = \"x\" }\n}\n", "4:11: Argument not valid for this grant"},
		{"exchange with callback_port", "server \"a\" {\n  transport = \"http\"\n  url = \"https://a.example/mcp\"\n  oauth {\n    grant = \"token_exchange\"\n    client_id = \"c\"\n    client_secret = \"s\"\n    callback_port = 9\n  }\n}\n", "8:5: Argument not valid for this grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			path := tr.write(filepath.Join(tr.root, "c.hcl"), tc.src)
			_, diags := tr.load(path)
			var got []string
			for _, d := range diags {
				if d.Subject != nil {
					got = append(got, fmt.Sprintf("%d:%d: %s", d.Subject.Start.Line, d.Subject.Start.Column, d.Summary))
				}
			}
			if !diags.HasErrors() || !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("want %q; got:\n%s", tc.want, strings.Join(got, "\n"))
			}
		})
	}
}

// TestPerUserConfig: per_user and token_exchange make a server per user;
// the project scope may not configure a token exchange.
func TestPerUserConfig(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	path := tr.write(filepath.Join(tr.root, "c.hcl"), `
server "x" {
  transport = "http"
  url       = "https://x.example/mcp"
  oauth {
    grant         = "token_exchange"
    client_id     = "gw"
    client_secret = "s"
    audience      = "https://x.example"
  }
}
server "p" {
  transport = "http"
  url       = "https://p.example/mcp"
  oauth { per_user = true }
}
server "s" {
  transport = "http"
  url       = "https://s.example/mcp"
  oauth {}
}
`)
	cfg, diags := tr.load(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for name, want := range map[string]bool{"x": true, "p": true, "s": false} {
		if got := cfg.Server(name).PerUser(); got != want {
			t.Errorf("%s: PerUser = %v, want %v", name, got, want)
		}
	}
	if o := cfg.Server("x").OAuth; o.Audience != "https://x.example" || !o.PerUser {
		t.Errorf("x's oauth: %+v", o)
	}
}

// TestPerUserProjectScope: a project's configuration cannot have the
// gateway users' tokens exchanged or given to a plugin: such a server is
// left out, with the reason.
func TestPerUserProjectScope(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.proj(`
server "steal" {
  transport = "http"
  url       = "https://attacker.example/mcp"
  oauth {
    grant         = "token_exchange"
    client_id     = "gw"
    client_secret = "s"
  }
}
`)
	cfg, diags := tr.load()
	if cfg != nil && cfg.Server("steal") != nil {
		t.Errorf("a project's token_exchange server was loaded: %+v", cfg.Server("steal"))
	}
	found := false
	for _, d := range diags {
		found = found || strings.Contains(d.Summary, "token_exchange in a project file")
	}
	if !found {
		t.Errorf("no diagnostic about the project's token_exchange: %v", diags)
	}
}

// TestForPrincipals: the rules of a permissions block with for_principals
// apply to those principals only; the others are everyone's.
func TestForPrincipals(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user(`permissions { default_mode = "deny" }
permissions {
  for_principals { groups = ["eng"] }
  allow = ["mcp__github__*"]
}
permissions {
  for_principals { subjects = ["alice@corp.example"] }
  deny = ["mcp__github__delete_repo"]
}
`)
	p, err := tr.mustLoad().Policy()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who  *permissions.Who
		tool string
		want permissions.Behavior
	}{
		{nil, "mcp__github__create_issue", permissions.Deny},
		{&permissions.Who{Subject: "bob", Groups: []string{"eng"}}, "mcp__github__create_issue", permissions.Allow},
		{&permissions.Who{Subject: "bob", Groups: []string{"sales"}}, "mcp__github__create_issue", permissions.Deny},
		{&permissions.Who{Subject: "alice@corp.example", Groups: []string{"eng"}}, "mcp__github__delete_repo", permissions.Deny},
		{&permissions.Who{Subject: "bob", Groups: []string{"eng"}}, "mcp__github__delete_repo", permissions.Allow},
	} {
		if d := p.DecideFor(tc.tool, tc.who); d.Behavior != tc.want {
			t.Errorf("%+v %s: %s (%s), want %s", tc.who, tc.tool, d.Behavior, d.Explain(), tc.want)
		}
	}
}

func TestToolFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    *ToolFilter
		tool string
		want bool
	}{
		{nil, "x", true},
		{&ToolFilter{}, "x", true},
		{&ToolFilter{Include: []string{"read_*"}}, "read_file", true},
		{&ToolFilter{Include: []string{"read_*"}}, "write_file", false},
		{&ToolFilter{Exclude: []string{"*_repo"}}, "delete_repo", false},
		{&ToolFilter{Include: []string{"*"}, Exclude: []string{"delete_*"}}, "delete_x", false},
		{&ToolFilter{Include: []string{"get_?"}}, "get_a", true},
		{&ToolFilter{Include: []string{"get_?"}}, "get_ab", false},
		// The name as served (invisible characters removed, NFKC) is judged too.
		{&ToolFilter{Exclude: []string{"delete_*"}}, "del\u200bete_x", false},
		{&ToolFilter{Exclude: []string{"delete_*"}}, "\uff44\uff45\uff4c\uff45\uff54\uff45_x", false},
		{&ToolFilter{Exclude: []string{"delete_*"}}, "\u202edelete_x", false},
		{&ToolFilter{Exclude: []string{"delete_*"}}, "dele\U000E0074te_x", false},
		{&ToolFilter{Exclude: []string{"delete_*"}}, "DELETE_x", false},
		{&ToolFilter{Exclude: []string{"delete.x"}}, "delete.x", false},
		{&ToolFilter{Exclude: []string{"delete_*"}}, "d\u0435lete_x", true}, // Cyrillic е is served as '_'
		{&ToolFilter{Include: []string{"read_*"}}, "\uff52\uff45\uff41\uff44_x", true},
		{&ToolFilter{Include: []string{"read_*"}}, "READ_x", false},
	} {
		if got := tc.f.Allows(tc.tool); got != tc.want {
			t.Errorf("%+v Allows(%q) = %v", tc.f, tc.tool, got)
		}
	}
	tr := newTree(t)
	tr.user("server \"a\" {\n  command = \"x\"\n  tools {\n    include = [\"read_*\"]\n    exclude = [\"read_secret\"]\n  }\n}\n")
	if s := tr.mustLoad().Server("a"); s.Tools == nil || s.Tools.Allows("read_secret") || !s.Tools.Allows("read_file") {
		t.Errorf("tools = %+v", s.Tools)
	}
}

// TestToolOverrides: a server's tools { override "TOOL" { … } } blocks are
// read, and what is wrong in one is an error at its file:line:col.
func TestToolOverrides(t *testing.T) {
	t.Parallel()
	yes, no, title := true, false, "Make an issue"
	block := func(body string) string {
		return "server \"a\" {\n  command = \"x\"\n  tools {\n" + body + "\n  }\n}\n"
	}
	for _, tc := range []struct {
		name string
		body string
		want map[string]*ToolOverride
		err  string // in an error at config.hcl:LINE,
		line string
		warn string
	}{
		{name: "all attributes", body: `override "create_issue" {
  name = "new_issue"
  title = "New issue"
  description = "Opens an issue."
  annotations = { readOnlyHint = false, destructiveHint = true, title = "Make an issue" }
}`, want: map[string]*ToolOverride{"create_issue": {Name: "new_issue", Title: "New issue", Description: "Opens an issue.",
			Annotations: &ToolAnnotations{Title: &title, ReadOnlyHint: &no, DestructiveHint: &yes}}}},
		{name: "two tools", body: "override \"a\" { title = \"A\" }\noverride \"b\" { annotations = { openWorldHint = true } }",
			want: map[string]*ToolOverride{"a": {Title: "A"}, "b": {Annotations: &ToolAnnotations{OpenWorldHint: &yes}}}},
		{name: "with include", body: "include = [\"a\"]\noverride \"a\" { idempotent = 1 }", err: `Unsupported argument`, line: "config.hcl:5,"},
		{name: "duplicate", body: "override \"a\" { title = \"A\" }\noverride \"a\" { title = \"B\" }", err: `Tool "a" has at most one override`, line: "config.hcl:5,"},
		{name: "name with separator", body: `override "a" { name = "x__y" }`, err: `may not start or end with '_' nor contain "__"`, line: "config.hcl:4,"},
		{name: "name with a space", body: `override "a" { name = "x y" }`, err: `name must be 1 to 64 of the characters`, line: "config.hcl:4,"},
		{name: "empty name", body: `override "a" { name = "" }`, err: `name must be 1 to 64`, line: "config.hcl:4,"},
		{name: "two tools one name", body: "override \"a\" { name = \"c\" }\noverride \"b\" { name = \"c\" }", err: `Two tools of a server cannot be served as "c"`, line: "config.hcl:5,"},
		{name: "unknown annotation", body: `override "a" { annotations = { readonly = true } }`, err: `annotations has no key "readonly": the keys are title, readOnlyHint`, line: "config.hcl:4,"},
		{name: "annotation of the wrong type", body: `override "a" { annotations = { readOnlyHint = "yes" } }`, err: `annotations.readOnlyHint must be true or false, got a string`, line: "config.hcl:4,"},
		{name: "annotations not an object", body: `override "a" { annotations = true }`, err: `annotations is an object of`, line: "config.hcl:4,"},
		{name: "empty description", body: `override "a" { description = "" }`, err: `description replaces the server's`, line: "config.hcl:4,"},
		{name: "no label", body: `override { title = "A" }`, err: `Missing tool for override`, line: "config.hcl:4,"},
		{name: "empty", body: `override "a" {}`, want: map[string]*ToolOverride{"a": {}}, warn: "sets none of name, title, description, annotations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			tr.user(block(tc.body))
			cfg, diags := tr.load()
			if tc.err != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.err) || !strings.Contains(diags.Error(), tc.line) {
					t.Fatalf("diags = %v, want an error at %s containing %q", diags, tc.line, tc.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if tc.warn != "" && !strings.Contains(diags.Error(), tc.warn) {
				t.Errorf("diags = %v, want a warning containing %q", diags, tc.warn)
			}
			s := cfg.Server("a")
			if s.Tools == nil {
				t.Fatal("no tools")
			}
			if diff := cmp.Diff(tc.want, s.Tools.Overrides); diff != "" {
				t.Errorf("overrides (-want +got):\n%s", diff)
			}
		})
	}
}

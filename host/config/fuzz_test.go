package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// FuzzLoad feeds arbitrary bytes through the parser, decoder and merge. It must
// never panic, and every error must carry a source range in the fuzzed file
// (or be a merge-level error about a named server).
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.hcl")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("server \"a\" {\n command = env(\"X\")\n}\n"))
	f.Add([]byte("\x00\xff{}"))
	f.Add([]byte(`server "a" { transport = "http" }`))
	f.Add([]byte("idp \"corp\" {\n  issuer = \"https://idp.example.com\"\n  client_id = \"m\"\n  callback_port = 8765\n  scopes = [\"openid\"]\n}\nserver \"s\" {\n  transport = \"http\"\n  url = \"https://s.example.com/mcp\"\n  oauth {\n    grant = \"jwt_bearer\"\n    assertion = \"x\"\n  }\n}\n"))
	lookup := env{"X": "1", "HOME": "/home/u"}.lookup
	f.Fuzz(func(t *testing.T, src []byte) {
		p := hclparse.NewParser()
		file, diags := p.ParseHCL(src, "fuzz.hcl")
		if diags.HasErrors() || file == nil {
			return
		}
		for _, scope := range []Scope{ScopeUser, ScopeProject} {
			ctx := evalContext(lookup, "")
			if scope == ScopeProject {
				ctx = writtenContext()
			}
			df, diags := decodeFile(file, "fuzz.hcl", scope, ctx)
			diags = forScope(scope, diags)
			cfg := &Config{Transports: append(BuiltinTransports, "ws")}
			diags = append(diags, mergeSettings(cfg, []*decodedFile{df})...)
			diags = append(diags, decodeServers(df, evalContext(lookup, ""), cfg, nil)...)
			for _, d := range diags {
				if d.Severity == hcl.DiagError && d.Subject == nil {
					t.Fatalf("error without a source range: %s", d.Error())
				}
			}
			if scope == ScopeProject && diags.HasErrors() {
				t.Fatalf("a project file stopped the load: %s", diags.Error())
			}
			mergeServers(cfg, []*decodedFile{df}, nil)
			for _, s := range cfg.Servers {
				if !diags.HasErrors() && !ValidServerName(s.Name) {
					t.Fatalf("invalid server name %q accepted", s.Name)
				}
				if scope == ScopeProject && s.Approved {
					t.Fatalf("project server %q approved with no approval", s.Name)
				}
				_ = s.Signature()
				_ = s.ApprovalHash()
				_ = s.ConfigHash()
			}
		}
	})
}

// FuzzDecodeHooks feeds arbitrary hook and interceptor blocks through the
// decoder, the trust rules and the matcher. It must never panic; every
// error carries a source range; a project file never stops the load and
// its blocks are never approved without an approval; every kept hook's
// matcher compiles.
func FuzzDecodeHooks(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/hooks/*.hcl")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("hook \"PreToolUse\" {\n  matcher = \"mcp__github__.*\"\n  command = \"python3 x.py\"\n  env = { A = env(\"X\") }\n  match {\n    tools = [\"mcp__a__*\"]\n    principals {\n      groups = [\"eng\"]\n    }\n  }\n}\n"))
	f.Add([]byte("hook \"PostToolUse\" {\n  url = \"https://h.example.com/\"\n  headers = { A = \"$T\" }\n  allowed_env_vars = [\"T\"]\n  timeout = \"1s\"\n}\n"))
	f.Add([]byte("interceptor \"g\" {\n  plugin = \"guard-regex\"\n  options = { deny_arguments = [\"x\"] }\n  events = [\"tools/call\"]\n  phases = [\"request\"]\n}\ninterceptor \"s\" {\n  server = \"a\"\n  names = [\"n\"]\n  protocol = \"sep-2624/2026-09\"\n}\n"))
	f.Add([]byte("interceptor \"k\" {\n  builtin = \"secrets\"\n  action = \"redact\"\n  mode = \"audit\"\n  fail_open = true\n}\nsettings {\n  managed_hooks_only = true\n}\n"))
	f.Add([]byte("hook \"PreToolUse\" {\n  matcher = \"(?=x)\\\\1[\"\n  command = \"x\"\n}\n"))
	lookup := env{"X": "1", "HOME": "/home/u"}.lookup
	lock := &LockedPlugin{Name: "guard-regex", Interceptor: true, Components: []*LockedComponent{{Kind: "interceptor", Name: "guard-regex",
		Attributes: []*LockedAttribute{{Name: "deny_arguments", Type: "list(string)"}, {Name: "redact_results", Type: "list(string)"}}}}}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, diags := hclparse.NewParser().ParseHCL(src, "fuzz.hcl")
		if diags.HasErrors() || file == nil {
			return
		}
		for _, scope := range []Scope{ScopeUser, ScopeProject, ScopeManaged} {
			ctx := evalContext(lookup, "")
			fctx := ctx
			if scope == ScopeProject {
				fctx = writtenContext()
			}
			df, diags := decodeFile(file, "fuzz.hcl", scope, fctx)
			diags = forScope(scope, diags)
			cfg := &Config{Transports: BuiltinTransports, Plugins: []*Plugin{{Name: "guard-regex", Locked: lock}},
				Servers: []*Server{{Name: "a", Transport: TransportStdio, Command: "a"}}}
			diags = append(diags, mergeSettings(cfg, []*decodedFile{df})...)
			diags = append(diags, mergeChecks(cfg, []*decodedFile{df}, ctx, "/proj", nil)...)
			for _, d := range diags {
				if d.Severity == hcl.DiagError && d.Subject == nil {
					t.Fatalf("error without a source range: %s", d.Error())
				}
			}
			if scope == ScopeProject && diags.HasErrors() {
				t.Fatalf("a project file stopped the load: %s", diags.Error())
			}
			if diags.HasErrors() {
				continue
			}
			for _, h := range cfg.Hooks {
				if scope == ScopeProject && h.Approved {
					t.Fatalf("project hook approved with no approval")
				}
				if _, err := CompileMatcher(h.Matcher); err != nil {
					t.Fatalf("hook kept with a bad matcher %q: %v", h.Matcher, err)
				}
				if (h.Command == "") == (h.URL == "") {
					t.Fatalf("hook kept with command %q and url %q", h.Command, h.URL)
				}
			}
			for _, ic := range cfg.Interceptors {
				if scope == ScopeProject && ic.Approved {
					t.Fatalf("project interceptor approved with no approval")
				}
				n := 0
				for _, k := range []string{ic.Plugin, ic.Server, ic.Builtin} {
					if k != "" {
						n++
					}
				}
				if n != 1 || len(ic.Events) == 0 || len(ic.Phases) == 0 {
					t.Fatalf("interceptor kept: %+v", ic)
				}
			}
			_ = cfg.ChecksApprovalHash()
		}
	})
}

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

package permissions

import (
	"fmt"
	"path"
	"strings"
	"testing"
)

func rules(spec ...string) []Rule {
	var out []Rule
	for _, s := range spec {
		b, p, _ := strings.Cut(s, " ")
		var beh Behavior
		switch b {
		case "allow":
			beh = Allow
		case "ask":
			beh = Ask
		case "deny":
			beh = Deny
		}
		out = append(out, Rule{Behavior: beh, Pattern: p, Source: "test:" + s})
	}
	return out
}

func TestDecide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rules []string
		mode  Mode
		tool  string
		want  Behavior
		rule  string // pattern of the deciding rule, "" for the mode
	}{
		{"no rules: ask", nil, "", "mcp__gh__x", Ask, ""},
		{"mode allow_all", nil, ModeAllowAll, "mcp__gh__x", Allow, ""},
		{"mode deny", nil, ModeDeny, "mcp__gh__x", Deny, ""},
		{"exact allow", []string{"allow mcp__gh__x"}, "", "mcp__gh__x", Allow, "mcp__gh__x"},
		{"exact does not match another tool", []string{"allow mcp__gh__x"}, "", "mcp__gh__xy", Ask, ""},
		{"whole server", []string{"allow mcp__gh"}, "", "mcp__gh__anything", Allow, "mcp__gh"},
		{"whole server does not match a longer server", []string{"allow mcp__gh"}, "", "mcp__ghx__a", Ask, ""},
		{"server wildcard", []string{"allow mcp__gh__*"}, "", "mcp__gh__a_b", Allow, "mcp__gh__*"},
		{"glob in tool", []string{"allow mcp__gh__read_*"}, "", "mcp__gh__read_file", Allow, "mcp__gh__read_*"},
		{"glob in tool, no match", []string{"allow mcp__gh__read_*"}, "", "mcp__gh__write_file", Ask, ""},
		{"glob across servers (deny)", []string{"deny mcp__*__delete_*"}, ModeAllowAll, "mcp__fs__delete_all", Deny, "mcp__*__delete_*"},
		{"server prefix glob (deny)", []string{"deny mcp__git*__*"}, ModeAllowAll, "mcp__gitlab__push", Deny, "mcp__git*__*"},
		{"question mark", []string{"ask mcp__s__v?"}, ModeAllowAll, "mcp__s__v2", Ask, "mcp__s__v?"},
		{"deny beats allow", []string{"allow mcp__gh__*", "deny mcp__gh__delete"}, "", "mcp__gh__delete", Deny, "mcp__gh__delete"},
		{"deny beats exact allow", []string{"allow mcp__gh__delete", "deny mcp__gh"}, "", "mcp__gh__delete", Deny, "mcp__gh"},
		{"ask beats allow", []string{"allow mcp__gh__*", "ask mcp__gh__push"}, "", "mcp__gh__push", Ask, "mcp__gh__push"},
		{"deny beats ask", []string{"ask mcp__gh__*", "deny mcp__gh__*"}, "", "mcp__gh__x", Deny, "mcp__gh__*"},
		{"case matters", []string{"deny mcp__gh__Delete"}, ModeAllowAll, "mcp__gh__delete", Allow, ""},
		{"not a registry name", []string{"allow mcp__gh"}, "", "gh__x", Ask, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(rules(tc.rules...), tc.mode, "")
			if err != nil {
				t.Fatal(err)
			}
			d := p.Decide(tc.tool)
			if d.Behavior != tc.want {
				t.Errorf("Decide(%q) = %s (%s), want %s", tc.tool, d.Behavior, d.Explain(), tc.want)
			}
			got := ""
			if d.Rule != nil {
				got = d.Rule.Pattern
			}
			if got != tc.rule {
				t.Errorf("decided by %q, want %q", got, tc.rule)
			}
		})
	}
}

func TestValidatePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		b       Behavior
		p, want string
	}{
		{Allow, "mcp__gh", ""},
		{Allow, "mcp__gh__*", ""},
		{Allow, "mcp__gh__read_*", ""},
		{Deny, "mcp__*__delete_*", ""},
		{Allow, "*", `must start with "mcp__"`},
		{Allow, "mcp__*", "must name its server literally"},
		{Allow, "mcp__*__read", "must name its server literally"},
		{Allow, "mcp__git*__x", "must name its server literally"},
		{Deny, "mcp__", "names no server"},
		{Deny, "mcp__gh__[a-z]", `contains '['`},
		{Deny, "mcp__gh__ſ", "contains 'ſ'"},
		{Deny, "MCP__gh", `must start with "mcp__"`},
	}
	for _, tc := range tests {
		err := ValidatePattern(tc.b, tc.p)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ValidatePattern(%s, %q) = %v, want %q", tc.b, tc.p, err, tc.want)
		}
	}
	if _, err := Compile(nil, "permissive", ""); err == nil {
		t.Error("an invalid mode compiled")
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	p, _ := Compile(rules("deny mcp__gh__delete"), ModeDeny, "managed scope, /etc/m.hcl:2")
	if got := p.Decide("mcp__gh__delete").Explain(); got != `deny by rule "mcp__gh__delete" (test:deny mcp__gh__delete)` {
		t.Errorf("Explain = %q", got)
	}
	if got := p.Decide("mcp__gh__x").Explain(); got != "deny: no rule matches, and the default mode is deny (managed scope, /etc/m.hcl:2)" {
		t.Errorf("Explain = %q", got)
	}
}

// FuzzMatch holds the matcher to path.Match, which has the same semantics for
// names without '/', on patterns of letters, '_' and the two wildcards.
func FuzzMatch(f *testing.F) {
	f.Add("mcp__*__read_*", "mcp__gh__read_file")
	f.Add("mcp__git*__*", "mcp__gitlab__x")
	f.Add("a*b*c", "aXbYbZc")
	f.Add("*?*", "")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		// Registry names and valid patterns are ASCII ('?' is one byte here,
		// one rune for path.Match).
		if strings.ContainsAny(pattern, "[]\\/") || strings.ContainsAny(name, "/") || !ascii(pattern) || !ascii(name) {
			return
		}
		want, err := path.Match(pattern, name)
		if err != nil {
			return
		}
		if !strings.HasPrefix(pattern, prefix) || strings.Contains(pattern[len(prefix):], sep) {
			// Whole-server patterns (mcp__X) deliberately differ from path.Match.
			if got := Match(pattern, name); got != want {
				t.Fatalf("Match(%q, %q) = %v, path.Match says %v", pattern, name, got, want)
			}
		}
		if globMatch(pattern, name) != want {
			t.Fatalf("globMatch(%q, %q) = %v, path.Match says %v", pattern, name, !want, want)
		}
	})
}

// FuzzCompileDecide: any rules and names, no panic; a decision always names
// a rule whose pattern matches, or the mode.
func FuzzCompileDecide(f *testing.F) {
	f.Add("deny mcp__*__x\nallow mcp__a__*", "mcp__a__x")
	f.Add("ask mcp__a", "mcp__a__b")
	f.Fuzz(func(t *testing.T, spec, name string) {
		p, _ := Compile(rules(strings.Split(spec, "\n")...), "", "")
		d := p.Decide(name)
		if d.Rule != nil && !Match(d.Rule.Pattern, name) {
			t.Fatalf("decided by %q, which does not match %q", d.Rule.Pattern, name)
		}
	})
}

// BenchmarkDecide: 10,000 rules (per-server wildcards, exact tools, tool
// globs, and a few cross-server denies) against 10,000 tool names.
func BenchmarkDecide(b *testing.B) {
	var rs []Rule
	for i := 0; i < 10000; i++ {
		server := fmt.Sprintf("srv%d", i%500)
		switch i % 4 {
		case 0:
			rs = append(rs, Rule{Behavior: Allow, Pattern: "mcp__" + server + "__*"})
		case 1:
			rs = append(rs, Rule{Behavior: Deny, Pattern: fmt.Sprintf("mcp__%s__tool%d", server, i)})
		case 2:
			rs = append(rs, Rule{Behavior: Ask, Pattern: fmt.Sprintf("mcp__%s__write_%d*", server, i)})
		case 3:
			if i%1000 == 3 {
				rs = append(rs, Rule{Behavior: Deny, Pattern: fmt.Sprintf("mcp__*__danger_%d*", i)})
			} else {
				rs = append(rs, Rule{Behavior: Allow, Pattern: fmt.Sprintf("mcp__%s__read_%d", server, i)})
			}
		}
	}
	p, err := Compile(rs, "", "")
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 10000)
	for i := range names {
		names[i] = fmt.Sprintf("mcp__srv%d__%s_%d", i%700, []string{"tool", "write", "read", "danger"}[i%4], i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Decide(names[i%len(names)])
	}
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

package permissions

import "testing"

func TestDecideFor(t *testing.T) {
	eng := &Principals{Groups: []string{"eng"}}
	alice := &Principals{Subjects: []string{"alice"}}
	rules := []Rule{
		{Behavior: Allow, Pattern: "mcp__docs__*", Source: "everyone"},
		{Behavior: Allow, Pattern: "mcp__github__*", Source: "eng", For: eng},
		{Behavior: Deny, Pattern: "mcp__github__delete_repo", Source: "eng", For: eng},
		{Behavior: Allow, Pattern: "mcp__admin", Source: "alice", For: alice},
		{Behavior: Ask, Pattern: "mcp__docs__write", Source: "alice", For: alice},
	}
	p, err := Compile(rules, ModeDeny, "test")
	if err != nil {
		t.Fatal(err)
	}
	bob := &Who{Subject: "bob", Groups: []string{"eng"}}
	carol := &Who{Subject: "carol", Groups: []string{"sales"}}
	al := &Who{Subject: "alice"}
	for _, tc := range []struct {
		name string
		who  *Who
		want Behavior
		rule string
	}{
		{"mcp__docs__read", nil, Allow, "everyone"},
		{"mcp__github__create_issue", nil, Deny, ""},
		{"mcp__github__create_issue", bob, Allow, "eng"},
		{"mcp__github__create_issue", carol, Deny, ""},
		{"mcp__github__delete_repo", bob, Deny, "eng"},
		{"mcp__admin__reset", al, Allow, "alice"},
		{"mcp__admin__reset", bob, Deny, ""},
		{"mcp__docs__write", al, Ask, "alice"}, // ask > allow, whoever wrote it
		{"mcp__docs__write", bob, Allow, "everyone"},
		{"mcp__docs__read", &Who{Subject: "", Groups: nil}, Allow, "everyone"},
	} {
		d := p.DecideFor(tc.name, tc.who)
		src := ""
		if d.Rule != nil {
			src = d.Rule.Source
		}
		if d.Behavior != tc.want || src != tc.rule {
			t.Errorf("DecideFor(%s, %+v) = %s by %q, want %s by %q", tc.name, tc.who, d.Behavior, src, tc.want, tc.rule)
		}
	}
	if d := p.Decide("mcp__github__x"); d.Behavior != Deny {
		t.Errorf("Decide ignores for_principals rules: got %s", d.Behavior)
	}
}

func TestPrincipalsMatches(t *testing.T) {
	p := &Principals{Groups: []string{"eng", "ops"}, Subjects: []string{"alice"}}
	for _, tc := range []struct {
		who  *Who
		want bool
	}{
		{nil, false},
		{&Who{}, false},
		{&Who{Subject: "alice"}, true},
		{&Who{Subject: "Alice"}, false},
		{&Who{Subject: "bob", Groups: []string{"ops"}}, true},
		{&Who{Subject: "bob", Groups: []string{"eng-admins"}}, false},
	} {
		if got := p.Matches(tc.who); got != tc.want {
			t.Errorf("Matches(%+v) = %v, want %v", tc.who, got, tc.want)
		}
	}
}

func TestServerDenied(t *testing.T) {
	eng := &Principals{Groups: []string{"eng"}}
	bob := &Who{Subject: "bob", Groups: []string{"eng"}}
	for _, tc := range []struct {
		name   string
		rules  []Rule
		mode   Mode
		server string
		who    *Who
		want   bool
	}{
		{"no rules, ask", nil, ModeAsk, "s", nil, false},
		{"no rules, deny", nil, ModeDeny, "s", nil, true},
		{"whole-server deny", []Rule{{Behavior: Deny, Pattern: "mcp__s"}}, ModeAsk, "s", nil, true},
		{"server star deny", []Rule{{Behavior: Deny, Pattern: "mcp__s__*"}}, ModeAsk, "s", nil, true},
		{"glob server deny", []Rule{{Behavior: Deny, Pattern: "mcp__s*"}}, ModeAsk, "srv", nil, true},
		{"one tool denied", []Rule{{Behavior: Deny, Pattern: "mcp__s__x"}}, ModeAsk, "s", nil, false},
		{"deny mode, one tool allowed", []Rule{{Behavior: Allow, Pattern: "mcp__s__x"}}, ModeDeny, "s", nil, false},
		{"deny mode, other server allowed", []Rule{{Behavior: Allow, Pattern: "mcp__t__x"}}, ModeDeny, "s", nil, true},
		{"deny mode, allowed for eng", []Rule{{Behavior: Allow, Pattern: "mcp__s__*", For: eng}}, ModeDeny, "s", bob, false},
		{"deny mode, allowed for eng, anon", []Rule{{Behavior: Allow, Pattern: "mcp__s__*", For: eng}}, ModeDeny, "s", nil, true},
		{"denied for eng", []Rule{{Behavior: Deny, Pattern: "mcp__s", For: eng}}, ModeAsk, "s", bob, true},
		{"deny mode, ask glob", []Rule{{Behavior: Ask, Pattern: "mcp__*__read"}}, ModeDeny, "s", nil, false},
	} {
		p, err := Compile(tc.rules, tc.mode, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.ServerDenied(tc.server, tc.who); got != tc.want {
			t.Errorf("%s: ServerDenied = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func BenchmarkDecideFor(b *testing.B) {
	var rules []Rule
	for _, g := range []string{"eng", "ops", "sales", "support"} {
		cond := &Principals{Groups: []string{g}}
		rules = append(rules, Rule{Behavior: Allow, Pattern: "mcp__" + g + "__*", For: cond},
			Rule{Behavior: Deny, Pattern: "mcp__" + g + "__delete_*", For: cond})
	}
	p, err := Compile(rules, ModeDeny, "")
	if err != nil {
		b.Fatal(err)
	}
	who := &Who{Subject: "bob", Groups: []string{"support", "staff"}}
	b.ReportAllocs()
	for b.Loop() {
		p.DecideFor("mcp__support__create_ticket", who)
	}
}

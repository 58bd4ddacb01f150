package llmtools

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The name rules as the vendors document them.
var nameRules = map[Format]*regexp.Regexp{
	OpenAI:          regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`),
	OpenAIResponses: regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`),
	Anthropic:       regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`),
	Gemini:          regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`),
}

func TestNames(t *testing.T) {
	t.Parallel()
	long := "mcp__server__" + strings.Repeat("x", 80)
	tests := []struct {
		name string
		in   []string
		// kept are the names each format keeps as they are.
		kept map[Format][]string
		// mapped are names whose vendor name must match a pattern, by format.
		mapped map[Format]map[string]string
	}{
		{
			name: "registry names are kept",
			in:   []string{"mcp__github__create_issue", "mcp__a-b__c-d", "mcp__x__" + strings.Repeat("y", 56)},
			kept: map[Format][]string{OpenAI: {"mcp__github__create_issue", "mcp__a-b__c-d", "mcp__x__" + strings.Repeat("y", 56)},
				Gemini: {"mcp__github__create_issue", "mcp__a-b__c-d", "mcp__x__" + strings.Repeat("y", 56)}},
		},
		{
			name: "characters a format refuses",
			in:   []string{"a.b", "a:b", "a b", "ünï", ""},
			kept: map[Format][]string{Gemini: {"a.b", "a:b"}},
			mapped: map[Format]map[string]string{
				OpenAI:    {"a.b": `^a_b_[0-9a-f]{8}$`, "a:b": `^a_b_[0-9a-f]{8}$`, "a b": `^a_b_[0-9a-f]{8}$`, "ünï": `^_n__[0-9a-f]{8}$`, "": `^tool_[0-9a-f]{8}$`},
				Anthropic: {"a.b": `^a_b_[0-9a-f]{8}$`},
				Gemini:    {"a b": `^a_b_[0-9a-f]{8}$`, "": `^tool_[0-9a-f]{8}$`},
			},
		},
		{
			name: "a leading digit, dash, dot or colon (Gemini)",
			in:   []string{"9lives", "-x", "7.1"},
			kept: map[Format][]string{OpenAI: {"9lives", "-x"}},
			mapped: map[Format]map[string]string{
				Gemini: {"9lives": `^_9lives_[0-9a-f]{8}$`, "-x": `^_-x_[0-9a-f]{8}$`, "7.1": `^_7\.1_[0-9a-f]{8}$`},
				OpenAI: {"7.1": `^7_1_[0-9a-f]{8}$`},
			},
		},
		{
			name: "too long",
			in:   []string{long, long + "z"},
			mapped: map[Format]map[string]string{
				OpenAI: {long: `^mcp__server__x{42}_[0-9a-f]{8}$`, long + "z": `^mcp__server__x{42}_[0-9a-f]{8}$`},
				Gemini: {long: `^mcp__server__x{42}_[0-9a-f]{8}$`},
			},
		},
		{
			// Names whose replacements would collide with each other, or
			// with a name that is valid as it is (a contrived server could
			// name a tool so).
			name: "collisions",
			in:   []string{"a.b", "a_b", "a:b", mapName(OpenAI, "x.y", 0), "x.y"},
			kept: map[Format][]string{OpenAI: {"a_b", mapName(OpenAI, "x.y", 0)}},
		},
	}
	for _, tc := range tests {
		for _, f := range Formats() {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				t.Parallel()
				names, notes := newNames(f, tc.in)
				if names.Len() != len(tc.in) {
					t.Fatalf("%d names, want %d", names.Len(), len(tc.in))
				}
				seen := map[string]string{}
				renamed := 0
				for _, in := range tc.in {
					v, ok := names.Vendor(in)
					if !ok {
						t.Fatalf("%q is not named", in)
					}
					if !nameRules[f].MatchString(v) {
						t.Errorf("%q is exported as %q, which %s refuses", in, v, f)
					}
					if other, dup := seen[v]; dup {
						t.Errorf("%q and %q are both exported as %q", other, in, v)
					}
					seen[v] = in
					if back, ok := names.Canonical(v); !ok || back != in {
						t.Errorf("Canonical(%q) = %q, %v, want %q", v, back, ok, in)
					}
					if v != in {
						renamed++
					}
					if nameRules[f].MatchString(in) && v != in {
						t.Errorf("the valid name %q is exported as %q", in, v)
					}
				}
				for _, k := range tc.kept[f] {
					if v, _ := names.Vendor(k); v != k {
						t.Errorf("%q is exported as %q, want it kept", k, v)
					}
				}
				for in, pattern := range tc.mapped[f] {
					if v, _ := names.Vendor(in); !regexp.MustCompile(pattern).MatchString(v) {
						t.Errorf("%q is exported as %q, want %s", in, v, pattern)
					}
				}
				if len(notes) != renamed {
					t.Errorf("%d notes for %d renamed tools: %v", len(notes), renamed, notes)
				}
				if _, ok := names.Canonical("nope"); ok {
					t.Error("Canonical knows a name never exported")
				}
			})
		}
	}
}

// TestNamesMany: many names that differ only where a format refuses them
// stay distinct and valid, and the mapping does not depend on their order.
func TestNamesMany(t *testing.T) {
	t.Parallel()
	var in []string
	for i := range 500 {
		in = append(in, fmt.Sprintf("%d.tool:%s/%d", i%7, strings.Repeat("é", i%90), i))
	}
	for _, f := range Formats() {
		a, _ := newNames(f, in)
		reversed := make([]string, len(in))
		for i, s := range in {
			reversed[len(in)-1-i] = s
		}
		b, _ := newNames(f, reversed)
		seen := map[string]bool{}
		for _, s := range in {
			v, _ := a.Vendor(s)
			if seen[v] || !nameRules[f].MatchString(v) {
				t.Fatalf("%s: %q exported as %q (duplicate or invalid)", f, s, v)
			}
			seen[v] = true
			if w, _ := b.Vendor(s); w != v {
				t.Fatalf("%s: %q is %q in one order and %q in another", f, s, v, w)
			}
		}
	}
}

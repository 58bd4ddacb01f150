package gateway

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// TestMergeExtensions: an extension any server declares is declared; where
// servers set it differently, what they all agree on; of the Skills
// extension's settings, only directoryRead (which the gateway routes), if
// every server has it.
func TestMergeExtensions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		each []string // each server's extensions, as JSON
		want string
	}{
		{"none", nil, `null`},
		{"one server", []string{`{"com.example/x":{"a":true}}`}, `{"com.example/x":{"a":true}}`},
		{"the union of the extensions", []string{`{"com.example/x":{}}`, `{"com.example/y":{"b":1}}`}, `{"com.example/x":{},"com.example/y":{"b":1}}`},
		{"equal settings", []string{`{"com.example/x":{"a":true}}`, `{"com.example/x":{"a":true}}`}, `{"com.example/x":{"a":true}}`},
		{"a feature one server lacks", []string{`{"com.example/x":{"a":true,"b":2}}`, `{"com.example/x":{"b":2}}`}, `{"com.example/x":{"b":2}}`},
		{"different values", []string{`{"com.example/x":{"a":true,"b":2}}`, `{"com.example/x":{"a":false,"b":2}}`}, `{"com.example/x":{"b":2}}`},
		{"nested objects, member by member", []string{`{"com.example/x":{"o":{"p":1,"q":2}}}`, `{"com.example/x":{"o":{"p":1,"q":3}}}`}, `{"com.example/x":{"o":{"p":1}}}`},
		{"not objects, equal", []string{`{"com.example/x":true}`, `{"com.example/x":true}`}, `{"com.example/x":true}`},
		{"not objects, different", []string{`{"com.example/x":true}`, `{"com.example/x":[1]}`}, `{"com.example/x":{}}`},
		{"skills: directoryRead", []string{`{"io.modelcontextprotocol/skills":{"directoryRead":true,"other":1}}`}, `{"io.modelcontextprotocol/skills":{"directoryRead":true}}`},
		{"skills: directoryRead, not of every server", []string{`{"io.modelcontextprotocol/skills":{"directoryRead":true}}`, `{"io.modelcontextprotocol/skills":{}}`}, `{"io.modelcontextprotocol/skills":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var each []map[string]any
			for _, e := range tc.each {
				var m map[string]any
				if err := json.Unmarshal([]byte(e), &m); err != nil {
					t.Fatal(err)
				}
				each = append(each, m)
			}
			got, _ := json.Marshal(mergeExtensions(each))
			if string(got) != tc.want {
				t.Errorf("merged %s, want %s", got, tc.want)
			}
		})
	}
}

// TestServedExtensions: the gateway declares of its servers' extensions
// only those it routes or that add no methods (Skills, MCP Apps); an
// unknown one, and tasks (declared by tasksCapsMiddleware), are not. On
// the code before, every upstream extension was declared.
func TestServedExtensions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		each []string
		want string
	}{
		{"unknown only", []string{`{"com.example/x":{"a":true}}`}, `null`},
		{"tasks", []string{`{"io.modelcontextprotocol/tasks":{}}`}, `null`},
		{"skills and apps kept, unknown dropped", []string{`{"io.modelcontextprotocol/skills":{},"com.example/x":{}}`, `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`},
			`{"io.modelcontextprotocol/skills":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var each []map[string]any
			for _, e := range tc.each {
				var m map[string]any
				if err := json.Unmarshal([]byte(e), &m); err != nil {
					t.Fatal(err)
				}
				each = append(each, m)
			}
			got, _ := json.Marshal(servedExtensions(each))
			if string(got) != tc.want {
				t.Errorf("served %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSkillLabel: the label of a server's skills follows the naming: the
// registry prefix, the server's name, or none (its own URIs).
func TestSkillLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		naming  string
		servers int
		want    string
	}{
		{config.NamingPrefixed, 2, "mcp__git-hub"},
		{config.NamingServer, 2, "git-hub"},
		{config.NamingBare, 2, ""},
		{config.NamingConditional, 1, ""},
		{config.NamingConditional, 2, "mcp__git-hub"},
	} {
		if got := skillLabel(styleOf(tc.naming, tc.servers), "git-hub"); got != tc.want {
			t.Errorf("%s with %d servers: %q, want %q", tc.naming, tc.servers, got, tc.want)
		}
		uri := qualifySkillURI("skill://acme/refunds/SKILL.md", tc.want)
		if tc.want == "" {
			if uri != "skill://acme/refunds/SKILL.md" {
				t.Errorf("unqualified: %s", uri)
			}
			continue
		}
		label, orig, ok := registry.UnqualifyURI(uri)
		if !ok || label != tc.want || orig != "skill://acme/refunds/SKILL.md" {
			t.Errorf("%s: %q %q %v", uri, label, orig, ok)
		}
	}
}

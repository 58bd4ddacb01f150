package registry

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRewriteSkill(t *testing.T) {
	t.Parallel()
	q := func(u string) string { s, _ := QualifyURI(u, "mcp__a"); return s }
	for _, tc := range []struct {
		name, entry, want, err string
	}{
		{"files", `{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x","description":"d"},"resources":[{"uri":"skill://x/SKILL.md","digest":"sha256:00","size":3}]}`,
			`{"uri":"skill://mcp__a/x/SKILL.md","frontmatter":{"name":"x","description":"d"},"resources":[{"digest":"sha256:00","size":3,"uri":"skill://mcp__a/x/SKILL.md"}]}`, ""},
		{"dynamic", `{"uri":"github://o/r/x/SKILL.md","frontmatter":{"name":"x"},"resources":"dynamic"}`,
			`{"uri":"github://mcp__a/o/r/x/SKILL.md","frontmatter":{"name":"x"},"resources":"dynamic"}`, ""},
		// (Member order and values kept; encoding/json compacts the
		// whitespace of raw values.)
		{"frontmatter verbatim", `{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x", "z":1,"a":[2],"b":"\u00e9"},"resources":"dynamic"}`,
			`{"uri":"skill://mcp__a/x/SKILL.md","frontmatter":{"name":"x","z":1,"a":[2],"b":"\u00e9"},"resources":"dynamic"}`, ""},
		{"no uri", `{"frontmatter":{}}`, "", "without a uri"},
		{"frontmatter not an object", `{"uri":"skill://x/SKILL.md","frontmatter":"x"}`, "", "not an object"},
		{"resources of another kind", `{"uri":"skill://x/SKILL.md","frontmatter":{},"resources":3}`, "", "neither"},
		{"a resource without a uri", `{"uri":"skill://x/SKILL.md","frontmatter":{},"resources":[{}]}`, "", "without a uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Skill
			if err := json.Unmarshal([]byte(tc.entry), &s); err != nil {
				t.Fatal(err)
			}
			got, err := RewriteSkill(&s, q)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
			if s.URI == got.URI {
				t.Error("the original entry was changed")
			}
		})
	}
}

func TestQualifyURI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ uri, label, want string }{
		{"skill://git-workflow/SKILL.md", "github", "skill://github/git-workflow/SKILL.md"},
		{"skill://acme/billing/refunds/SKILL.md", "mcp__x", "skill://mcp__x/acme/billing/refunds/SKILL.md"},
		{"not-a-uri", "x", "not-a-uri"},
	} {
		got, _ := QualifyURI(tc.uri, tc.label)
		if got != tc.want {
			t.Errorf("QualifyURI(%q, %q) = %q, want %q", tc.uri, tc.label, got, tc.want)
		}
	}
	for _, bad := range []string{"skill://", "skill://x", "skill://x/", "://x/y", "x/y"} {
		if l, o, ok := UnqualifyURI(bad); ok {
			t.Errorf("UnqualifyURI(%q) = %q %q", bad, l, o)
		}
	}
}

// FuzzRewriteSkill: an upstream's skill entry never panics the rewrite,
// and a rewritten entry keeps its frontmatter's bytes and names, in each
// of its URIs, what UnqualifyURI maps back to the server's own.
func FuzzRewriteSkill(f *testing.F) {
	f.Add([]byte(`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x","description":"d"},"resources":[{"uri":"skill://x/SKILL.md","digest":"sha256:00","size":3}]}`))
	f.Add([]byte(`{"uri":"skill://x/SKILL.md","frontmatter":{},"resources":"dynamic"}`))
	f.Add([]byte(`{"uri":"a","frontmatter":{},"resources":[{"uri":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Skill
		if json.Unmarshal(b, &s) != nil {
			return
		}
		got, err := RewriteSkill(&s, func(u string) string { q, _ := QualifyURI(u, "srv"); return q })
		if err != nil {
			return
		}
		if string(got.Frontmatter) != string(s.Frontmatter) {
			t.Fatalf("frontmatter changed: %s -> %s", s.Frontmatter, got.Frontmatter)
		}
		if strings.Contains(s.URI, "://") {
			if _, orig, ok := UnqualifyURI(got.URI); ok && orig != s.URI && !strings.HasSuffix(s.URI, "://") {
				t.Fatalf("uri %q -> %q -> %q", s.URI, got.URI, orig)
			}
		}
	})
}

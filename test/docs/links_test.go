package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// TestNoLinkOutsideRepository: README.md, CHANGELOG.md and every page
// under docs/ link only to files of the repository, and only to headings
// that exist; nothing names ../shared.
func TestNoLinkOutsideRepository(t *testing.T) {
	root := testbin.Root()
	files, err := MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d Markdown files found: %v", len(files), files)
	}
	for _, f := range files {
		probs, err := CheckLinks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Error(p)
		}
	}
}

// TestCheckLinksFinds: the checker reports each kind of bad link (so that
// TestNoLinkOutsideRepository can fail), and accepts good ones.
func TestCheckLinksFinds(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/page.md", "# Page\n\n## Sharing the gateway: OAuth, per-user views\n\n## Sharing the gateway: OAuth, per-user views\n")
	write("CHANGELOG.md", "# Changelog\n")
	for _, tc := range []struct {
		name, text string
		bad        bool
	}{
		{"relative file", "see [p](docs/page.md)", false},
		{"relative anchor", "see [p](docs/page.md#sharing-the-gateway-oauth-per-user-views)", false},
		{"repeated heading's anchor", "see [p](docs/page.md#sharing-the-gateway-oauth-per-user-views-1)", false},
		{"own anchor", "# Top\n\nsee [t](#top)", false},
		{"reference definition", "see [p]\n\n[p]: CHANGELOG.md", false},
		{"link in code", "```sh\necho [x](https://example.com)\n```\n`[x](https://example.com)`", false},
		{"https", "see [x](https://example.com/doc)", true},
		{"http reference", "[x]: http://example.com", true},
		{"autolink", "see <https://example.com>", true},
		{"html", `<a href="https://example.com">x</a>`, true},
		{"shared", "see [s](../shared/notes.md)", true},
		{"shared in code", "`../shared/x.md`", true},
		{"outside", "see [x](../other/README.md)", true},
		{"missing file", "see [x](docs/nope.md)", true},
		{"missing anchor", "see [x](docs/page.md#nope)", true},
		{"absolute", "see [x](/etc/passwd)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("README.md", tc.text+"\n")
			probs, err := CheckLinks(root, "README.md")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(probs) > 0; got != tc.bad {
				t.Errorf("problems %v, want bad=%v", probs, tc.bad)
			}
		})
	}
}

// TestSlug: GitHub's anchors of the headings these pages use.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Sharing the gateway: OAuth, per-user views, audit, rate limits": "sharing-the-gateway-oauth-per-user-views-audit-rate-limits",
		"Enterprise-Managed Authorization (`plugins/auth-xaa`)":          "enterprise-managed-authorization-pluginsauth-xaa",
		"The gateway's relay path":                                       "the-gateways-relay-path",
		" What a party with access to Redis can and cannot do":           "what-a-party-with-access-to-redis-can-and-cannot-do",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// maxREADMELines is the README's budget: a newcomer reads it in minutes;
// the reference is docs/.
const maxREADMELines = 250

// TestREADMEIsShort: README.md stays within maxREADMELines and names what a
// newcomer needs: install, the two commands, connecting each client, a
// first server (from the registry too), the ask default, the docs index and
// the status.
func TestREADMEIsShort(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(testbin.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	if n := strings.Count(s, "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines; at most %d (move detail to docs/)", n, maxREADMELines)
	}
	for _, want := range []string{
		"make install", "make run", "make test",
		"mcphost client connect claude-code", "mcphost client connect claude-desktop", "mcphost client connect cursor",
		"mcphost client connect vscode", "mcphost client connect gemini", "mcphost client connect codex",
		"--http http://127.0.0.1:8931/mcp", "MCPHOST_SERVE_TOKEN",
		"mcphost import claude-desktop", "mcphost server add", "mcphost registry search", "--from-registry",
		"permissions { allow = [", "docs/README.md", "## Status", "CHANGELOG.md",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("README.md does not mention %q", want)
		}
	}
}

// TestNoStaleLines: lines the first-hour review (issue 37) found stale stay
// gone from README.md, CHANGELOG.md and docs/.
func TestNoStaleLines(t *testing.T) {
	root := testbin.Root()
	files, err := MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	stale := []string{
		"(planned)",                       // the LLM export is built
		"a later milestone",               // OAuth is built
		"validating inbound OAuth tokens", // inbound OAuth is built (issue 14)
		"SECURITY.md",                     // not in the repository
	}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, s := range stale {
				if strings.Contains(line, s) {
					t.Errorf("%s:%d: stale: %q", f, i+1, s)
				}
			}
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const regenerate = "regenerate it with `make docs` (go run ./internal/testing/clidocs)"

// TestCLIReferenceCurrent fails when docs/cli is not what the generator
// writes for the current commands: a flag, command or help text changed
// without the reference.
func TestCLIReferenceCurrent(t *testing.T) {
	want := t.TempDir()
	if err := Write(want); err != nil {
		t.Fatal(err)
	}
	checked := filepath.Join("..", "..", "..", "docs", "cli")
	if diffs := compareDirs(t, want, checked); len(diffs) > 0 {
		for _, d := range diffs {
			t.Error(d)
		}
		t.Fatalf("docs/cli is not current: %s", regenerate)
	}
}

// TestCLIReferenceSameEverywhere: the reference does not depend on the
// machine's environment (home directory, variables, working directory).
func TestCLIReferenceSameEverywhere(t *testing.T) {
	a := t.TempDir()
	if err := Write(a); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("APPDATA", filepath.Join(home, "appdata"))
	t.Setenv("MCPHOST_LOG_LEVEL", "debug")
	t.Chdir(home)
	b := t.TempDir()
	if err := Write(b); err != nil {
		t.Fatal(err)
	}
	for _, d := range compareDirs(t, a, b) {
		t.Error(d)
	}
}

// TestCompareDirsDetects: the comparison reports a changed, a missing and
// an extra file (so that TestCLIReferenceCurrent can fail).
func TestCompareDirsDetects(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "mcphost.md", "x")
	write(b, "mcphost.md", "y")
	write(a, "mcphost_new.md", "x")
	write(b, "mcphost_gone.md", "x")
	if got := compareDirs(t, a, b); len(got) != 3 {
		t.Fatalf("got %d differences, want 3: %q", len(got), got)
	}
}

// compareDirs lists how the mcphost*.md files of got differ from want's.
func compareDirs(t *testing.T, want, got string) []string {
	t.Helper()
	read := func(dir string) map[string]string {
		files, err := filepath.Glob(filepath.Join(dir, "mcphost*.md"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m[filepath.Base(f)] = string(b)
		}
		return m
	}
	w, g := read(want), read(got)
	var diffs []string
	for name, text := range w {
		switch old, ok := g[name]; {
		case !ok:
			diffs = append(diffs, "docs/cli/"+name+": missing")
		case old != text:
			diffs = append(diffs, "docs/cli/"+name+": differs from the commands' help")
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			diffs = append(diffs, "docs/cli/"+name+": no such command any more")
		}
	}
	slices.Sort(diffs)
	return diffs
}

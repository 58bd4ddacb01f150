package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootHoldsTheModule: Root is the module's root, wherever the package
// lives (it once pointed into internal/ after a move).
func TestRootHoldsTheModule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(Root(), "go.mod"))
	if err != nil {
		t.Fatalf("Root() = %s: %v", Root(), err)
	}
	if want := "module github.com/mcphost/mcphost\n"; len(b) < len(want) || string(b[:len(want)]) != want {
		t.Errorf("Root() = %s holds another module: %.60q", Root(), b)
	}
	if _, err := os.Stat(filepath.Join(Root(), "cmd", "mcphost")); err != nil {
		t.Errorf("Root() = %s: %v", Root(), err)
	}
}

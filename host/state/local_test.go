package state_test

import (
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/host/state/statetest"
)

// TestLocal holds Local to the behaviour every backend shares, with its
// tokens in memory and in files.
func TestLocal(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tokens func(t *testing.T) auth.Store
	}{
		{"MemoryTokens", func(*testing.T) auth.Store { return nil }},
		{"FileTokens", func(t *testing.T) auth.Store { return &auth.FileStore{Dir: filepath.Join(t.TempDir(), "tokens")} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			statetest.Run(t, func(t *testing.T) state.Backend {
				l, err := state.NewLocal(tt.tokens(t), filepath.Join(t.TempDir(), "pins.json"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				return l
			})
		})
	}
}

package plugins

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckLocationOwner: a plugin binary or directory that belongs to
// another user is refused before it runs.
func TestCheckLocationOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("creating a file owned by another user needs root (CI runs as root)")
	}
	t.Parallel()
	for _, tc := range []struct {
		name     string
		chownDir bool
		chownBin bool
		wantErr  bool
	}{
		{name: "own", wantErr: false},
		{name: "binary of another user", chownBin: true, wantErr: true},
		{name: "directory of another user", chownDir: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "plugins")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "p")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.chownBin {
				os.Chown(bin, 12345, 12345)
			}
			if tc.chownDir {
				os.Chown(dir, 12345, 12345)
			}
			err := CheckLocation(bin)
			if got := errors.Is(err, ErrUnsafeLocation); got != tc.wantErr {
				t.Errorf("CheckLocation = %v, want unsafe %v", err, tc.wantErr)
			}
		})
	}
}

package plugins

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/supervisor"
)

// TestPrivateCopy: the private copy is hashed as it is written and kept
// only when it matches the pin; a restart runs it only while it is the same
// file, unchanged (written to, or replaced by another file, it is not).
func TestPrivateCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "plugin")
	body := []byte("#!/bin/sh\necho plugin\n")
	if err := os.WriteFile(src, body, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	r := &Runtime{runDir: &supervisor.RunDir{Path: t.TempDir()}}
	p := &config.Plugin{Name: "p", Path: src}

	if _, _, err := r.copyBinary(p, make([]byte, sha256.Size)); !errors.Is(err, goplugin.ErrChecksumsDoNotMatch) {
		t.Fatalf("a copy that does not match the pin: %v", err)
	}
	if left, _ := os.ReadDir(r.runDir.Path); len(left) != 0 {
		t.Fatalf("a refused copy was left behind: %v", left)
	}

	exe, info, err := r.copyBinary(p, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o500 {
		t.Errorf("the copy's mode is %v, want 0500", info.Mode().Perm())
	}
	if !unchanged(exe, info) {
		t.Fatal("an untouched copy counts as changed")
	}

	os.Chmod(exe, 0o700)
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho swapped\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if unchanged(exe, info) {
		t.Error("a copy written to counts as unchanged")
	}

	exe, info, err = r.copyBinary(p, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(exe)
	if err := os.WriteFile(exe, body, 0o500); err != nil { // same bytes, another file
		t.Fatal(err)
	}
	if unchanged(exe, info) {
		t.Error("another file at the copy's path counts as unchanged")
	}
}

package plugins

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
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

// TestCachedCopy: a verified copy is kept in the cache directory across
// runtimes and used while it and its source are as they were hashed; an
// edited source is hashed again (and refused when it no longer matches its
// pin); a copy written to is replaced; copies of other pins are removed; a
// cache directory open to others is not used.
func TestCachedCopy(t *testing.T) {
	if _, ok := identity(mustStat(t, t.TempDir())); !ok {
		t.Skip("no file identity on this system: nothing is cached")
	}
	src := filepath.Join(t.TempDir(), "plugin")
	body := []byte("#!/bin/sh\necho plugin\n")
	if err := os.WriteFile(src, body, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	cache := filepath.Join(t.TempDir(), "cache")
	p := &config.Plugin{Name: "p", Path: src}
	runtime := func(dir string) *Runtime {
		return &Runtime{runDir: &supervisor.RunDir{Path: t.TempDir()}, opts: Options{CacheDir: dir}, log: hclog.NewNullLogger()}
	}
	oldPin := filepath.Join(cache, cacheName("p", make([]byte, sha256.Size)))
	os.MkdirAll(cache, 0o700)
	os.WriteFile(oldPin, body, 0o500)

	first, info, err := runtime(cache).privateCopy(p, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(first) != cache {
		t.Fatalf("the copy %s is not in the cache", first)
	}
	if _, err := os.Stat(oldPin); !os.IsNotExist(err) {
		t.Error("the copy of another pin was kept")
	}
	again, info2, err := runtime(cache).privateCopy(p, sum[:])
	if err != nil || again != first || !os.SameFile(info, info2) || !info2.ModTime().Equal(info.ModTime()) {
		t.Fatalf("a second runtime did not use the cached copy: %s %v", again, err)
	}

	// The source rewritten (same bytes): hashed again, still good.
	if err := os.WriteFile(src, body, 0o755); err != nil {
		t.Fatal(err)
	}
	touched := time.Now().Add(time.Second)
	os.Chtimes(src, touched, touched)
	recopied, info3, err := runtime(cache).privateCopy(p, sum[:])
	if err != nil || recopied != first || os.SameFile(info, info3) {
		t.Fatalf("an edited source's copy was not made again: %v", err)
	}
	// The source changed: refused.
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho other\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runtime(cache).privateCopy(p, sum[:]); !errors.Is(err, goplugin.ErrChecksumsDoNotMatch) {
		t.Fatalf("a changed source: %v", err)
	}
	os.WriteFile(src, body, 0o755)
	good, goodInfo, err := runtime(cache).privateCopy(p, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	// The cached copy written to: replaced.
	os.Chmod(good, 0o700)
	os.WriteFile(good, []byte("#!/bin/sh\necho swapped\n"), 0o700)
	fixed, fixedInfo, err := runtime(cache).privateCopy(p, sum[:])
	if err != nil || os.SameFile(goodInfo, fixedInfo) && fixedInfo.ModTime().Equal(goodInfo.ModTime()) {
		t.Fatalf("a cached copy written to was used: %v", err)
	}
	if b, _ := os.ReadFile(fixed); string(b) != string(body) {
		t.Fatalf("the cached copy holds %q", b)
	}

	open := filepath.Join(t.TempDir(), "open")
	os.MkdirAll(open, 0o755)
	os.Chmod(open, 0o755)
	exe, _, err := runtime(open).privateCopy(p, sum[:])
	if err != nil || filepath.Dir(exe) == open {
		t.Fatalf("a cache directory open to others was used: %s %v", exe, err)
	}
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

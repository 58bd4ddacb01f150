package supervisor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/host/supervisor/internal/reexec"
)

// RunDir is a host's private (0700) directory in os.TempDir, named
// PREFIX-RANDOM. The host holds an exclusive lock on a file inside for its
// whole lifetime, so another host can tell a dead host's directory (lock
// free) from a live one's. The directory appears under its final name only
// once it is locked.
type RunDir struct {
	// Path is the directory.
	Path string
	lock *os.File
}

// NewRunDir removes the stale run directories named PREFIX-* (see
// RemoveStaleRunDirs), then creates and locks a new one.
func NewRunDir(prefix string) (*RunDir, error) {
	RemoveStaleRunDirs(prefix)
	tmp := os.TempDir()
	// Made and locked under a name the cleanup never matches, then renamed.
	staging, err := os.MkdirTemp(tmp, "."+prefix+"-new-")
	if err != nil {
		return nil, fmt.Errorf("creating a run directory: %w", err)
	}
	fail := func(err error) (*RunDir, error) {
		os.RemoveAll(staging)
		return nil, fmt.Errorf("creating a run directory: %w", err)
	}
	if err := os.Chmod(staging, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.OpenFile(filepath.Join(staging, reexec.LockName), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fail(err)
	}
	if err := reexec.LockFile(f); err != nil {
		f.Close()
		return fail(err)
	}
	for range 10 {
		var rnd [8]byte
		rand.Read(rnd[:])
		path := filepath.Join(tmp, prefix+"-"+hex.EncodeToString(rnd[:]))
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if !reexec.LockSurvivesRename {
			f.Close()
		}
		if err = os.Rename(staging, path); err == nil {
			if !reexec.LockSurvivesRename {
				if f, err = os.Open(filepath.Join(path, reexec.LockName)); err != nil {
					os.RemoveAll(path)
					return nil, fmt.Errorf("creating a run directory: %w", err)
				}
			}
			return &RunDir{Path: path, lock: f}, nil
		}
		if !reexec.LockSurvivesRename {
			if f, err = os.Open(filepath.Join(staging, reexec.LockName)); err != nil {
				return fail(err)
			}
		}
	}
	f.Close()
	return fail(errors.New("no free name"))
}

// Close removes the directory and releases the lock.
func (d *RunDir) Close() error {
	err := os.RemoveAll(d.Path)
	d.lock.Close()
	return err
}

// RemoveStaleRunDirs removes the directories PREFIX-* in os.TempDir that
// belong to the current user and whose host is dead (their lock is free). A
// directory without a lock file (made by an older mcphost) is left alone:
// there is no telling whether its host lives. It returns what it removed.
func RemoveStaleRunDirs(prefix string) []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"-*"))
	var removed []string
	for _, dir := range dirs {
		if reexec.RemoveIfStale(dir) {
			removed = append(removed, dir)
		}
	}
	return removed
}

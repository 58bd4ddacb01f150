//go:build unix

package config

import (
	"os"
	"syscall"
)

// CheckOwner returns an error unless path (a file or directory, not
// followed if it is a symlink) belongs to the current user or to root.
// Plugin directories, plugin binaries, lock files and project files written
// by another user of the machine (e.g. in a shared /tmp) are not trusted.
func CheckOwner(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := uint32(os.Getuid()); sys.Uid != uid && sys.Uid != 0 {
		return &OwnerError{Path: path, UID: int(sys.Uid)}
	}
	return nil
}

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

// OpenTo reports whether fi's permission bits grant any of mask (e.g.
// 0o077: group or others may access it; 0o022: they may write it).
func OpenTo(fi os.FileInfo, mask os.FileMode) bool { return fi.Mode().Perm()&mask != 0 }

// Executable reports whether the file fi (named name) may be run.
func Executable(name string, fi os.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }

// PluginName is the plugin name of an executable file's name.
func PluginName(file string) string { return file }

// fileOwner returns the user ID that owns fi's file.
func fileOwner(fi os.FileInfo) (uid int, ok bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}

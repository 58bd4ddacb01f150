//go:build !unix

package config

import (
	"os"
	"path/filepath"
	"strings"
)

// CheckOwner returns nil: file ownership by user ID is a Unix notion. On
// Windows the plugin directory's ACLs are the administrator's to set.
func CheckOwner(string) error { return nil }

// OpenTo reports false: without Unix permission bits (on Windows access is
// by ACL, and Go reports every file as 0666 and every directory as 0777),
// the files mcphost keeps private (tokens, secrets, its config directory)
// rely on the user profile's ACL, which grants the user alone.
func OpenTo(os.FileInfo, os.FileMode) bool { return false }

// Executable reports whether the file named name may be run: on Windows,
// an .exe.
func Executable(name string, _ os.FileInfo) bool {
	return strings.EqualFold(filepath.Ext(name), ".exe")
}

// PluginName is the plugin name of an executable file's name: without .exe.
func PluginName(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file))
}

// fileOwner reports no owner: file ownership by user ID is a Unix notion
// (on Windows the user profile's ACL keeps the user's files).
func fileOwner(os.FileInfo) (uid int, ok bool) { return 0, false }

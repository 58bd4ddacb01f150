//go:build unix

package plugins

import (
	"fmt"
	"os"
	"syscall"
)

// identity is a file's device, inode, size, modification time, mode and
// change time (which no one but root can set: any write, chmod or rename
// since shows).
func identity(fi os.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d %d %d %d %o %d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), fi.Mode(), ctime(st)), true
}

// privateDir checks that dir is a directory (not a symlink) of this user's
// that no one else can write.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to group or others (%v)", dir, fi.Mode().Perm())
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s is not the user's", dir)
	}
	return nil
}

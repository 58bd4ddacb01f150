//go:build unix

package supervisor

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockSurvivesRename: the directory can be renamed with the lock held.
const lockSurvivesRename = true

func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// removeIfStale removes dir if it is a directory (not a symlink) of the
// current user's whose lock file is not locked, holding the lock meanwhile.
func removeIfStale(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if lockFile(f) != nil {
		return false // its host is alive
	}
	return os.RemoveAll(dir) == nil
}

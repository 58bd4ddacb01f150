//go:build unix

package reexec

import (
	"os"
	"syscall"
)

// LockSurvivesRename: a directory can be renamed with the lock held.
const LockSurvivesRename = true

// LockFile takes an exclusive lock on f without waiting.
func LockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// RemoveIfStale removes dir if it is a directory (not a symlink) of the
// current user's whose lock file is not locked, holding the lock meanwhile.
func RemoveIfStale(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return false
	}
	f, err := os.OpenFile(dir+"/"+LockName, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if LockFile(f) != nil {
		return false // its host is alive
	}
	return os.RemoveAll(dir) == nil
}

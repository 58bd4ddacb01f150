//go:build unix

package host_test

import "syscall"

// setUmask sets the process's umask and returns a function restoring it.
func setUmask(mask int) (restore func()) {
	old := syscall.Umask(mask)
	return func() { syscall.Umask(old) }
}

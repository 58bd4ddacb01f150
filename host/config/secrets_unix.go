//go:build unix

package config

import (
	"errors"
	"os"
	"syscall"
)

// openNoFollow opens the file p for reading unless it is a symbolic link
// (errSymlink), and without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	// ELOOP on Linux and macOS; FreeBSD says EMLINK.
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		return nil, errSymlink
	}
	return f, err
}

//go:build !unix

package config

import (
	"io/fs"
	"os"
)

// openNoFollow opens the file p for reading unless it is a symbolic link
// or another reparse point (a junction, a mount point…): errSymlink.
// Without O_NOFOLLOW, the file is looked at (Lstat) first and must be the
// one opened.
func openNoFollow(p string) (*os.File, error) {
	before, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if before.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, errSymlink
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, errSymlink // replaced between the look and the open
	}
	return f, nil
}

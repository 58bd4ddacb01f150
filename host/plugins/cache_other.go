//go:build !unix

package plugins

import (
	"errors"
	"os"
)

// identity: no device and inode here, so nothing is cached (see cache.go).
func identity(os.FileInfo) (string, bool) { return "", false }

func privateDir(string) error { return errors.New("no private cache directory on this system") }

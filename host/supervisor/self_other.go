//go:build unix && !linux

package supervisor

import "os"

func self() (string, error) { return os.Executable() }

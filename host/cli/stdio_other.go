//go:build !unix

package cli

import (
	"io"
	"os"
)

// pollable returns f: only unix pipes and sockets are made pollable (see
// stdio_unix.go).
func pollable(f *os.File) (io.ReadWriteCloser, bool) { return f, false }

//go:build !unix

package cli

import "os"

// pollable returns f: only unix pipes and sockets are made pollable (see
// stdio_unix.go).
func pollable(f *os.File) *os.File { return f }

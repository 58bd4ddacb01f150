//go:build !unix

package cli

import (
	"os"
	"syscall"
)

var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

func isHangup(os.Signal) bool { return false }

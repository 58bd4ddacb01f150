//go:build unix

package cli

import (
	"os"
	"syscall"
)

var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func isHangup(s os.Signal) bool { return s == syscall.SIGHUP }

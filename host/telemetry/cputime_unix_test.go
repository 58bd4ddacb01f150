//go:build unix

package telemetry

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) this process has used,
// and true; see cputime_other_test.go for the systems without getrusage.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

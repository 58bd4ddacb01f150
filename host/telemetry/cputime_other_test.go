//go:build !unix

package telemetry

import "time"

// processCPU reports false: getrusage is a Unix call, so the benchmarks
// report no CPU time here (see cputime_unix_test.go).
func processCPU() (time.Duration, bool) { return 0, false }

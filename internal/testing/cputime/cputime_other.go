//go:build !unix

package cputime

import "time"

// Process reports false: getrusage is a Unix call, so benchmarks report no
// CPU time here.
func Process() (time.Duration, bool) { return 0, false }

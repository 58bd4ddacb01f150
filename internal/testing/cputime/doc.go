// Package cputime measures this process's CPU time, for benchmarks that
// report CPU per operation.
package cputime

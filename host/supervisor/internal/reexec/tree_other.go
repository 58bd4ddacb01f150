//go:build unix && !linux

package reexec

import "syscall"

// Without a subreaper, orphaned descendants go to PID 1; the process group
// is all the supervisor can reach.
func becomeSubreaper() {}

func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func dup2(from, to int) error { return syscall.Dup2(from, to) }

type proc struct{ pid, pgid int }

func descendants() []proc { return nil }

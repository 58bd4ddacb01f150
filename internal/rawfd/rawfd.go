// Package rawfd reads and writes a non-blocking pipe or socket with raw
// system calls, still waiting for it in Go's network poller.
//
// An ordinary read or write of an *os.File enters the system call through
// the scheduler (entersyscall/exitsyscall), which wakes the runtime's
// monitor thread when every P was idle — a futex wake-up, and that thread's
// polling after it, for every message of a gateway that handles one
// message at a time. A read or write of a descriptor in non-blocking mode
// never blocks, so it needs none of that: New's file makes it directly, and
// waits for the descriptor (EAGAIN) in the poller as os.File does.
package rawfd

import (
	"io"
	"os"
)

// New returns what reads and writes f with raw system calls where the
// platform has them (linux) and f's descriptor is in non-blocking mode and
// served by the poller (a pipe or socket from os.Pipe, exec or
// os.NewFile of a non-blocking descriptor); else f itself. Reads and
// writes behave as f's. Close closes f.
//
// f's open file description must be this process's alone (the ends of an
// os.Pipe, a pipe reopened through /proc/self/fd): a raw system call holds
// its thread and scheduler slot until it returns, so if another holder of
// the description put it back in blocking mode, a read would stop the
// process (nothing can preempt it, not even the garbage collector). Never
// call f's Fd, which does that, once New took f.
func New(f *os.File) io.ReadWriteCloser {
	if r := newRaw(f); r != nil {
		return r
	}
	return f
}

//go:build unix

package testredis

import "syscall"

// Pause stops the server's process (SIGSTOP) without closing its
// connections: the kernel still accepts connections, but nothing answers,
// as with a server that hangs or a network that drops packets. Resume
// continues it.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

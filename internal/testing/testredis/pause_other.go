//go:build !unix

package testredis

// Pause is not available here: a process cannot be stopped without its
// knowledge (no SIGSTOP). It does nothing; the tests that need it run on
// Unix systems.
func (s *Server) Pause() {}

// Resume does nothing (see Pause).
func (s *Server) Resume() {}

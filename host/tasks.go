package host

import "context"

// Request sends one request of method that the go-sdk client has no call
// for (the tasks methods) to server, as ctx's user (per-user servers), on
// the session that serves clients of protocol version, and returns the
// server's raw JSON-RPC response; see conn.Manager.Request (name: what the
// request names, e.g. the task id). params are the
// members of its params without braces, caps the client's capabilities
// (sent to a server of 2026-07-28).
func (s *Serving) Request(ctx context.Context, server, version, method, name string, params, caps []byte) ([]byte, error) {
	return s.h.conns.Request(ctx, server, version, method, name, params, caps)
}

// ServerNames are the configured servers' names, in configuration order.
func (s *Serving) ServerNames() []string { return s.h.conns.Names() }

// HasTasks reports whether any server (ctx's user's, for per-user ones)
// declared 2025-11-25's experimental tasks capability at its initialize.
func (s *Serving) HasTasks(ctx context.Context) bool { return s.h.conns.HasTasks(ctx) }

// HasExtension reports whether any server's live session (ctx's user's,
// for per-user servers) declared the extension id in its capabilities
// (2026-07-28's capabilities.extensions).
func (s *Serving) HasExtension(ctx context.Context, id string) bool {
	for _, name := range s.h.conns.Names() {
		if s.h.interceptorOnly(name) {
			continue // (serves no client)
		}
		cs := s.h.conns.Current(ctx, name)
		if cs == nil || cs.InitializeResult() == nil || cs.InitializeResult().Capabilities == nil {
			continue
		}
		if _, ok := cs.InitializeResult().Capabilities.Extensions[id]; ok {
			return true
		}
	}
	return false
}

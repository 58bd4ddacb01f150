package streamable

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/inbound"
)

// sessionFront is what the core of the gateway calls on the front's
// sessions (gateway.SessionFront).
type sessionFront struct{ f *Front }

func (a sessionFront) Principal(ss *mcp.ServerSession) (*inbound.Principal, bool) {
	s, hs := a.f.heldSession(ss.ID())
	if hs == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return hs.principal, true
}

func (a sessionFront) Subscribed(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, uri string, on bool) {
	a.f.subscribed(ctx, req, ss, uri, on)
}

func (a sessionFront) LevelSet(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, level mcp.LoggingLevel) {
	a.f.levelSet(ctx, req, ss, level)
}

func (a sessionFront) Asking(ctx context.Context, ss *mcp.ServerSession) func() {
	return a.f.asking(ctx, ss)
}

func (a sessionFront) Synced() { a.f.recheckSubscriptions() }

func (a sessionFront) Forwarded(kind, _ string, body []byte) { a.f.forwarded(kind, body) }

func (a sessionFront) Leave() { a.f.unsub() }

func (a sessionFront) CloseSessions() { a.f.CloseSessions() }

// CloseSessions ends the front's part in the gateway's sessions: it leaves
// the sessions channel and the gateway, its handlers answer every request
// 503 from then on, and no replay into a session starts any more (those
// running end with their sessions, which the gateway's CloseSessions
// closes first). Gateway.CloseSessions calls it.
func (f *Front) CloseSessions() {
	f.closeOnce.Do(func() {
		f.closed.Store(true)
		f.unsub()
		f.remove()
		f.unheldNotes.Close()
		f.tablesMu.Lock()
		tables := slices.Clone(f.tables)
		f.tablesMu.Unlock()
		for _, s := range tables {
			s.mu.Lock()
			s.closed = true
			s.mu.Unlock()
			s.replaying.Wait() // (replays into sessions end with them, sessionsubs.go)
		}
	})
}

// WaitReplays waits until no request is being replayed into the front's
// sessions (sessionsubs.go): with the local state backend, once a session
// change published before it has been taken, its replays have ended.
func (f *Front) WaitReplays() {
	f.tablesMu.Lock()
	tables := slices.Clone(f.tables)
	f.tablesMu.Unlock()
	for _, s := range tables {
		s.replaying.Wait()
	}
}

package serve

import "slices"

// SetSyncHook sets the function Sync calls at its points: "wait" when it
// must wait for another Sync to end, "read" once it has read the
// registry's tools. Set it before the gateway's first Sync.
func SetSyncHook(g *Gateway, f func(point string)) { g.exposed.syncHook = f }

// LogSessionID is how logs, audit lines and spans name session id.
func LogSessionID(id string) string { return logSessionID(id) }

// WaitReplays waits until no request is being replayed into g's sessions
// (sessionsubs.go): with the local backend, a change published before it
// is called has been taken and its replays have ended.
func WaitReplays(g *Gateway) {
	g.tablesMu.Lock()
	tables := slices.Clone(g.tables)
	g.tablesMu.Unlock()
	for _, s := range tables {
		s.replaying.Wait()
	}
}

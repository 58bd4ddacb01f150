package serve

// SetSyncHook sets the function Sync calls at its points: "wait" when it
// must wait for another Sync to end, "read" once it has read the
// registry's tools. Set it before the gateway's first Sync.
func SetSyncHook(g *Gateway, f func(point string)) { g.exposed.syncHook = f }

// LogSessionID is how logs, audit lines and spans name session id.
func LogSessionID(id string) string { return logSessionID(id) }

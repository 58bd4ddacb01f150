package gateway

// syncLoop keeps what is served in sync with the registry until Close.
func (g *Gateway) syncLoop() {
	defer close(g.loopDone)
	for {
		select {
		case <-g.life.Done():
			return
		case <-g.changed:
			for _, p := range g.Sync(g.life) {
				g.log.Warn("registry problem", "server", p.Server, "detail", p.Detail)
			}
		}
	}
}

// Close releases what the gateway holds: it stops the loop that keeps it in
// sync with the registry, cancels the logins it runs, ends every session and
// held call (CloseSessions), and leaves the shared state's channels and the
// host's registry and notifications. It returns once those goroutines of
// the gateway have ended; a graceful shutdown calls Drain first, and stops
// the HTTP servers that serve its fronts' Handlers. Close is idempotent; it returns
// nil.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.endLife()
		<-g.loopDone
		g.tasks.wait()
		g.logins.close()
		g.CloseSessions()
		g.leaveHost()
		g.userChanges.close(g.log)
		g.userUpdates.close(g.log)
		g.cancelAbort()
	})
	return nil
}

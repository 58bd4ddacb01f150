package serve

import (
	"context"

	"github.com/mcphost/mcphost/host/conn"
)

// Connecting at start: the gateway serves at once, what is connected, and
// each server as it connects — as a client connected to the servers
// directly would see them come — rather than keep its clients waiting for
// the slowest server (up to its connect_timeout) before it answers their
// initialize.

// ConnectAll connects every active server in the background, as
// host.Host.ConnectAll does, and returns at once; progress, if set, is told
// of each server as it settles (connected or failed). Until then, Sync
// passes the servers still connecting over (so that it does not wait for
// them); each is synced in as it settles, and the sessions told by
// list_changed (the gateway's capabilities announce it for tools, prompts
// and resources). The returned channel is closed once every server has
// settled, or ctx is done; the caller waits for it before closing the host.
func (g *Gateway) ConnectAll(ctx context.Context, progress func(name string, st conn.Status)) <-chan struct{} {
	g.starting.Store(true)
	done := make(chan struct{})
	go func() { // owned by the caller, who waits for done
		defer close(done)
		g.h.ConnectAll(ctx, func(name string, st conn.Status) {
			if progress != nil {
				progress(name, st)
			}
			g.resync()
		})
		g.starting.Store(false)
		g.resync() // (servers ConnectAll does not connect, such as token_exchange ones, are listed as before)
	}()
	return done
}

// resync asks the Run loop for a Sync.
func (g *Gateway) resync() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// settled is servers without those still connecting at start (see
// ConnectAll).
func (g *Gateway) settled(servers []string) []string {
	if !g.starting.Load() {
		return servers
	}
	pending := map[string]bool{}
	for _, st := range g.h.Connections().Status() {
		if st.State == conn.StatePending {
			pending[st.Name] = true
		}
	}
	out := servers[:0:0]
	for _, s := range servers {
		if !pending[s] {
			out = append(out, s)
		}
	}
	return out
}

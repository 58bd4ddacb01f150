package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
)

// A server of a version before 2026-07-28 may ask for the client's roots
// outside any call (at session start, say). During a call the request goes
// to the call's client (sessionRequester). Outside one, ListRootsOutside
// answers: on stdio, the front's one client is asked (SetSoleClient;
// waiting for it when the gateway was told to expect it, Options.SoleClient);
// otherwise there is no one client to ask, and the host answers with
// settings { roots } (conn.Manager.SetRoots).

// SetSoleClient names the front's one client (the stdio front's session),
// whose roots a server's roots/list outside any call is answered with;
// nil forgets it.
func (g *Gateway) SetSoleClient(ss *mcp.ServerSession) {
	g.sole.Store(ss)
	if ss != nil && g.soleSeen != nil {
		g.soleOnce.Do(func() { close(g.soleSeen) })
	}
}

// soleWait bounds how long a server's roots/list outside any call waits
// for the sole client (Options.SoleClient) to be served: a server that asks
// at session start may ask before the client's initialize is answered.
const soleWait = 30 * time.Second

// ListRootsOutside answers a server's roots/list outside any call, for
// host.Options.OnListRoots: by asking the sole client when there is one
// and it has roots; nil (leaving it to settings { roots }) otherwise.
func (g *Gateway) ListRootsOutside(ctx context.Context, server string, _ *conn.User) (*mcp.ListRootsResult, error) {
	if g.soleSeen != nil {
		t := time.NewTimer(soleWait)
		defer t.Stop()
		select {
		case <-g.soleSeen:
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the client to ask for its roots (for %s): %w", server, context.Cause(ctx))
		}
	}
	ss := g.sole.Load()
	if ss == nil {
		return nil, nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || (ip.Capabilities.RootsV2 == nil && !ip.Capabilities.Roots.ListChanged) {
		return nil, nil
	}
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("asking the client for its roots (for %s): %w", server, err)
	}
	return res, nil
}

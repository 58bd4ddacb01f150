package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
)

// A server of a version before 2026-07-28 may ask for the client's roots
// outside any call (at session start, say). During a call the request goes
// to the call's client (sessionRequester). Outside one, ListRootsOutside
// answers: on stdio, the front's one client is asked (SetSoleClient;
// waiting for it when the gateway was told to expect it, Options.SoleClient);
// over HTTP, a per-user connection's user's client (UserClients, shared by
// the host's gateways: /mcp and each /mcp/NAME); a shared
// connection has no one client to ask, and the host answers with
// settings { roots } (conn.Manager.SetRoots). That client's own
// notifications/roots/list_changed is passed on to the servers it answers
// for (rootsChanged).

// SetSoleClient names the front's one client (the stdio front's session,
// once initialized: see initialized), whose roots a server's roots/list
// outside any call is answered with; nil forgets it.
func (g *Gateway) SetSoleClient(ss *mcp.ServerSession) {
	g.sole.Store(ss)
	if ss != nil && g.soleSeen != nil {
		g.soleOnce.Do(func() { close(g.soleSeen) })
	}
}

// UserClients are the latest downstream session of each gateway user
// whose client has roots (inbound OAuth), by conn.User ID: a per-user
// connection's server asking outside any call is answered by its user's
// client. One entry per user, replaced by the user's next session; a
// session that ends, or fails to answer, is forgotten. Sessions on other
// replicas are not known: the settings' roots answer then. The host's
// gateways share one (Options.UserClients), so that a user whose client
// uses an endpoint only (/mcp/NAME) is asked as well as one of /mcp,
// whichever gateway the host's OnListRoots asks. The zero value is ready
// to use.
type UserClients struct {
	mu sync.Mutex
	m  map[string]*mcp.ServerSession
	// watched are the sessions whose end is awaited (seen), by user ID.
	watched map[*mcp.ServerSession]string
}

func (u *UserClients) seen(id string, ss *mcp.ServerSession) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]*mcp.ServerSession{}
		u.watched = map[*mcp.ServerSession]string{}
	}
	u.m[id] = ss
	if _, ok := u.watched[ss]; ok {
		return
	}
	u.watched[ss] = id
	// Ends with the session (the gateway's Close ends every session).
	go func() {
		ss.Wait()
		u.ended(ss)
	}()
}

// ended forgets ss, which ended.
func (u *UserClients) ended(ss *mcp.ServerSession) {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := u.watched[ss]
	delete(u.watched, ss)
	if u.m[id] == ss {
		delete(u.m, id)
	}
}

func (u *UserClients) get(id string) *mcp.ServerSession {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.m[id]
}

func (u *UserClients) forget(id string, ss *mcp.ServerSession) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m[id] == ss {
		delete(u.m, id)
	}
}

// noteUserClient records ss as the latest session of the user of
// principal p (callerMiddleware), when its client has roots.
func (g *Gateway) noteUserClient(p *inbound.Principal, req mcp.Request) {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil || !hasRoots(ss) {
		return
	}
	g.userRoots.seen((&conn.User{Issuer: p.Issuer, Subject: p.Subject}).ID(), ss)
}

// hasRoots reports whether ss's client said it has roots.
func hasRoots(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && (ip.Capabilities.RootsV2 != nil || ip.Capabilities.Roots.ListChanged)
}

// userRootsWait bounds how long a user's client is given to answer.
const userRootsWait = 10 * time.Second

// initialized names the session, initialized, the sole client when the
// gateway expects one (Options.SoleClient): its roots can be asked now.
func (g *Gateway) initialized(_ context.Context, req *mcp.InitializedRequest) {
	if g.soleSeen != nil && req.Session != nil {
		g.SetSoleClient(req.Session)
	}
}

// rootsChanged passes a client's notifications/roots/list_changed on to
// the servers whose roots outside a call come from that client: on stdio,
// the sole client's, every shared connection's; the latest session of a
// user (UserClients), that user's per-user connections'. (Other clients'
// roots answer no server outside a call: nothing to tell.)
func (g *Gateway) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	if u, ok := g.rootsOf(req.Session, principalOf(req)); ok {
		g.h.Connections().ClientRootsChanged(u)
	}
}

// rootsOf reports whose roots outside a call the client of ss (of
// principal p, or nil) answers: the sole client's (nil, true), or those of
// the user whose latest session ss is (u, true); none (false) otherwise.
func (g *Gateway) rootsOf(ss *mcp.ServerSession, p *inbound.Principal) (*conn.User, bool) {
	if ss == nil {
		return nil, false
	}
	if ss == g.sole.Load() {
		return nil, true
	}
	if p != nil {
		u := &conn.User{Issuer: p.Issuer, Subject: p.Subject}
		if g.userRoots.get(u.ID()) == ss {
			return u, true
		}
	}
	return nil, false
}

// soleWait bounds how long a server's roots/list outside any call waits
// for the sole client (Options.SoleClient) to be initialized: a server that
// asks at session start may ask before then. (A client of 2026-07-28
// sends no initialize; its servers, in its era, ask for no roots outside
// a call, and one of an earlier version waits this long for no answer.)
const soleWait = 10 * time.Second

// ListRootsOutside answers a server's roots/list outside any call, for
// host.Options.OnListRoots: by asking the sole client when there is one
// and it has roots; for a per-user connection (u), by asking u's latest
// session whose client has roots; nil (leaving it to settings { roots })
// otherwise.
func (g *Gateway) ListRootsOutside(ctx context.Context, server string, u *conn.User) (*mcp.ListRootsResult, error) {
	if u != nil {
		id := u.ID()
		ss := g.userRoots.get(id)
		if ss == nil {
			return nil, nil
		}
		ctx, cancel := context.WithTimeout(ctx, userRootsWait)
		defer cancel()
		res, err := ss.ListRoots(ctx, nil)
		if err != nil {
			g.userRoots.forget(id, ss)
			g.log.Debug("the user's client did not answer roots/list: the settings' roots answer", "server", server, "error", err)
			return nil, nil
		}
		return res, nil
	}
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

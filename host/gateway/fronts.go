package gateway

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/inbound"
)

// SessionFront is a front whose sessions outlive a request and may be
// served by several replicas (the streamable-HTTP front): the core tells
// it what happens on the go-sdk server's sessions that its other replicas
// must learn, and asks it whom a session belongs to. AddSessionFront
// registers one. The core calls every front registered for any session
// (Principal, Subscribed, LevelSet, Asking) or message (Forwarded): each
// acts on its own sessions only and returns at once for the others.
type SessionFront interface {
	// Principal returns whom the latest request of session ss's client
	// was authenticated as; ok is false if ss is not the front's.
	Principal(ss *mcp.ServerSession) (p *inbound.Principal, ok bool)
	// Subscribed tells that ss's client subscribed to uri (on) or
	// unsubscribed from it, with req.
	Subscribed(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, uri string, on bool)
	// LevelSet tells that ss's client set its log level, with req.
	LevelSet(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, level mcp.LoggingLevel)
	// Asking tells that the go-sdk server is about to put a request
	// (elicitation, sampling, roots) to ss's client; done is called once
	// it is answered (nil: not the front's session).
	Asking(ctx context.Context, ss *mcp.ServerSession) (done func())
	// Synced tells that what is served or the rules changed (after each
	// Sync): subscriptions set aside may be tried again.
	Synced()
	// Forwarded is a message another replica passed on to this one
	// (cluster.ForwardChannel) of a kind the core does not take:
	// cluster.ForwardAnswer.
	Forwarded(kind, id string, body []byte)
	// Leave stops taking what other replicas publish about sessions: the
	// first step of Gateway.CloseSessions, before the sessions close.
	Leave()
	// CloseSessions ends the front's part in its sessions, once the go-sdk
	// sessions are closed (Gateway.CloseSessions).
	CloseSessions()
}

// frontSet holds the session fronts registered (AddSessionFront).
type frontSet struct {
	mu   sync.Mutex
	list []SessionFront
}

func (s *frontSet) all() []SessionFront {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

// AddSessionFront registers f; remove undoes it.
func (g *Gateway) AddSessionFront(f SessionFront) (remove func()) {
	g.fronts.mu.Lock()
	g.fronts.list = append(g.fronts.list, f)
	g.fronts.mu.Unlock()
	return func() {
		g.fronts.mu.Lock()
		defer g.fronts.mu.Unlock()
		if i := slices.Index(g.fronts.list, f); i >= 0 {
			g.fronts.list = slices.Delete(g.fronts.list, i, i+1)
		}
	}
}

// sessionPrincipal returns whom ss's client's latest request was
// authenticated as, by the front that holds ss; nil if none does.
func (g *Gateway) sessionPrincipal(ss *mcp.ServerSession) *inbound.Principal {
	if ss.ID() == "" {
		return nil
	}
	for _, f := range g.fronts.all() {
		if p, ok := f.Principal(ss); ok {
			return p
		}
	}
	return nil
}

// subscribed tells the session fronts of a subscription change.
func (g *Gateway) subscribed(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, uri string, on bool) {
	if ss == nil || ss.ID() == "" {
		return // stdio, or a 2026-07-28 client's subscriptions/listen
	}
	for _, f := range g.fronts.all() {
		f.Subscribed(ctx, req, ss, uri, on)
	}
}

// levelSet tells the session fronts of a log level set.
func (g *Gateway) levelSet(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, level mcp.LoggingLevel) {
	if ss.ID() == "" {
		return
	}
	for _, f := range g.fronts.all() {
		f.LevelSet(ctx, req, ss, level)
	}
}

// recheckSubscriptions tells the session fronts that what is served or
// the rules changed.
func (g *Gateway) recheckSubscriptions() {
	for _, f := range g.fronts.all() {
		f.Synced()
	}
}

// sending is the go-sdk server's sending middleware that tells the
// session fronts of the requests put to their sessions' clients.
func (s *frontSet) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "elicitation/create", "sampling/createMessage", "roots/list":
		default:
			return next(ctx, method, req)
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok || ss.ID() == "" {
			return next(ctx, method, req)
		}
		for _, f := range s.all() {
			if done := f.Asking(ctx, ss); done != nil {
				defer done()
				break
			}
		}
		return next(ctx, method, req)
	}
}

// forwarded takes what another replica passed on to this one: a held
// call's retry (heldforward.go), or what a session front takes (a client's
// answer to a request this replica put to it).
func (g *Gateway) forwarded(msg []byte) {
	head, body, ok := bytes.Cut(msg, []byte{'\n'})
	if !ok {
		return
	}
	kind, id, _ := strings.Cut(string(head), " ")
	if g.heldForwarded(kind, id, body) {
		return
	}
	for _, f := range g.fronts.all() {
		f.Forwarded(kind, id, body)
	}
}

// leaveFronts has the session fronts stop taking session changes.
func (g *Gateway) leaveFronts() {
	for _, f := range g.fronts.all() {
		f.Leave()
	}
}

// closeFronts ends the session fronts' part in their sessions.
func (g *Gateway) closeFronts() {
	for _, f := range g.fronts.all() {
		f.CloseSessions()
	}
}

package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2025-11-25 client's resource subscriptions belong to its session, which
// every replica may serve: notifications/resources/updated reach the client
// on its standalone stream (GET), held by whichever replica the balancer
// sent the GET to, and that replica must be subscribed for the client. So a
// subscription made on one replica is recorded in the session's record and
// published ("sub SID URI", "unsub SID URI"); every replica holding the
// session replays it into its own go-sdk session (which subscribes
// upstream on its own connection), and one that rebuilds the session
// replays those of the record. Each replica's upstream sends it the
// updates; the one holding the client's stream delivers them.

// subscribed records a subscription (on) or unsubscription the client of
// session ss made on this replica, for the other replicas; one replayed
// from another replica is only noted.
func (g *Gateway) subscribed(ctx context.Context, ss *mcp.ServerSession, uri string, on bool) {
	if ss == nil {
		return
	}
	s, hs := g.heldSession(ss.ID())
	if hs == nil {
		return // stdio, or a 2026-07-28 client's subscriptions/listen
	}
	s.mu.Lock()
	was := hs.subs[uri]
	if on {
		if hs.subs == nil {
			hs.subs = map[string]bool{}
		}
		hs.subs[uri] = true
	} else {
		delete(hs.subs, uri)
	}
	replayed := hs.applying > 0
	s.mu.Unlock()
	if replayed || was == on {
		return
	}
	if err := s.writeRecord(ctx, hs, g.levels.of(hs.ss)); err != nil {
		g.log.Warn("recording a session's subscriptions", "error", err)
		return
	}
	kind := "unsub"
	if on {
		kind = "sub"
	}
	s.publishChange(ctx, kind+" "+hs.sid+" "+uri)
}

// subsOf returns the resources hs's client subscribed to, sorted.
func (s *httpSessions) subsOf(hs *httpSession) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for uri := range hs.subs {
		out = append(out, uri)
	}
	slices.Sort(out)
	return out
}

// applySubs makes hs's subscriptions those of its record: the missing ones
// are replayed, those the record no longer has are unsubscribed.
func (s *httpSessions) applySubs(hs *httpSession, uris []string) {
	want := map[string]bool{}
	for _, uri := range uris {
		want[uri] = true
		s.applySub(hs, uri, true)
	}
	for _, uri := range s.subsOf(hs) {
		if !want[uri] {
			s.applySub(hs, uri, false)
		}
	}
}

// applySub replays a subscription (on) or unsubscription another replica's
// client made into hs.
func (s *httpSessions) applySub(hs *httpSession, uri string, on bool) {
	s.mu.Lock()
	has := hs.subs[uri]
	s.mu.Unlock()
	if has == on {
		return
	}
	method := "resources/unsubscribe"
	if on {
		method = "resources/subscribe"
	}
	params, _ := json.Marshal(map[string]string{"uri": uri})
	s.replay(hs, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"mcphost-replay-%d","method":%q,"params":%s}`, s.replays.Add(1), method, params))
}

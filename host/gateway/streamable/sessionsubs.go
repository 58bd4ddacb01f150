package streamable

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/inbound"
)

// A 2025-11-25 client's log level and resource subscriptions belong to its
// session, which every replica may serve: log messages go on the
// replica's own streams, notifications/resources/updated reach the client
// on its standalone stream (GET), held by whichever replica the balancer
// sent the GET to, and that replica must be subscribed for the client.
//
// So each replica keeps the session's state (hs.level, hs.subs: what the
// client asked for, wherever it asked) apart from what its own go-sdk
// session has applied (hs.applied). A change the client makes on one
// replica is written to the session's record and published ("level SID
// LEVEL", "sub SID URI", "unsub SID URI"); every replica holding the
// session takes it into its state at once and replays it into its go-sdk
// session in the background (a subscription subscribes upstream, on that
// replica's own connection), one request at a time per session; a replica
// that rebuilds the session, or that may have missed messages, takes the
// record's state. Records are written from the state, never from what was
// applied: a replay that failed on one replica loses nothing for the
// others. Replayed requests carry a mark of this gateway's (replayHeader),
// so that they are not taken for the client's own and published again.

// replayHeader marks a request replayed into a session (its value is the
// gateway's replayMark, which no client knows).
const replayHeader = "Mcp-Mcphost-Replay"

// replayTimeout bounds one replayed request (an upstream subscribe may
// connect first).
const replayTimeout = 30 * time.Second

// isReplay reports whether req is a request the gateway replayed into its
// session.
func (f *Front) isReplay(req mcp.Request) bool {
	if req == nil {
		return false
	}
	ex := req.GetExtra()
	return ex != nil && ex.Header != nil && ex.Header.Get(replayHeader) == f.replayMark
}

// subscribed records a subscription (on) or unsubscription the client of
// session ss made on this replica, for the other replicas; a replayed one
// is only noted as applied.
func (f *Front) subscribed(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, uri string, on bool) {
	if ss == nil {
		return
	}
	s, hs := f.heldSession(ss.ID())
	if hs == nil {
		return // stdio, or a 2026-07-28 client's subscriptions/listen
	}
	replayed := f.isReplay(req)
	s.mu.Lock()
	setMember(&hs.applied, uri, on)
	was := hs.subs[uri]
	if !replayed {
		setMember(&hs.subs, uri, on)
	}
	s.mu.Unlock()
	if replayed || was == on {
		return
	}
	if err := s.writeRecord(ctx, hs); err != nil {
		f.log.Warn("recording a session's subscriptions", "error", err)
		return
	}
	kind := "unsub"
	if on {
		kind = "sub"
	}
	s.publishChange(ctx, kind+" "+hs.sid+" "+uri)
}

// setMember adds (on) or removes key in *m.
func setMember(m *map[string]bool, key string, on bool) {
	if !on {
		delete(*m, key)
		return
	}
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[key] = true
}

// levelOf returns the log level hs's client set, wherever it set it.
func (s *httpSessions) levelOf(hs *httpSession) mcp.LoggingLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hs.level
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

// adopt makes rec's level and subscriptions hs's state, and has them
// applied.
func (s *httpSessions) adopt(hs *httpSession, rec *sessionRecord) {
	s.mu.Lock()
	hs.level = rec.Level
	hs.subs = nil
	recheckLocked(hs)
	for _, uri := range rec.Subs {
		setMember(&hs.subs, uri, true)
	}
	s.mu.Unlock()
	s.sync(hs)
}

// changedElsewhere takes a change another replica's client made into hs's
// state, and has it applied.
func (s *httpSessions) changedElsewhere(hs *httpSession, kind, arg string) {
	s.mu.Lock()
	recheckLocked(hs)
	switch kind {
	case "level":
		hs.level = mcp.LoggingLevel(arg)
	case "sub", "unsub":
		setMember(&hs.subs, arg, kind == "sub")
	}
	s.mu.Unlock()
	s.sync(hs)
}

// sync has hs's go-sdk session brought to hs's state, in the background:
// one goroutine per session at most, which ends when nothing is left to do
// (the table's replays wait group owns it).
func (s *httpSessions) sync(hs *httpSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if hs.syncing || hs.closing {
		hs.resync = true
		return
	}
	hs.syncing = true
	s.replaying.Add(1)
	go func() {
		defer s.replaying.Done()
		for s.syncOnce(hs) {
		}
	}()
}

// endSyncLocked notes that hs's replay goroutine ended, and lets those
// waiting for it go on (the caller holds s.mu).
func endSyncLocked(hs *httpSession) {
	hs.syncing = false
	if hs.synced != nil {
		close(hs.synced)
		hs.synced = nil
	}
}

// awaitSync waits until hs's go-sdk session has been brought to hs's state
// (no replay goroutine runs for it), at most limit, or until ctx ends.
func (s *httpSessions) awaitSync(ctx context.Context, hs *httpSession, limit time.Duration) {
	s.mu.Lock()
	if !hs.syncing {
		s.mu.Unlock()
		return
	}
	if hs.synced == nil {
		hs.synced = make(chan struct{})
	}
	ch := hs.synced
	s.mu.Unlock()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// syncOnce makes one replayed request that brings hs's go-sdk session
// closer to hs's state, and reports whether there may be more to do.
func (s *httpSessions) syncOnce(hs *httpSession) bool {
	s.mu.Lock()
	var body []byte
	var method, uri string // of a subscription's replay
	rechecks := hs.rechecks
	// setAside puts uri aside, unless the session's subscriptions are to
	// be checked again since (the caller holds s.mu).
	setAside := func() {
		if hs.rechecks == rechecks {
			setMember(&hs.refused, uri, true)
		}
	}
	switch {
	case hs.closing:
	case hs.level != "" && hs.level != s.f.gw.SessionLogLevel(hs.ss):
		params, _ := json.Marshal(map[string]mcp.LoggingLevel{"level": hs.level})
		body = wire.Request(replayID(s.replays.Add(1)), "logging/setLevel", params)
	default:
		method, uri = s.nextSubLocked(hs)
		if method == "" {
			break
		}
		if method == "resources/subscribe" {
			p := hs.principal
			s.mu.Unlock()
			denied, err := s.f.gw.SubscriptionDenied(p, uri)
			s.mu.Lock()
			if err != nil {
				// The client's subscribe was checked on the replica it
				// reached; this one's rules (after a reload, say) may
				// deny the resource to the client, or its lists may not
				// offer it yet: not subscribed here until the rules, the
				// lists or the session's state change.
				setAside()
				s.mu.Unlock()
				why := "no server offers the resource here (yet)"
				if denied {
					why = "the permission rules deny the resource to the session's principal here"
				}
				s.f.log.Debug("a session's subscription is not replayed on this replica", "why", why,
					"session", hs.logID, "uri", uri)
				return true
			}
		}
		params, _ := json.Marshal(map[string]string{"uri": uri})
		body = wire.Request(replayID(s.replays.Add(1)), method, params)
	}
	if body == nil {
		if hs.resync && !hs.closing {
			hs.resync = false
			s.mu.Unlock()
			return true
		}
		endSyncLocked(hs)
		s.mu.Unlock()
		return false
	}
	hs.resync = false
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), replayTimeout)
	defer cancel()
	before := s.replayState(hs)
	s.replay(ctx, hs, body)
	if s.replayState(hs) == before {
		// Not applied (the upstream refused, or timed out): tried again
		// with the next change or record read, not in a loop now; the
		// session's other subscriptions are replayed meanwhile.
		s.mu.Lock()
		defer s.mu.Unlock()
		if method != "" {
			setAside()
			return true
		}
		endSyncLocked(hs)
		return false
	}
	return true
}

// recheckLocked has the subscriptions set aside for hs tried again (the
// caller holds s.mu and syncs hs).
func recheckLocked(hs *httpSession) {
	hs.refused = nil
	hs.rechecks++
}

// seenLocked notes that a request of p (nil: no inbound OAuth) reached hs,
// and reports whether hs's subscriptions set aside are to be tried again:
// p's groups changed (the caller holds s.mu, and syncs hs then).
func (s *httpSessions) seenLocked(hs *httpSession, p *inbound.Principal) bool {
	if p == nil {
		return false
	}
	old := hs.principal
	hs.principal = p // (its groups as its latest token says)
	if old == nil || slices.Equal(old.Groups, p.Groups) || len(hs.refused) == 0 {
		return false
	}
	recheckLocked(hs)
	return true
}

// recheck has every session's subscriptions set aside tried again: the
// rules or the lists changed.
func (s *httpSessions) recheck() {
	s.mu.Lock()
	var again []*httpSession
	for _, hs := range s.bySID {
		if len(hs.refused) > 0 {
			recheckLocked(hs)
			again = append(again, hs)
		}
	}
	s.mu.Unlock()
	for _, hs := range again {
		s.sync(hs)
	}
}

// recheckSubscriptions has the subscriptions set aside in every session
// table tried again.
func (f *Front) recheckSubscriptions() {
	f.tablesMu.Lock()
	tables := slices.Clone(f.tables)
	f.tablesMu.Unlock()
	for _, s := range tables {
		s.recheck()
	}
}

// nextSubLocked returns the method and resource of one subscription hs's
// state and its go-sdk session differ in (those set aside left out), or
// "". The caller holds s.mu.
func (s *httpSessions) nextSubLocked(hs *httpSession) (method, uri string) {
	for u := range hs.subs {
		if !hs.applied[u] && !hs.refused[u] {
			return "resources/subscribe", u
		}
	}
	for u := range hs.applied {
		if !hs.subs[u] && !hs.refused[u] {
			return "resources/unsubscribe", u
		}
	}
	return "", ""
}

// replayState is what a replay may change in hs's go-sdk session: its
// level and applied subscriptions.
func (s *httpSessions) replayState(hs *httpSession) string {
	level := s.f.gw.SessionLogLevel(hs.ss)
	s.mu.Lock()
	defer s.mu.Unlock()
	applied := make([]string, 0, len(hs.applied))
	for u := range hs.applied {
		applied = append(applied, u)
	}
	slices.Sort(applied)
	return fmt.Sprint(level, applied)
}

// replay delivers body, a request another replica's client made, to hs as
// its client would send it, marked as replayed.
func (s *httpSessions) replay(ctx context.Context, hs *httpSession, body []byte) {
	s.injectWith(ctx, hs, body, http.Header{replayHeader: {s.f.replayMark}})
}

// replayID is the raw id of the nth request replayed into a session.
func replayID(n uint64) []byte {
	return strconv.AppendQuote(nil, "mcphost-replay-"+strconv.FormatUint(n, 10))
}

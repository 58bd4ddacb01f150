package streamable

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/internal/rawjson"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// What reaches a replica but belongs to another (scale-out).
//
// A session's requests may land on any replica, but a call in progress is
// the replica's that runs it. When that call asks the client something
// (elicitation, sampling, roots), the client's answer is a POST of its own,
// which the balancer may send to another replica: that replica passes it
// on, through the shared state, to the one that asked, and answers 202 as
// the asker would. The asker is known by the answer's id for the relay's
// requests (mcphost-ask-REPLICA-N-TAG, httpasks.go), and by the record
// ask:<sid> for the go-sdk path's (written while such a request is out,
// askTracking). A client's cancellation of a call (notifications/cancelled)
// is told to every replica holding the session.
//
// What crosses the shared state is sealed (cluster.ForwardPurpose, a key derived
// from MCPHOST_SESSION_KEYS) and bound to what it is for: an answer to its
// kind and the replica it is for, and inside the seal to the session (its
// record's key and principal), the request it answers and the time it was
// sealed; a session change or cancellation (sessions.go, publish) to the
// sessions channel and its time; an ask record to its session. So a reader
// of the shared state sees no session id, answer or cancellation, and a
// party that can write to it cannot answer a request: what does not open,
// is for another replica, is older than cluster.MaxAge, was taken already
// (each message has a random id, remembered while it could be taken), or
// answers no request outstanding on that session of that principal is
// dropped; an ask record older than forwardTTL is not taken. (Such
// a party can still delete the records, and so end sessions and lose
// answers.)
//
// Before anything is published, the replica a response reaches checks that
// it can answer a request out: a relayed call's request id carries a tag
// (a MAC of the session and the id, askTag) that only a replica issues, and
// a go-sdk request is passed on only while the session's ask record says
// one is out, to the replica it names (the last to ask: the go-sdk numbers
// requests from 1 on each replica, so with two asking one session at once
// an answer can reach the other's request of that number), with the
// record's episode, which the asker checks against its requests out; at
// most as many ids as requests went out since the session's asks last
// started from none. Each id is passed on at most once, and so
// is each request id's cancellation: a client's flood of responses or
// cancellations is not multiplied into publishes (ratelimit.go counts them
// against the principal's rate besides).
//
// Nothing is forwarded to a replica that is gone: its calls ended with it,
// and their clients see the calls' streams end.

const (
	// forwardTTL bounds how long an ask's record outlives a replica that
	// died with the ask out.
	forwardTTL = 10 * time.Minute
	// maxForwardedIDs bounds the ids of one session a replica remembers
	// having passed on (answers, cancellations); past it the oldest are
	// forgotten.
	maxForwardedIDs = 256
	// cancelBurst and cancelRate are a session's budget of cancellations
	// passed on to the other replicas (forwardCancel).
	cancelBurst = 32
	cancelRate  = rate.Limit(1)
	// askTagLen is the length of a relayed ask's id tag (bytes of MAC).
	askTagLen = 12
)

// forwardAAD is what a sealed message of kind for target (a replica, a
// channel, a session) is bound to.
func forwardAAD(kind, target string) []byte { return []byte("fwd-" + kind + "\x00" + target) }

// forwardMsg is a client's answer passed on to the replica that asked.
type forwardMsg struct {
	SID  string          `json:"s"`           // the session's record key
	P    string          `json:"p,omitempty"` // its principal (owner)
	ID   string          `json:"i"`           // the id of the request answered
	From string          `json:"f"`           // the replica that passes it on
	T    int64           `json:"t"`           // when it was sealed (Unix ms)
	E    string          `json:"e,omitempty"` // a go-sdk request's: the ask record's episode it was judged by
	N    string          `json:"n"`           // the message's random id (a replay within cluster.MaxAge is dropped)
	Body json.RawMessage `json:"b"`           // the client's response
}

// askRecord is the record ask:<sid>, sealed: which replica has go-sdk
// requests out to the session's client.
type askRecord struct {
	Replica string `json:"r"`
	// Episode is random, new each time the session's requests out start
	// from none; Asked counts the requests put to the client since.
	Episode string `json:"e"`
	Asked   int    `json:"n"`
	// T is when it was written (Unix ms): one older than forwardTTL (a
	// replayed record) is not taken.
	T int64 `json:"t"`
}

// askTag is the tag of a relayed ask's id (askIDPrefix REPLICA-N) on
// session sid, under key.
func askTag(key []byte, sid, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sid))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:askTagLen])
}

// relayAskID returns the id of the relayed ask of this replica numbered n
// on the session sid: its tag names the session.
func (f *Front) relayAskID(sid string, n uint64) string {
	id := askIDPrefix + f.replica + "-" + strconv.FormatUint(n, 10)
	return id + "-" + askTag(f.askIDKeys[0], sid, id)
}

// relayAskOwner returns the replica that issued id, a relayed ask's id on
// session sid, when its tag is valid for that session.
func (f *Front) relayAskOwner(sid, id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, askIDPrefix)
	if !ok {
		return "", false
	}
	i := len(id) - base64.RawURLEncoding.EncodedLen(askTagLen) - 1 // (the tag's length is fixed; it may hold '-')
	owner, _, _ := strings.Cut(rest, "-")
	if i <= len(askIDPrefix) || id[i] != '-' || owner == "" {
		return "", false
	}
	for _, key := range f.askIDKeys { // (the first tags; each checks, for a rotation)
		if hmac.Equal([]byte(id[i+1:]), []byte(askTag(key, sid, id[:i]))) {
			return owner, true
		}
	}
	return "", false
}

// asking records that a go-sdk request is about to be put to ss's client,
// when ss is a session of this front: the ask record of the session
// (ask:SID) says this replica has requests out, so that the client's
// answer, wherever it lands, is passed on here. done ends it (nil: not a
// session of this front's).
func (f *Front) asking(ctx context.Context, ss *mcp.ServerSession) (done func()) {
	s, hs := f.heldSession(ss.ID())
	if hs == nil {
		return nil
	}
	// The record's writes are in order (a later count never
	// overwritten by an earlier one).
	hs.askMu.Lock()
	s.mu.Lock()
	if hs.outAsks == 0 {
		hs.askEpisode, hs.askCount = rand.Text(), 0
	}
	hs.outAsks++
	hs.askCount++
	rec := askRecord{Replica: f.replica, Episode: hs.askEpisode, Asked: hs.askCount, T: time.Now().UnixMilli()}
	s.mu.Unlock()
	b, _ := json.Marshal(&rec)
	if err := f.state.Put(ctx, cluster.AskRecordKey(hs.sid), f.fwdBox.Seal(nil, b, forwardAAD("ask-record", hs.sid)), forwardTTL); err != nil {
		f.log.Warn("recording a request to a client (its answer must reach this replica)", "error", err)
	}
	hs.askMu.Unlock()
	return func() {
		hs.askMu.Lock()
		defer hs.askMu.Unlock()
		s.mu.Lock()
		hs.outAsks--
		last := hs.outAsks == 0
		s.mu.Unlock()
		if last {
			f.state.Delete(context.WithoutCancel(ctx), cluster.AskRecordKey(hs.sid))
		}
	}
}

// heldSession returns the session with id this replica holds, and its
// table, or nils.
func (f *Front) heldSession(id string) (*httpSessions, *httpSession) {
	return f.findSession(func(s *httpSessions) *httpSession { return s.byID[id] })
}

// sessionBySID returns the session whose record's key is sid, that this
// replica holds, and its table, or nils.
func (f *Front) sessionBySID(sid string) (*httpSessions, *httpSession) {
	return f.findSession(func(s *httpSessions) *httpSession { return s.bySID[sid] })
}

// findSession returns the first session of the gateway's tables that pick
// finds (called with that table's lock held), and its table, or nils.
func (f *Front) findSession(pick func(*httpSessions) *httpSession) (*httpSessions, *httpSession) {
	f.tablesMu.Lock()
	defer f.tablesMu.Unlock()
	for _, s := range f.tables {
		s.mu.Lock()
		hs := pick(s)
		s.mu.Unlock()
		if hs != nil {
			return s, hs
		}
	}
	return nil, nil
}

// readAskRecord returns session sid's ask record, or false when there is
// none (or it does not open: not a replica's).
func (f *Front) readAskRecord(ctx context.Context, sid string) (*askRecord, bool) {
	b, err := f.state.Get(ctx, cluster.AskRecordKey(sid))
	if err != nil {
		return nil, false // (no ask out anywhere: the go-sdk session answers)
	}
	plain, err := f.fwdBox.Open(nil, b, forwardAAD("ask-record", sid))
	if err != nil {
		f.log.Warn("a session's ask record does not open (every replica needs the same MCPHOST_SESSION_KEYS): ignored")
		return nil, false
	}
	var rec askRecord
	if json.Unmarshal(plain, &rec) != nil || !cluster.ValidReplica(rec.Replica) {
		return nil, false
	}
	if age := time.Since(time.UnixMilli(rec.T)); age > forwardTTL+cluster.MaxAge || age < -cluster.MaxAge {
		f.log.Warn("a session's ask record is too old (replayed, or the replicas' clocks differ): ignored")
		return nil, false
	}
	return &rec, true
}

// forwardable reports where m, a client's response on session hs,
// goes: to owner, another replica that has the request it answers out
// (id), or nowhere (ok false: this replica's own, or no request out). rec
// is the ask record it was judged by (nil for a relayed ask's).
func (s *httpSessions) forwardable(ctx context.Context, hs *httpSession, m *wire.Message) (owner, id string, rec *askRecord, ok bool) {
	id, ok = responseID(m)
	if !ok {
		return "", "", nil, false
	}
	if strings.HasPrefix(id, askIDPrefix) {
		owner, ok := s.f.relayAskOwner(hs.sid, id)
		if !ok || owner == s.f.replica {
			return "", "", nil, false
		}
		s.mu.Lock()
		done := hs.fwdIDs.has(id)
		s.mu.Unlock()
		return owner, id, nil, !done
	}
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return "", "", nil, false // (the go-sdk's requests have integer ids)
	}
	// The go-sdk numbers a session's requests from 1 on each replica that
	// holds it, so an id does not tell which replica asked: the ask
	// record's last writer did (even when this replica has asks out too).
	rec, ok = s.f.readAskRecord(ctx, hs.sid)
	if !ok || rec.Replica == s.f.replica {
		return "", "", nil, false // (this replica's go-sdk session takes it if its own)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs.fwdEpisode == rec.Episode && (hs.fwdEpisodeIDs[id] || len(hs.fwdEpisodeIDs) >= rec.Asked) {
		return "", "", nil, false // passed on already, or as many as were asked
	}
	return rec.Replica, id, rec, true
}

// markForwarded records that id, answered on hs, was passed on (judged by
// rec, nil for a relayed ask's), and reports whether it was not already.
func (s *httpSessions) markForwarded(hs *httpSession, id string, rec *askRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec == nil {
		if hs.fwdIDs.has(id) {
			return false
		}
		hs.fwdIDs.add(id)
		return true
	}
	if hs.fwdEpisode != rec.Episode {
		hs.fwdEpisode, hs.fwdEpisodeIDs = rec.Episode, map[string]bool{}
	}
	if hs.fwdEpisodeIDs[id] || len(hs.fwdEpisodeIDs) >= rec.Asked {
		return false
	}
	hs.fwdEpisodeIDs[id] = true
	return true
}

// awaited reports whether body, a client's response on session hs,
// answers a request out to that client: this replica's, or another's that
// it would pass on. (Such an answer is never refused by the rate limit.)
// For this replica's go-sdk requests, whose ids it does not know, at most
// as many distinct integer ids as requests went out since its asks last
// started from none are taken for answers, each once.
func (s *httpSessions) awaited(ctx context.Context, hs *httpSession, m *wire.Message) bool {
	id, ok := responseID(m)
	if !ok {
		return false
	}
	s.mu.Lock()
	_, relayed := hs.asks[id]
	goSDK := false
	if !relayed && hs.outAsks > 0 && !strings.HasPrefix(id, askIDPrefix) {
		if _, err := strconv.ParseInt(id, 10, 64); err == nil {
			if hs.awaitEpisode != hs.askEpisode {
				hs.awaitEpisode, hs.awaitIDs = hs.askEpisode, map[string]bool{}
			}
			if !hs.awaitIDs[id] && len(hs.awaitIDs) < hs.askCount {
				hs.awaitIDs[id], goSDK = true, true
			}
		}
	}
	s.mu.Unlock()
	if relayed || goSDK {
		return true
	}
	_, _, _, ok = s.forwardable(ctx, hs, m)
	return ok
}

// forwardAnswer passes wm, a client's answer on session hs, to the
// replica that asked, if that is another and the answer is to a request
// out there, and reports whether it did (the POST is then answered 202).
func (s *httpSessions) forwardAnswer(ctx context.Context, hs *httpSession, wm *wire.Message) bool {
	owner, id, rec, ok := s.forwardable(ctx, hs, wm)
	if !ok || !s.markForwarded(hs, id, rec) {
		return false
	}
	m := &forwardMsg{SID: hs.sid, P: hs.owner, ID: id, From: s.f.replica, T: time.Now().UnixMilli(), N: rand.Text(), Body: wm.Raw}
	if rec != nil {
		m.E = rec.Episode
	}
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false) // (the body as it came: escaping could grow it past what the owner takes)
	if err := enc.Encode(m); err != nil {
		return false
	}
	msg := s.f.fwdBox.Seal([]byte(cluster.ForwardAnswer+"\n"), plain.Bytes(), forwardAAD("answer", owner))
	if err := s.f.state.Publish(ctx, cluster.ForwardChannel(owner), msg); err != nil {
		s.f.log.Warn("passing a client's answer to the replica that asked", "error", err)
		s.mu.Lock()
		hs.fwdIDs.remove(id) // (the client may send it again)
		delete(hs.fwdEpisodeIDs, id)
		s.mu.Unlock()
		return false
	}
	return true
}

// forwarded takes what another replica passed on to this one of a kind
// the core does not take: a client's answer to a request this replica put
// to it.
func (f *Front) forwarded(kind string, body []byte) {
	if kind != cluster.ForwardAnswer {
		return
	}
	if len(body) > gateway.MaxMessageBytes+forwardOverhead {
		f.log.Warn("a client's answer passed on by another replica is too large: dropped", "bytes", len(body))
		return
	}
	plain, err := f.fwdBox.Open(nil, body, forwardAAD("answer", f.replica))
	var m forwardMsg
	if err != nil || json.Unmarshal(plain, &m) != nil {
		f.log.Warn("a client's answer passed on by another replica does not open (every replica needs the same MCPHOST_SESSION_KEYS): dropped")
		return
	}
	if !cluster.Fresh(m.T) || !f.fwdSeen.First(m.N, m.T) {
		f.log.Warn("a client's answer passed on by another replica is too old or taken already (replayed, or the replicas' clocks differ): dropped", "replica", m.From)
		return
	}
	s, hs := f.sessionBySID(m.SID)
	if hs == nil {
		return // (the session ended here: the call that asked with it)
	}
	if hs.owner != m.P {
		f.log.Warn("a client's answer passed on by another replica is another principal's: dropped", "replica", m.From)
		return
	}
	var wm wire.Message
	if wire.Parse(&wm, m.Body) != nil {
		return
	}
	if id, ok := responseID(&wm); !ok || id != m.ID {
		return
	}
	if s.answer(hs, &wm) {
		return // a relayed call's (httpasks.go)
	}
	if strings.HasPrefix(m.ID, askIDPrefix) {
		return // (no longer awaited)
	}
	if !s.goSDKAsksOut(hs, m.E) {
		return // (no go-sdk request out, or not those it was judged for: a replay, or the session's asks started again)
	}
	s.inject(hs, m.Body) // a go-sdk call's: the go-sdk session takes it if its id is one out
}

// goSDKAsksOut reports whether hs has go-sdk requests out to its client,
// of the ask record's episode.
func (s *httpSessions) goSDKAsksOut(hs *httpSession, episode string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hs.outAsks > 0 && episode == hs.askEpisode
}

// sealChange seals msg, a session change for the sessions channel, with
// the time and a random id.
func (f *Front) sealChange(msg string) []byte {
	plain := binary.BigEndian.AppendUint64(make([]byte, 0, changeHead+len(msg)), uint64(time.Now().UnixMilli()))
	plain = append(plain, make([]byte, changeIDLen)...)
	rand.Read(plain[8:changeHead])
	return f.fwdBox.Seal(nil, append(plain, msg...), forwardAAD("change", cluster.SessionsChannel))
}

// A sealed session change starts with its time (8 bytes, Unix ms) and its
// random id.
const (
	changeIDLen = 16
	changeHead  = 8 + changeIDLen
)

// openChange opens a session change sealChange sealed, or reports false
// (and logs why) when it does not open or is too old.
func (f *Front) openChange(sealed []byte) ([]byte, bool) {
	plain, err := f.fwdBox.Open(nil, sealed, forwardAAD("change", cluster.SessionsChannel))
	if err != nil || len(plain) < changeHead {
		f.log.Warn("a session change from the shared state does not open (every replica needs the same MCPHOST_SESSION_KEYS): dropped")
		return nil, false
	}
	t := int64(binary.BigEndian.Uint64(plain))
	if !cluster.Fresh(t) || !f.fwdSeen.First(string(plain[8:changeHead]), t) {
		f.log.Warn("a session change from the shared state is too old or taken already (replayed, or the replicas' clocks differ): dropped")
		return nil, false
	}
	return plain[changeHead:], true
}

// forwardOverhead bounds what a sealed answer holds besides the client's
// response.
const forwardOverhead = 4<<10 + sealbox.Overhead

// inject delivers body to hs's go-sdk session as if its client had POSTed
// it; what the session answers is dropped (an answer or a notification
// gets none; a replayed logging/setLevel an empty result).
func (s *httpSessions) inject(hs *httpSession, body []byte) {
	s.injectWith(context.Background(), hs, body, nil)
}

// injectWith is inject under ctx, with extra headers.
func (s *httpSessions) injectWith(ctx context.Context, hs *httpSession, body []byte, extra http.Header) {
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	for k, v := range extra {
		r.Header[k] = v
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Session-Id", hs.ss.ID())
	if ip := hs.ss.InitializeParams(); ip != nil {
		r.Header.Set("Mcp-Protocol-Version", ip.ProtocolVersion)
	}
	hs.tr.ServeHTTP(discard{h: http.Header{}}, r)
}

// forwardCancel tells the other replicas holding hs of a cancellation its
// client sent (m, a notifications/cancelled), for a call one of them
// runs: not when the call is a relayed one of this replica's (local), not
// for a request id it passed on recently (the last maxForwardedIDs), and
// within the session's budget of cancellations (cancelBurst, then
// cancelRate), which a client's flood does not pass even with no rate
// limit: what is over it is dropped (counted, logged once a session).
func (s *httpSessions) forwardCancel(ctx context.Context, hs *httpSession, m *wire.Message, local bool) {
	key, ok := m.CancelledKey()
	if !ok || local {
		return
	}
	s.mu.Lock()
	if hs.cancelsSent.has(key) {
		s.mu.Unlock()
		return
	}
	if hs.cancelBudget == nil {
		hs.cancelBudget = rate.NewLimiter(cancelRate, cancelBurst)
	}
	if !hs.cancelBudget.Allow() {
		hs.cancelsDropped++
		first := hs.cancelsDropped == 1
		s.mu.Unlock()
		if first {
			s.f.log.Warn("a client's cancellations are over the session's budget: not passed on to the other replicas", "burst", cancelBurst)
		}
		return
	}
	hs.cancelsSent.add(key)
	s.mu.Unlock()
	s.publish(ctx, "cancel "+hs.sid+" "+s.f.replica+"\n"+string(m.Raw))
}

// recentIDs is a set of the last maxForwardedIDs ids added: when full, an
// add forgets the oldest. Its zero value is empty.
type recentIDs struct {
	set  map[string]uint64 // id -> its sequence number in ring
	ring []recentID
	n    uint64 // adds so far
}

type recentID struct {
	id  string
	seq uint64
}

func (r *recentIDs) has(id string) bool { _, ok := r.set[id]; return ok }

func (r *recentIDs) add(id string) {
	if r.set == nil {
		r.set, r.ring = map[string]uint64{}, make([]recentID, maxForwardedIDs)
	}
	slot := &r.ring[r.n%maxForwardedIDs]
	if seq, ok := r.set[slot.id]; ok && seq == slot.seq {
		delete(r.set, slot.id) // the oldest
	}
	r.n++
	*slot = recentID{id: id, seq: r.n}
	r.set[id] = r.n
}

func (r *recentIDs) remove(id string) { delete(r.set, id) }

// cancelled applies a cancellation another replica received.
func (s *httpSessions) cancelled(hs *httpSession, body []byte) {
	var m wire.Message
	if wire.Parse(&m, body) == nil {
		s.cancel(hs, &m) // a relayed call's
	}
	s.inject(hs, body) // a go-sdk call's
}

// responseID returns the id of m when it is a JSON-RPC response (an
// answer to a request to the client), as a string key.
func responseID(m *wire.Message) (string, bool) {
	if m.Kind != wire.KindResponse || m.ID == nil {
		return "", false
	}
	_, hasResult := m.Member("result")
	_, hasError := m.Member("error")
	if !(hasResult || hasError) {
		return "", false
	}
	if id, ok := rawjson.String(m.ID); ok {
		return id, true
	}
	if _, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
		return string(m.ID), true
	}
	return "", false
}

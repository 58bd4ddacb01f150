package streamable

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/state"
)

// Sessions of clients before 2026-07-28, served by any replica.
//
// The session id is the session: what a replica needs to serve any request
// of it — the negotiated version, the client's capabilities and
// implementation, the principal that opened it — sealed (AES-256-GCM,
// sealbox) with the gateway's keys (MCPHOST_SESSION_KEYS). A replica that
// has not seen a session rebuilds it from its id (a go-sdk session connected
// with that state) and keeps it while it is used; the upstream sessions are
// the replica's own, made on demand.
//
// What changes after the initialize cannot be in the id, which a client
// may not see change: the log level, and the session's end. Both live in a
// record in the shared state (sess:<sid>), written when the session opens,
// when its level is set, and, while it is used, at most once per quarter of
// the idle timeout by each replica serving it; it expires after the idle
// timeout and a quarter, and is deleted when the client ends the session
// (DELETE) or a replica finds it idle. A session without a record is no
// session (404). Changes are published on the "sessions" channel, so the
// replicas holding the session apply them at once; a replica that may have
// missed messages reads the record again at the session's next request.
//
// A request that needs nothing shared (a session this replica holds, whose
// record it wrote less than a quarter of the idle timeout ago) touches no
// shared state.

const (
	// maxSessionIDLen bounds a session id (an HTTP header): capabilities
	// past it are dropped from the id (see sealSession).
	maxSessionIDLen = 4096
	// sessionLookupTimeout bounds the shared-state requests of a session
	// lookup.
	sessionLookupTimeout = 5 * time.Second
)

// sessionClaims are what a session id seals.
type sessionClaims struct {
	SID  string              `json:"s"`           // random: the key of the session's record
	Ver  string              `json:"v"`           // the negotiated protocol version
	Req  string              `json:"r,omitempty"` // the version the client asked for, when not Ver
	Caps json.RawMessage     `json:"c,omitempty"` // the client's capabilities
	Info *mcp.Implementation `json:"i,omitempty"` // the client's implementation
	P    string              `json:"p,omitempty"` // the principal that opened it ("" without inbound OAuth)
	Iat  int64               `json:"t"`           // when it opened (Unix seconds)
}

// sessionRecord is a session's record in the shared state.
type sessionRecord struct {
	Seen  int64            `json:"seen"` // Unix ms of the write
	By    string           `json:"by"`   // the replica that wrote it
	Level mcp.LoggingLevel `json:"lvl,omitempty"`
	// Subs are the resources the client subscribed to (sessionsubs.go).
	Subs []string `json:"subs,omitempty"`
}

// errNoSession is a session id that names no session: not sealed with the
// gateway's keys, of another principal, ended or expired.
var errNoSession = errors.New("session not found")

// initializeParams returns the params of m, an initialize request, or nil
// when m is not one (nil for a batch, another method).
func initializeParams(m *wire.Message) *mcp.InitializeParams {
	if m == nil || !m.IsMethod("initialize") || m.Params == nil {
		return nil
	}
	var ip mcp.InitializeParams
	if json.Unmarshal(m.Params, &ip) != nil {
		return nil
	}
	return &ip
}

// negotiated is the version the go-sdk server answers an initialize for
// asked with (as its negotiatedVersion does): that one if supported and
// before 2026-07-28, else the latest supported before it.
func negotiated(asked string) string {
	supported := mcp.SupportedProtocolVersions()
	if slices.Contains(supported, asked) && asked < conn.NewProtocol {
		return asked
	}
	for _, v := range supported {
		if v < conn.NewProtocol {
			return v
		}
	}
	return asked
}

// sealSession returns a new session's id for the initialize params ip (nil
// for a POST that is no initialize: a session that will not open) and the
// claims it seals.
func (s *httpSessions) sealSession(ip *mcp.InitializeParams, owner string) (string, *sessionClaims) {
	var sid [16]byte
	rand.Read(sid[:])
	c := &sessionClaims{SID: base64.RawURLEncoding.EncodeToString(sid[:]), P: owner, Iat: time.Now().Unix()}
	if ip != nil {
		c.Ver = negotiated(ip.ProtocolVersion)
		if ip.ProtocolVersion != c.Ver {
			c.Req = ip.ProtocolVersion
		}
		if ip.Capabilities != nil {
			c.Caps, _ = json.Marshal(ip.Capabilities)
		}
		c.Info = ip.ClientInfo
	}
	for {
		plain, _ := json.Marshal(c)
		id := base64.RawURLEncoding.EncodeToString(s.box.Seal(nil, plain, cluster.SessionAAD(s.f.gw.Endpoint())))
		if len(id) <= maxSessionIDLen || (c.Caps == nil && c.Info == nil) {
			return id, c
		}
		// Oversized: the client's experimental capabilities go first,
		// then its implementation's description, then everything.
		switch {
		case c.Info != nil && (c.Info.Title != "" || len(c.Info.Icons) > 0 || c.Info.WebsiteURL != ""):
			c.Info = &mcp.Implementation{Name: c.Info.Name, Version: c.Info.Version}
		case ip != nil && ip.Capabilities != nil && ip.Capabilities.Experimental != nil:
			caps := *ip.Capabilities
			caps.Experimental = nil
			ip = &mcp.InitializeParams{ProtocolVersion: ip.ProtocolVersion, Capabilities: &caps}
			c.Caps, _ = json.Marshal(&caps)
		default:
			c.Caps, c.Info = nil, nil
		}
	}
}

// openSession returns the claims of session id, or errNoSession.
func (s *httpSessions) openSession(id string) (*sessionClaims, error) {
	return s.f.openSession(id)
}

// openSession returns the claims of session id, or errNoSession.
func (f *Front) openSession(id string) (*sessionClaims, error) {
	if len(id) > maxSessionIDLen {
		return nil, errNoSession
	}
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return nil, errNoSession
	}
	plain, err := f.box.Open(nil, b, cluster.SessionAAD(f.gw.Endpoint()))
	if err != nil {
		return nil, errNoSession
	}
	var c sessionClaims
	if err := json.Unmarshal(plain, &c); err != nil || c.SID == "" {
		return nil, errNoSession
	}
	return &c, nil
}

// state is the go-sdk state of the session c seals, at level.
func (c *sessionClaims) state(level mcp.LoggingLevel) *mcp.ServerSessionState {
	ip := &mcp.InitializeParams{ProtocolVersion: c.Ver, ClientInfo: c.Info}
	if c.Req != "" {
		ip.ProtocolVersion = c.Req
	}
	if len(c.Caps) > 0 {
		var caps mcp.ClientCapabilities
		if json.Unmarshal(c.Caps, &caps) == nil {
			ip.Capabilities = &caps
		}
	}
	return &mcp.ServerSessionState{InitializeParams: ip, InitializedParams: &mcp.InitializedParams{},
		NegotiatedProtocolVersion: c.Ver, LogLevel: level}
}

// writeRecord writes hs's record (its state, and that it is alive).
func (s *httpSessions) writeRecord(ctx context.Context, hs *httpSession) error {
	now := time.Now()
	subs := s.subsOf(hs)
	s.mu.Lock()
	level := hs.level
	s.mu.Unlock()
	b, _ := json.Marshal(sessionRecord{Seen: now.UnixMilli(), By: s.f.replica, Level: level, Subs: subs})
	// Sealed and bound to the session: a reader of the shared state
	// learns neither the resources a session subscribed to nor its level,
	// and a writer cannot give a session another's record.
	b = s.f.fwdBox.Seal(nil, b, forwardAAD("session-record", hs.sid))
	if err := s.f.state.Put(ctx, cluster.SessionKey(hs.sid), b, s.idle+s.idle/4); err != nil {
		return fmt.Errorf("writing the session's record: %w", err)
	}
	s.mu.Lock()
	hs.written = now
	s.mu.Unlock()
	return nil
}

// readRecord returns session sid's record, or errNoSession.
func (s *httpSessions) readRecord(ctx context.Context, sid string) (*sessionRecord, error) {
	b, err := s.f.state.Get(ctx, cluster.SessionKey(sid))
	if errors.Is(err, state.ErrNotFound) {
		return nil, errNoSession
	}
	if err != nil {
		return nil, fmt.Errorf("reading the session's record: %w", err)
	}
	plain, err := s.f.fwdBox.Open(nil, b, forwardAAD("session-record", sid))
	if err != nil {
		// Not sealed by a replica with the gateway's keys, or sealed for
		// another session: as no record (a rolling upgrade from a version
		// that wrote records in clear ends those sessions once).
		return nil, errNoSession
	}
	var rec sessionRecord
	if err := json.Unmarshal(plain, &rec); err != nil {
		return nil, errNoSession
	}
	return &rec, nil
}

// open makes the session of a POST without a session id: a new session for
// an initialize (sealed from its params), else one that ends with the
// request, as the go-sdk handler makes. It returns the session, its POST
// counted in progress (end ends it).
func (s *httpSessions) open(ctx context.Context, m *wire.Message, owner string) (hs *httpSession, end func(), err error) {
	ip := initializeParams(m)
	id, c := s.sealSession(ip, owner)
	hs, err = s.connect(ctx, id, c, nil)
	if err != nil {
		return nil, nil, err
	}
	if ip != nil {
		if err := s.writeRecord(ctx, hs); err != nil {
			hs.ss.Close()
			return nil, nil, err
		}
	}
	return hs, s.post(hs, ip != nil), nil
}

// lookup returns the session id names for owner, rebuilding it from its id
// when this replica does not hold it, with its POST (for a POST) counted in
// progress. It fails with errNoSession for an id that names no session of
// owner's, with a *tooManySessionsError when rebuilding it would pass this
// replica's caps, or with the shared state's error.
func (s *httpSessions) lookup(ctx context.Context, id, owner string, isPost bool) (*httpSession, func(), error) {
	s.mu.Lock()
	hs := s.byID[id]
	stale := hs != nil && hs.stale
	s.mu.Unlock()
	if hs != nil && !stale {
		if hs.owner != owner {
			return nil, nil, errNoSession
		}
		end := s.post(hs, isPost)
		if end == nil {
			s.mu.Lock()
			dropped := s.byID[id] != hs
			s.mu.Unlock()
			if dropped {
				// Dropped meanwhile (for another session, admitSession, or
				// ended): the record tells which.
				return s.lookup(ctx, id, owner, isPost)
			}
			return nil, nil, errNoSession // (closing)
		}
		s.mu.Lock()
		written := hs.written
		recheck := s.seenLocked(hs, gateway.PrincipalIn(ctx))
		s.mu.Unlock()
		if recheck {
			s.sync(hs)
		}
		if time.Since(written) > s.idle/4 {
			// Still alive, for the other replicas. (At most once per
			// quarter of the idle timeout.)
			if err := s.writeRecord(ctx, hs); err != nil {
				end()
				return nil, nil, err
			}
		}
		return hs, end, nil
	}
	c, err := s.openSession(id)
	if err != nil {
		return nil, nil, err
	}
	if c.P != owner {
		return nil, nil, errNoSession
	}
	rctx, cancel := context.WithTimeout(ctx, sessionLookupTimeout)
	defer cancel()
	rec, err := s.readRecord(rctx, c.SID)
	if err != nil {
		if hs != nil && errors.Is(err, errNoSession) {
			s.drop(hs) // ended while this replica may have missed it
		}
		return nil, nil, err
	}
	if hs != nil { // stale: the record is read again
		s.mu.Lock()
		hs.stale = false
		s.seenLocked(hs, gateway.PrincipalIn(ctx)) // (before adopt replays)
		s.mu.Unlock()
		s.adopt(hs, rec)
		return s.lookup(ctx, id, owner, isPost)
	}
	// Rebuilt here, the session takes a slot of this replica's caps, as
	// one opened here does.
	opened, err := s.f.admitSession(owner, s.limits)
	if err != nil {
		return nil, nil, err
	}
	hs, err = s.connect(ctx, id, c, c.state(rec.Level))
	opened()
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	hs.rebuilt = true
	s.mu.Unlock()
	if rec.Level != "" {
		s.f.gw.SetSessionLogLevel(hs.ss, rec.Level)
	}
	s.adopt(hs, rec)
	end := s.post(hs, isPost)
	if end == nil {
		return nil, nil, errNoSession // (closing: ended meanwhile)
	}
	// The record is written again (kept alive) on the schedule of a
	// replica that wrote it: not now, when it was just read (one round trip
	// to the shared state for a session reaching this replica, not two).
	s.mu.Lock()
	hs.written = time.UnixMilli(rec.Seen)
	s.mu.Unlock()
	return hs, end, nil
}

// connect connects a go-sdk session with id over a transport of its own
// (rebuilt from st; nil for a new session) and registers it.
func (s *httpSessions) connect(ctx context.Context, id string, c *sessionClaims, st *mcp.ServerSessionState) (*httpSession, error) {
	tr := &mcp.StreamableServerTransport{SessionID: id}
	var opts *mcp.ServerSessionOptions
	if st != nil {
		opts = &mcp.ServerSessionOptions{State: st}
	}
	kt := &keptTransport{StreamableServerTransport: tr}
	ss, err := s.f.srv.Connect(context.WithoutCancel(ctx), kt, opts)
	if err != nil {
		return nil, fmt.Errorf("connecting the session: %w", err)
	}
	hs := &httpSession{ss: ss, tr: tr, conn: kt.conn, sid: c.SID, logID: gateway.LogSessionID(ss.ID()), owner: c.P, principal: gateway.PrincipalIn(ctx), calls: map[string]context.CancelFunc{}}
	hs.notes = gateway.NewNoteQueue(s.f.log, func(ctx context.Context, n gateway.QueuedNote) { s.deliverNote(ctx, hs, n) })
	if st != nil {
		hs.caps = conn.CapabilitiesJSON(st.InitializeParams.Capabilities)
	}
	hs.timer = time.AfterFunc(s.idle, func() { s.idled(hs) })
	s.mu.Lock()
	if old := s.byID[id]; old != nil {
		// Rebuilt twice at once: the first one stays.
		s.mu.Unlock()
		hs.timer.Stop()
		ss.Close()
		return old, nil
	}
	s.byID[id] = hs
	s.bySID[c.SID] = hs
	s.mu.Unlock()
	go func() { // ends with the session
		ss.Wait()
		s.mu.Lock()
		if s.byID[id] == hs {
			delete(s.byID, id)
		}
		if s.bySID[hs.sid] == hs {
			delete(s.bySID, hs.sid)
		}
		s.mu.Unlock()
		hs.timer.Stop()
		s.end(hs)
	}()
	return hs, nil
}

// post counts a request of hs in progress when isPost (its idle timer
// stops), and returns its end, which restarts the timer after the last
// one; nil when hs is closing.
func (s *httpSessions) post(hs *httpSession, isPost bool) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs.closing {
		return nil
	}
	hs.used = time.Now()
	if !isPost {
		return func() {}
	}
	if hs.posts++; hs.posts == 1 {
		hs.timer.Stop()
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		hs.used = time.Now()
		if hs.posts--; hs.posts == 0 && !hs.closing {
			hs.timer.Reset(s.idle)
		}
	}
}

// idled closes hs, idle on this replica, and deletes its record when no
// other replica wrote it since this one did: the session is idle
// everywhere. (A replica that served it since without writing did so less
// than a quarter of the idle timeout after this one's write: the session
// was idle for at least three quarters of the timeout there.)
func (s *httpSessions) idled(hs *httpSession) {
	s.mu.Lock()
	if hs.posts > 0 || hs.closing {
		s.mu.Unlock()
		return // busy again (its last POST's end restarts the timer)
	}
	hs.closing = true
	written := hs.written
	s.mu.Unlock()
	hs.ss.Close()
	ctx, cancel := context.WithTimeout(context.Background(), sessionLookupTimeout)
	defer cancel()
	rec, err := s.readRecord(ctx, hs.sid)
	if err == nil && rec.By == s.f.replica && rec.Seen == written.UnixMilli() {
		s.f.state.Delete(ctx, cluster.SessionKey(hs.sid))
	}
}

// evictable reports whether hs is a copy of a session rebuilt here with
// nothing in progress on it: no POST, no standalone stream, no request to
// its client. Its record is in the shared state, so dropping it loses
// nothing: a request of the session rebuilds it again, here or on another
// replica. s.mu is held.
func (hs *httpSession) evictable() bool {
	return hs.rebuilt && !hs.closing && hs.posts == 0 && hs.gets == 0 && hs.outAsks == 0 && len(hs.calls) == 0
}

// evictLocked drops hs, if still evictable, from s for another session,
// and returns it (not yet closed: the caller closes it, outside the
// locks); else nil. s.mu is held.
func (s *httpSessions) evictLocked(hs *httpSession) *httpSession {
	if !hs.evictable() {
		return nil
	}
	hs.closing = true
	hs.notes.Close()
	hs.timer.Stop()
	for id, h := range s.byID {
		if h == hs {
			delete(s.byID, id) // (its next request rebuilds it)
		}
	}
	if s.bySID[hs.sid] == hs {
		delete(s.bySID, hs.sid)
	}
	return hs
}

// drop closes hs on this replica only (its record is left alone).
func (s *httpSessions) drop(hs *httpSession) {
	s.mu.Lock()
	hs.closing = true
	s.mu.Unlock()
	hs.notes.Close()
	hs.ss.Close()
}

// terminate ends hs for its client (DELETE): its record is deleted and
// every replica told.
func (s *httpSessions) terminate(ctx context.Context, hs *httpSession) error {
	s.end(hs)
	hs.ss.Close()
	if err := s.f.state.Delete(ctx, cluster.SessionKey(hs.sid)); err != nil {
		return fmt.Errorf("deleting the session's record: %w", err)
	}
	s.publish(ctx, "gone "+hs.sid)
	return nil
}

// terminateUnheld ends session id of owner for its client (DELETE) when
// this replica does not hold it: without rebuilding it here (which would
// take a slot of this replica's caps), its record is deleted and every
// replica told, as terminate does. It reports false, doing nothing, for a
// session this replica holds (its DELETE is served by the session); it
// fails with errNoSession for an id that names no session of owner's, or
// with the shared state's error.
func (s *httpSessions) terminateUnheld(ctx context.Context, id, owner string) (ended bool, err error) {
	s.mu.Lock()
	held := s.byID[id] != nil
	s.mu.Unlock()
	if held {
		return false, nil
	}
	c, err := s.openSession(id)
	if err != nil {
		return false, err
	}
	if c.P != owner {
		return false, errNoSession
	}
	rctx, cancel := context.WithTimeout(ctx, sessionLookupTimeout)
	defer cancel()
	if _, err := s.readRecord(rctx, c.SID); err != nil {
		return false, err
	}
	if err := s.f.state.Delete(rctx, cluster.SessionKey(c.SID)); err != nil {
		return false, fmt.Errorf("deleting the session's record: %w", err)
	}
	s.publish(rctx, "gone "+c.SID)
	return true, nil
}

// publish tells the other replicas of a change of a session (msg), sealed
// (forward.go): the shared state sees neither the session nor the change,
// and a message not sealed by a replica, or replayed later, is dropped.
func (s *httpSessions) publish(ctx context.Context, msg string) {
	if err := s.f.state.Publish(ctx, cluster.SessionsChannel, s.f.sealChange(msg)); err != nil {
		s.f.log.Warn("publishing a session change", "error", err)
	}
}

// changed applies a change another replica published: "gone SID" (ended),
// "level SID LEVEL" (logging/setLevel), "sub SID URI" and "unsub SID URI"
// (resources/subscribe, unsubscribe), "cancel SID REPLICA\nBODY" (a
// cancellation, forward.go), "note SID REPLICA\nBODY" (a notification for
// the session's standalone stream, tasknotes.go); nil (messages may have been missed) marks
// every session held to be read again.
func (s *httpSessions) changed(msg []byte) {
	if msg == nil {
		s.mu.Lock()
		for _, hs := range s.byID {
			hs.stale = true
		}
		s.mu.Unlock()
		return
	}
	head, body, _ := bytes.Cut(msg, []byte{'\n'})
	defer s.echoed(string(head))
	kind, rest, _ := strings.Cut(string(head), " ")
	sid, level, _ := strings.Cut(rest, " ")
	s.mu.Lock()
	hs := s.bySID[sid]
	s.mu.Unlock()
	if hs == nil {
		return
	}
	switch kind {
	case "gone":
		s.end(hs)
		hs.ss.Close()
	case "level", "sub", "unsub": // level is the level, or the resource's URI
		s.changedElsewhere(hs, kind, level)
	case "cancel": // level is the replica that received it (forward.go)
		if level != s.f.replica {
			s.cancelled(hs, body)
		}
	case "note": // level is the replica that could not write it (tasknotes.go)
		if level != s.f.replica { // (queued: never written on this goroutine)
			hs.notes.Add(gateway.QueuedNote{Msg: bytes.Clone(body), Relayed: true})
		}
	}
}

// setLevel records a level hs's client set on this replica, for the
// others.
func (s *httpSessions) setLevel(ctx context.Context, hs *httpSession, level mcp.LoggingLevel) {
	s.mu.Lock()
	hs.level = level
	s.mu.Unlock()
	if err := s.writeRecord(ctx, hs); err != nil {
		s.f.log.Warn("recording a session's log level", "error", err)
		return
	}
	s.publishChange(ctx, "level "+hs.sid+" "+string(level))
}

// publishChange publishes a change of a session's state its client made
// (its log level, its subscriptions), and returns once the change came
// back to this replica, when the others have it too (give or take their
// scheduling): the client's next request may reach another replica as
// soon as it has the answer.
func (s *httpSessions) publishChange(ctx context.Context, msg string) {
	back := s.awaitEcho(msg)
	defer s.echoed(msg) // (gives up waiting)
	s.publish(ctx, msg)
	t := time.NewTimer(changeEchoWait)
	defer t.Stop()
	select {
	case <-back:
	case <-t.C:
	case <-ctx.Done():
	}
}

// changeEchoWait bounds how long a change's answer waits for the change to
// come back from the shared state.
const changeEchoWait = 250 * time.Millisecond

// awaitEcho returns a channel closed when msg, about to be published, comes
// back (or echoed is called for it).
func (s *httpSessions) awaitEcho(msg string) <-chan struct{} {
	ch := make(chan struct{})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.echoes == nil {
		s.echoes = map[string][]chan struct{}{}
	}
	s.echoes[msg] = append(s.echoes[msg], ch)
	return ch
}

// echoed ends the waiting for msg.
func (s *httpSessions) echoed(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.echoes[msg] {
		close(ch)
	}
	delete(s.echoes, msg)
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
func (d discard) Flush()                      {}

// serveSession serves a request of a session as the go-sdk handler serves
// a stateful one: a POST must be JSON and accept both a JSON response and
// an event stream, a GET an event stream; DELETE ends the session.
func (s *httpSessions) serveSession(w http.ResponseWriter, r *http.Request, hs *httpSession) {
	if pv := r.Header.Get("Mcp-Protocol-Version"); pv != "" && !slices.Contains(mcp.SupportedProtocolVersions(), pv) && pv < conn.NewProtocol {
		http.Error(w, fmt.Sprintf("Bad Request: Unsupported protocol version (supported versions: %s)", strings.Join(mcp.SupportedProtocolVersions(), ",")), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
			return
		}
		if !acceptsBoth(r) {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
			return
		}
	case http.MethodGet:
		if _, streamOK := accepts(r); !streamOK {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return
		}
		w = s.updatedOnOpen(r.Context(), w, hs) // (streamopen.go)
		s.mu.Lock()
		hs.gets++ // (in use: not dropped for another session, admitSession)
		s.mu.Unlock()
		s.markStream(r.Context(), hs) // (tasknotes.go)
		defer func() {
			s.mu.Lock()
			hs.gets--
			last := hs.gets == 0
			hs.used = time.Now()
			s.mu.Unlock()
			if last {
				s.unmarkStream(context.WithoutCancel(r.Context()), hs)
			}
		}()
	case http.MethodDelete:
		if err := s.terminate(r.Context(), hs); err != nil {
			s.f.log.Warn("ending a session", "error", err)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	hs.tr.ServeHTTP(w, r)
}

// sessionsChanged passes a session change published by a replica to the
// session tables of this one's HTTP handlers.
func (f *Front) sessionsChanged(msg []byte) {
	if msg != nil {
		var ok bool
		if msg, ok = f.openChange(msg); !ok {
			return
		}
	}
	f.tablesMu.Lock()
	tables := slices.Clone(f.tables)
	f.tablesMu.Unlock()
	for _, s := range tables {
		s.changed(msg)
	}
}

// levelSet records the level the client of an HTTP session ss set, for
// the other replicas.
func (f *Front) levelSet(ctx context.Context, req mcp.Request, ss *mcp.ServerSession, level mcp.LoggingLevel) {
	if f.isReplay(req) {
		return // another replica's client's, replayed here (sessionsubs.go)
	}
	if s, hs := f.heldSession(ss.ID()); hs != nil {
		s.setLevel(ctx, hs, level)
	}
}

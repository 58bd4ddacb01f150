// Package streamable is the gateway's streamable-HTTP front (mcphost serve
// --http): the MCP endpoint (Front.Handler, mounted at /mcp) for clients of
// both protocol eras — 2025-11-25 sessions, whose ids are sealed and which
// any replica serves, and 2026-07-28 requests that stand alone —, its
// authentication (a static bearer token, or inbound OAuth: InboundOAuth),
// admission (rate limits, session and listen-stream caps), the relay of
// tools/call requests over HTTP (httprelay.go, httpasks.go), and the part
// of the replica protocol that is about sessions (sessions.go,
// sessionsubs.go, forward.go; its keys and channels are listed in
// host/gateway/cluster); and the health endpoints (MountHealth).
//
// It reaches the core of the gateway (host/gateway) only through what that
// package exports for fronts.
package streamable

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// Front is the streamable-HTTP front of one gateway: make one per gateway
// (each Front keeps its own session caps); its Handlers share them, and
// the replica protocol.
type Front struct {
	gw  *gateway.Gateway
	h   *host.Host
	srv *mcp.Server
	log hclog.Logger

	// Scale-out (sessions.go, forward.go): the session ids' box, the
	// shared state, this replica's id, the session tables of the handlers.
	box *sealbox.Box
	// fwdBox seals what replicas pass each other about sessions (clients'
	// answers, session changes, ask records); askIDKeys key the tags of
	// the ids of the requests relayed calls put to clients (forward.go).
	fwdBox    *sealbox.Box
	fwdSeen   cluster.Seen // the sealed messages' ids taken (forward.go)
	askIDKeys [][]byte
	rateKeys  [][]byte // key the rate limiter's principal keys (ratelimit.go)
	state     state.Backend
	replica   string
	tablesMu  sync.Mutex
	tables    []*httpSessions
	// replayMark marks the requests replayed into sessions (sessionsubs.go).
	replayMark string

	sessions sessionLimit // the session caps (http.go)

	unsub     func() // leaves the sessions channel (once)
	remove    func() // leaves the gateway's session fronts (once)
	closeOnce sync.Once
	closed    atomic.Bool // CloseSessions ran: requests are refused
	// unheldNotes holds the notifications for sessions this replica no
	// longer holds, to publish for the replica that does (tasknotes.go).
	unheldNotes *gateway.NoteQueue
}

// New returns the streamable-HTTP front of g: it joins the replica
// protocol's sessions channel, and the gateway's session fronts
// (gateway.SessionFront), until Close or the gateway's CloseSessions.
func New(g *gateway.Gateway) *Front {
	keys := g.Keys()
	f := &Front{gw: g, h: g.Host(), srv: g.Server(), log: g.Logger(),
		box: keys.Box(cluster.SessionPurpose), fwdBox: keys.Box(cluster.ForwardPurpose),
		askIDKeys: keys.MACKeys(cluster.AskIDPurpose), rateKeys: keys.MACKeys(cluster.RateLimitPurpose),
		state: g.State(), replica: g.Replica()}
	var mark [16]byte
	rand.Read(mark[:])
	f.replayMark = hex.EncodeToString(mark[:])
	f.unheldNotes = gateway.NewNoteQueue(f.log, f.publishNote)
	unsub := f.state.Subscribe(cluster.SessionsChannel, f.sessionsChanged)
	removeFront := g.AddSessionFront(sessionFront{f})
	removeNotes := g.AddNoteWriter(f)
	remove := func() { removeFront(); removeNotes() }
	f.unsub, f.remove = sync.OnceFunc(unsub), sync.OnceFunc(remove)
	return f
}

// Close refuses every request from now on and leaves the replica protocol
// and the gateway (CloseSessions); the sessions' go-sdk sessions end with
// the gateway's (Gateway.CloseSessions and Close close every front of the
// gateway).
func (f *Front) Close() { f.CloseSessions() }

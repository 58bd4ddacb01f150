package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// The relay path over HTTP: a POSTed tools/call that qualifies (see
// relayable) is answered by the gateway itself with a JSON response
// (Content-Type application/json, which a streamable HTTP client accepts
// for any request), the upstream's raw response with the client's id in it,
// never decoded by the go-sdk server. Everything else goes to the go-sdk
// handler.
//
// A session's idle timer is the go-sdk handler's, which sees only the
// requests it serves. So a session's tools/call is relayed only while the
// go-sdk handler saw a request of that session within half the idle
// timeout; otherwise it is served by the go-sdk handler, which restarts the
// timer (one call in every half timeout of a busy session). A session
// ended by the client (DELETE) is forgotten at once.

// activity is when the go-sdk handler last saw a request of each session,
// and the session's client capabilities once a call needed them.
type activity struct {
	mu     sync.Mutex
	last   map[string]*seen
	window time.Duration // how long after that a session's calls may be relayed
	max    int           // sessions remembered before the old ones are dropped
}

type seen struct {
	at   time.Time
	caps []byte // the client's capabilities (from its initialize), as JSON
}

func newActivity(idle time.Duration, maxSessions int) *activity {
	return &activity{last: map[string]*seen{}, window: idle / 2, max: 2 * maxSessions}
}

// saw notes that the go-sdk handler serves a request of session id now.
func (a *activity) saw(id string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.last[id]; ok {
		s.at = now
		return
	}
	a.last[id] = &seen{at: now}
	if len(a.last) > a.max {
		for k, s := range a.last {
			if now.Sub(s.at) > 2*a.window {
				delete(a.last, k)
			}
		}
	}
}

// recent reports whether session id's calls may be relayed now, and the
// session's client capabilities if known.
func (a *activity) recent(id string, now time.Time) (ok bool, caps []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, found := a.last[id]
	if !found || now.Sub(s.at) >= a.window {
		return false, nil
	}
	return true, s.caps
}

// setCaps records session id's client capabilities.
func (a *activity) setCaps(id string, caps []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.last[id]; ok {
		s.caps = caps
	}
}

func (a *activity) forget(id string) {
	a.mu.Lock()
	delete(a.last, id)
	a.mu.Unlock()
}

// sessionCaps is the client capabilities of the gateway's session id, as
// JSON (nil if there is no such session).
func (g *Gateway) sessionCaps(id string) []byte {
	for ss := range g.srv.Sessions() {
		if ss.ID() != id {
			continue
		}
		ip := ss.InitializeParams()
		if ip == nil {
			return nil
		}
		caps := ip.Capabilities
		if caps == nil {
			caps = &mcp.ClientCapabilities{}
		}
		b, err := json.Marshal(caps)
		if err != nil {
			return nil
		}
		return b
	}
	return nil
}

// acceptsBoth reports whether the request accepts both a JSON response and
// an event stream, as a streamable HTTP POST must (the go-sdk handler
// answers 400 otherwise).
func acceptsBoth(r *http.Request) bool {
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(mt) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			case "application/*":
				jsonOK = true
			case "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// errorStatus is the HTTP status of a JSON-RPC error response under
// protocol versions from 2026-07-28 on (SEP-2575, as the go-sdk handler
// sets it): 404 for method not found; 400 for invalid params, an
// unsupported protocol version or a missing client capability; else 200.
func errorStatus(resp []byte) int {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return http.StatusOK
	}
	e, ok := rawjson.Find(ms, "error")
	if !ok {
		return http.StatusOK
	}
	var earr [4]rawjson.Member
	es, err := rawjson.Members(earr[:0], e.Value)
	if err != nil {
		return http.StatusOK
	}
	code, _ := rawjson.Find(es, "code")
	switch string(code.Value) {
	case "-32601":
		return http.StatusNotFound
	case "-32602", "-32022", "-32021":
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// relayHTTP answers a POSTed tools/call by the relay path and reports true,
// or leaves the request, unanswered, to the go-sdk handler (false). body
// passed the strict scan. session is the request's session, "" for a
// request that stands alone.
func (g *Gateway) relayHTTP(w http.ResponseWriter, r *http.Request, body []byte, session string, act *activity) bool {
	if len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' || !acceptsBoth(r) {
		return false // batches, and what the go-sdk handler refuses
	}
	var arr, parr [8]rawjson.Member
	ms, ps, err := rawjson.Message(arr[:0], parr[:0], body)
	if err != nil {
		return false
	}
	if m, _ := rawjson.Find(ms, "method"); string(m.Value) != `"tools/call"` {
		return false
	}
	var sessionCaps []byte
	if session != "" {
		recent, caps := act.recent(session, time.Now())
		if !recent || g.levels.byID(session) {
			return false // (a session with a log level: as in relayConn.relay)
		}
		if sessionCaps = caps; caps == nil {
			if sessionCaps = g.sessionCaps(session); sessionCaps == nil {
				return false
			}
			act.setCaps(session, sessionCaps)
		}
	}
	header := r.Header.Get("Mcp-Protocol-Version")
	id, name, args, ver, caps, ok := g.relayable(ms, ps, header)
	if !ok || ver != header || (ver >= conn.NewProtocol && !headersMatch(r, ps, g.headerBound)) {
		return false // the go-sdk handler checks the headers, and refuses what does not match
	}
	if caps == nil {
		if caps = sessionCaps; caps == nil {
			return false // a request that stands alone but names no capabilities
		}
	}
	clientID := bytes.Clone(id.Value)
	ctx, end, ok := g.begin(r.Context())
	if !ok {
		writeRelayed(w, http.StatusOK, errorJSON(clientID, errShuttingDown("no new requests are accepted")))
		return true
	}
	defer end()
	// The call's own: what the server sends during it reaches no other
	// client (its log messages are dropped: this client set no log level).
	resp, handled, err := g.h.RelayCall(ctx, name, args, host.RelayOptions{ProtocolVersion: ver, Caps: caps, Requester: &quietRequester{}})
	if !handled {
		return false
	}
	g.relayed.Add(1)
	switch {
	case g.aborted(r.Context()):
		writeRelayed(w, http.StatusOK, errorJSON(clientID, errShuttingDown(fmt.Sprintf("the request was cancelled after the drain timeout (%s)", g.drainTimeout))))
	case r.Context().Err() != nil && errors.Is(err, context.Canceled):
		// The client went away: nothing to answer.
	case err != nil:
		g.log.Warn("tool call failed", "tool", name, "error", err)
		writeRelayed(w, http.StatusOK, resultJSON(clientID, errorResultJSON(err.Error())))
	default:
		out, ok := rewriteResponse(resp, clientID)
		if !ok {
			out = resultJSON(clientID, errorResultJSON("invalid response from the server for "+name))
		}
		status := http.StatusOK
		if ver >= conn.NewProtocol {
			status = errorStatus(out)
		}
		writeRelayed(w, status, out)
	}
	return true
}

// headersMatch reports whether a 2026-07-28 tools/call carries exactly the
// routing headers its body implies (SEP-2243: Mcp-Method, Mcp-Name) and no
// parameter headers, and its tool takes none (headerBound): only such a
// call is relayed. The go-sdk handler checks the rest and answers a mismatch
// with its error.
func headersMatch(r *http.Request, ps []rawjson.Member, headerBound func(string) bool) bool {
	if r.Header.Get("Mcp-Method") != "tools/call" {
		return false
	}
	n, _ := rawjson.Find(ps, "name")
	name, ok := rawjson.String(n.Value)
	if !ok || r.Header.Get("Mcp-Name") != name || headerBound(name) {
		return false
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	return true
}

// quietRequester is the Requester of a call relayed over HTTP, answered
// with a JSON response: there is no stream to ask its client on, or to
// send it log messages (its client set no log level, or the call would not
// be relayed). It ties what the server sends during the call to the call,
// so that nothing reaches another client. Each call has its own.
type quietRequester struct{ _ int }

func (*quietRequester) Capabilities() *mcp.ClientCapabilities { return nil }
func (*quietRequester) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, unsupported("elicitation")
}
func (*quietRequester) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, unsupported("sampling")
}
func (*quietRequester) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, unsupported("roots")
}

func writeRelayed(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(msg)
}

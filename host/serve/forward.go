package serve

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// What reaches a replica but belongs to another (scale-out).
//
// A session's requests may land on any replica, but a call in progress is
// the replica's that runs it. When that call asks the client something
// (elicitation, sampling, roots), the client's answer is a POST of its own,
// which the balancer may send to another replica: that replica passes it
// on, through the shared state, to the one that asked, and answers 202 as
// the asker would. The asker is known by the answer's id for the relay's
// requests (mcphost-ask-REPLICA-N, httpasks.go), and by the record
// ask:<sid> for the go-sdk path's (written while such a request is out,
// askTracking). A client's cancellation of a call (notifications/cancelled)
// is told to every replica holding the session.
//
// Nothing is forwarded to a replica that is gone: its calls ended with it,
// and their clients see the calls' streams end.

// forwardTTL bounds how long an ask's record outlives a replica that died
// with the ask out.
const forwardTTL = 10 * time.Minute

func askRecordKey(sid string) string   { return "ask:" + sid }
func forwardChannel(rid string) string { return "fwd:" + rid }

// askTracking is the go-sdk server's sending middleware that records which
// replica put a request to a session's client, while it waits for the
// answer, so that another replica the answer reaches passes it on.
func (g *Gateway) askTracking(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "elicitation/create", "sampling/createMessage", "roots/list":
		default:
			return next(ctx, method, req)
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok {
			return next(ctx, method, req)
		}
		s, hs := g.heldSession(ss.ID())
		if hs == nil {
			return next(ctx, method, req)
		}
		s.mu.Lock()
		hs.outAsks++
		s.mu.Unlock()
		if err := g.state.Put(ctx, askRecordKey(hs.sid), []byte(g.replica), forwardTTL); err != nil {
			g.log.Warn("recording a request to a client (its answer must reach this replica)", "error", err)
		}
		defer func() {
			s.mu.Lock()
			hs.outAsks--
			last := hs.outAsks == 0
			s.mu.Unlock()
			if last {
				g.state.Delete(context.WithoutCancel(ctx), askRecordKey(hs.sid))
			}
		}()
		return next(ctx, method, req)
	}
}

// heldSession returns the session with id this replica holds, and its
// table, or nils.
func (g *Gateway) heldSession(id string) (*httpSessions, *httpSession) {
	g.tablesMu.Lock()
	defer g.tablesMu.Unlock()
	for _, s := range g.tables {
		s.mu.Lock()
		hs := s.byID[id]
		s.mu.Unlock()
		if hs != nil {
			return s, hs
		}
	}
	return nil, nil
}

// forwardAnswer passes body, a client's answer on session hs, to the
// replica that asked, if that is another, and reports whether it did (the
// POST is then answered 202).
func (s *httpSessions) forwardAnswer(ctx context.Context, hs *httpSession, body []byte) bool {
	id, ok := responseID(body)
	if !ok {
		return false
	}
	var owner string
	if rest, relay := strings.CutPrefix(id, askIDPrefix); relay {
		owner, _, _ = strings.Cut(rest, "-")
	} else {
		s.mu.Lock()
		mine := hs.outAsks > 0
		s.mu.Unlock()
		if mine {
			return false
		}
		b, err := s.g.state.Get(ctx, askRecordKey(hs.sid))
		if err != nil {
			return false // (no ask out anywhere: the go-sdk session answers)
		}
		owner = string(b)
	}
	if owner == "" || owner == s.g.replica {
		return false
	}
	msg := append([]byte("answer "+hs.ss.ID()+"\n"), body...)
	if err := s.g.state.Publish(ctx, forwardChannel(owner), msg); err != nil {
		s.g.log.Warn("passing a client's answer to the replica that asked", "error", err)
		return false
	}
	return true
}

// forwarded takes what another replica passed on to this one: a client's
// answer to a request this replica put to it.
func (g *Gateway) forwarded(msg []byte) {
	head, body, ok := bytes.Cut(msg, []byte{'\n'})
	if !ok {
		return
	}
	kind, id, _ := strings.Cut(string(head), " ")
	if g.heldForwarded(kind, id, body) {
		return // a held call's retry (heldforward.go)
	}
	if kind != "answer" {
		return
	}
	s, hs := g.heldSession(id)
	if hs == nil {
		return // (the session ended here: the call that asked with it)
	}
	if s.answer(hs, body) {
		return // a relayed call's (httpasks.go)
	}
	s.inject(hs, body)
}

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
// client sent (body, a notifications/cancelled), for a call one of them
// runs.
func (s *httpSessions) forwardCancel(ctx context.Context, hs *httpSession, body []byte) {
	if !isCancellation(body) {
		return
	}
	s.publish(ctx, "cancel "+hs.sid+" "+s.g.replica+"\n"+string(body))
}

// cancelled applies a cancellation another replica received.
func (s *httpSessions) cancelled(hs *httpSession, body []byte) {
	s.cancel(hs, body) // a relayed call's
	s.inject(hs, body) // a go-sdk call's
}

// responseID returns the id of body when it is one JSON-RPC response (an
// answer to a request to the client), as a string key.
func responseID(body []byte) (string, bool) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], bytes.TrimSpace(body))
	if err != nil {
		return "", false
	}
	if _, isRequest := rawjson.Find(ms, "method"); isRequest {
		return "", false
	}
	_, hasResult := rawjson.Find(ms, "result")
	_, hasError := rawjson.Find(ms, "error")
	idm, ok := rawjson.Find(ms, "id")
	if !ok || !(hasResult || hasError) {
		return "", false
	}
	if id, ok := rawjson.String(idm.Value); ok {
		return id, true
	}
	if _, err := strconv.ParseInt(string(idm.Value), 10, 64); err == nil {
		return string(idm.Value), true
	}
	return "", false
}

// isCancellation reports whether body is a notifications/cancelled.
func isCancellation(body []byte) bool {
	if !bytes.Contains(body, []byte("notifications/cancelled")) {
		return false
	}
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], bytes.TrimSpace(body))
	if err != nil {
		return false
	}
	m, _ := rawjson.Find(ms, "method")
	return string(m.Value) == `"notifications/cancelled"`
}

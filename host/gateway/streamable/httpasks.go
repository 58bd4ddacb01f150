package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// A server of a version before 2026-07-28 asks for input during a call by
// requests of its own (elicitation, sampling, roots). When such a call is
// relayed over HTTP for a client with a session, the gateway asks that
// client as the go-sdk handler would: on the call's own POST, which then
// answers with an event stream (the requests, then the call's response),
// and the client POSTs its answers on its session. The requests' ids are
// the gateway's own (askIDPrefix); an answer is taken only on the session
// that was asked, and only while its request waits.

// askIDPrefix starts the ids of the requests the relay puts to a client.
const askIDPrefix = "mcphost-ask-"

// relayWriter writes a relayed call's answer: one JSON response, or, once
// the call asked its client something, an event stream.
type relayWriter struct {
	mu  sync.Mutex
	w   http.ResponseWriter
	sse bool // the answer is an event stream
	end bool // the answer was written
}

// event writes msg as an event of the answer's stream, starting the stream.
func (rw *relayWriter) event(msg []byte) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.end {
		return fmt.Errorf("the call's answer was written")
	}
	if !rw.sse {
		rw.sse = true
		h := rw.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
		rw.w.WriteHeader(http.StatusOK)
	}
	return rw.writeEvent(msg)
}

func (rw *relayWriter) writeEvent(msg []byte) error {
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\n"...)
	for _, line := range bytes.Split(msg, []byte{'\n'}) {
		b = append(append(append(b, "data: "...), bytes.TrimSuffix(line, []byte{'\r'})...), '\n')
	}
	b = append(b, '\n')
	if _, err := rw.w.Write(b); err != nil {
		return err
	}
	if f, ok := rw.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// final writes the call's response: with status as JSON, or as the last
// event of the stream.
func (rw *relayWriter) final(status int, msg []byte) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.end {
		return
	}
	rw.end = true
	if rw.sse {
		rw.writeEvent(msg)
		return
	}
	writeRelayed(rw.w, status, msg)
}

// release gives the answer up to another writer (the go-sdk handler)
// unless it was begun: nothing more is written by rw, except by final when
// begun is true.
func (rw *relayWriter) release() (begun bool) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.sse {
		return true
	}
	rw.end = true
	return false
}

// abandon ends an answer that gets no response (the call was cancelled).
func (rw *relayWriter) abandon() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.end {
		return
	}
	rw.end = true
	if !rw.sse {
		rw.w.WriteHeader(http.StatusAccepted)
	}
}

// streamAsker is the Requester of a call relayed over HTTP for a client
// with a session: it asks that client on the call's stream (see above). Its
// Client is the session, as the go-sdk path's (sessionRequester).
type streamAsker struct {
	sessions *httpSessions
	hs       *httpSession
	rw       *relayWriter
	// call is the relayed call's context: an ask ends with the call, also
	// when the server's request is not tied to it (a stdio server's).
	call context.Context
}

func (a *streamAsker) Client() any { return a.hs.ss }

// RelayedCall marks a relayed call's requester (gateway.RelayedRequester).
func (*streamAsker) RelayedCall() {}

func (a *streamAsker) Capabilities() *mcp.ClientCapabilities {
	if ip := a.hs.ss.InitializeParams(); ip != nil {
		return ip.Capabilities
	}
	return nil
}

func (a *streamAsker) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	res := new(mcp.ElicitResult)
	return res, a.ask(ctx, "elicitation/create", p, res)
}

func (a *streamAsker) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	res := new(mcp.CreateMessageResult)
	return res, a.ask(ctx, "sampling/createMessage", p, res)
}

func (a *streamAsker) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	res := new(mcp.ListRootsResult)
	return res, a.ask(ctx, "roots/list", p, res)
}

// ask puts one request to the client and decodes its answer into out.
func (a *streamAsker) ask(ctx context.Context, method string, params, out any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	id, ch, forget, ok := a.sessions.awaitAnswer(a.hs)
	if !ok {
		return fmt.Errorf("asking the client: its session is closing")
	}
	defer forget()
	jid, err := jsonrpc.MakeID(id)
	if err != nil {
		return err
	}
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: jid, Method: method, Params: p})
	if err != nil {
		return err
	}
	if err := a.rw.event(msg); err != nil {
		return fmt.Errorf("asking the client: %w", err)
	}
	var answer []byte
	select {
	case answer = <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-a.call.Done():
		return fmt.Errorf("asking the client: the call ended: %w", context.Cause(a.call))
	}
	m, err := jsonrpcmsg.Decode(answer)
	if err != nil {
		return fmt.Errorf("the client's answer: %w", err)
	}
	resp, ok := m.(*jsonrpc.Response)
	switch {
	case !ok:
		return fmt.Errorf("the client's answer is not a response")
	case resp.Error != nil:
		return resp.Error
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("the client's answer to %s: %w", method, err)
	}
	return nil
}

// awaitAnswer registers a request to hs's client under a new id, and
// returns the id, the channel its answer comes on, and a function that
// forgets the request; ok is false (nothing registered) when hs is closing.
func (s *httpSessions) awaitAnswer(hs *httpSession) (id string, answer <-chan []byte, forget func(), ok bool) {
	ch := make(chan []byte, 1)
	s.mu.Lock()
	if hs.closing {
		s.mu.Unlock()
		return "", nil, nil, false
	}
	s.asked++
	id = s.f.relayAskID(hs.sid, s.asked) // (forward.go)
	if hs.asks == nil {
		hs.asks = map[string]chan []byte{}
	}
	hs.asks[id] = ch
	s.mu.Unlock()
	return id, ch, func() {
		s.mu.Lock()
		delete(hs.asks, id)
		s.mu.Unlock()
	}, true
}

// answer takes m, a POSTed response to a request a relayed call put to
// hs's client, and reports whether it did (the POST is then answered 202).
func (s *httpSessions) answer(hs *httpSession, m *wire.Message) bool {
	if m.Kind != wire.KindResponse || m.ID == nil || !bytes.Contains(m.Raw, []byte(askIDPrefix)) {
		return false
	}
	id, ok := rawjson.String(m.ID)
	if !ok {
		return false
	}
	s.mu.Lock()
	ch := hs.asks[id]
	delete(hs.asks, id)
	s.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- bytes.Clone(m.Raw)
	return true
}

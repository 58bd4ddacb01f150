package streamable

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// TestStreamAskerEndsWithItsCall: a request a relayed call put to its
// client ends with the call, also when the server's request is not tied to
// the call (a stdio server's context outlives it); an ended session's
// relayed calls are cancelled and its client is asked nothing more; an
// answer is taken once, on the session that was asked.
func TestStreamAskerEndsWithItsCall(t *testing.T) {
	t.Parallel()
	s := newHTTPSessions(&Front{askIDKeys: sealbox.Random().MACKeys(cluster.AskIDPurpose)}, time.Minute, sessionCaps{max: 1})
	hs := &httpSession{calls: map[string]context.CancelFunc{}}
	other := &httpSession{calls: map[string]context.CancelFunc{}}
	s.byID["a"], s.byID["b"] = hs, other

	call, cancelCall := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	a := &streamAsker{sessions: s, hs: hs, rw: &relayWriter{w: rec}, call: call}
	done := make(chan error, 1)
	go func() {
		_, err := a.ListRoots(context.Background(), &mcp.ListRootsParams{}) // a context that never ends
		done <- err
	}()
	id := waitAsk(t, s, hs)
	if s.answer(other, parsed(t, []byte(`{"jsonrpc":"2.0","id":"`+id+`","result":{"roots":[]}}`))) {
		t.Fatal("an answer on another session was taken")
	}
	cancelCall()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the call ended") {
			t.Fatalf("ask after its call ended: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ask outlived its call")
	}
	if s.answer(hs, parsed(t, []byte(`{"jsonrpc":"2.0","id":"`+id+`","result":{"roots":[]}}`))) {
		t.Fatal("an answer to an ask that gave up was taken")
	}
	if !strings.Contains(rec.Body.String(), `"method":"roots/list"`) || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Errorf("the ask was not written on the call's stream: %q", rec.Body.String())
	}

	// The session ends (DELETE, or closed as idle): its calls are cancelled.
	cctx, cancel := context.WithCancel(context.Background())
	forget, ok := s.track(hs, "1", cancel)
	if !ok {
		t.Fatal("track")
	}
	defer forget()
	s.end(hs)
	if cctx.Err() == nil {
		t.Error("the relayed call of an ended session was not cancelled")
	}
	if _, _, _, ok := s.awaitAnswer(hs); ok {
		t.Error("a closing session's client can still be asked")
	}
}

// waitAsk waits for hs's one pending ask and returns its id.
func waitAsk(t *testing.T, s *httpSessions, hs *httpSession) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		for id := range hs.asks {
			s.mu.Unlock()
			return id
		}
		s.mu.Unlock()
	}
	t.Fatal("no ask")
	return ""
}

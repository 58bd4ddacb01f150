package conn

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestHTTPLaneReusesConnections: 8 callers making raw calls at once on a
// streamable HTTP server keep to a few connections per caller — each
// call's connection goes back to the pool and serves a later call —
// rather than dialing a connection for many of the calls (a response body
// not read to its end, or the per-host idle pool too small for the
// callers). (Each call's stream is read to its end in the background, so
// a call may start before its predecessor's connection is free again: a
// loaded machine opens a few more than 8.)
func TestHTTPLaneReusesConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string
	}{
		{"2026-07-28", true, NewProtocol},
		{"2025-11-25", false, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, _, _, conns := recordingDemo(t, tc.stateless)
			m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
			t.Cleanup(func() { m.Close() })
			listedSession(t, m, cfg.Name)
			gen := m.Generation(context.Background(), cfg.Name)
			const callers, calls = 8, 40
			call := func() error {
				resp, handled, err := m.CallRaw(context.Background(), cfg.Name, RawCall{Tool: "echo", Args: []byte(`{"message":"hi"}`),
					ProtocolVersion: tc.version, Gen: gen, Requester: newAnswerer("a", "yes"), Asks: true})
				if err != nil || !handled {
					return fmt.Errorf("raw call: %s %v %v", resp, handled, err)
				}
				return nil
			}
			before := conns.Load()
			var wg sync.WaitGroup
			errs := make(chan error, callers)
			for range callers {
				wg.Go(func() {
					for range calls {
						if err := call(); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n := conns.Load() - before; n > 4*callers {
				t.Errorf("%d raw calls from %d callers opened %d connections (want at most %d: connections reused)", callers*calls, callers, n, 4*callers)
			}
		})
	}
}

// TestHTTPLaneServerRequestParams: a server's request on a call's event
// stream is answered from its own params, even when more events follow it
// at once: the stream's reader reuses its buffers for the next event while
// the request is being answered (the params were read from the reused
// buffer: a data race, and a question garbled or refused as invalid).
func TestHTTPLaneServerRequestParams(t *testing.T) {
	t.Parallel()
	answered := make(chan []byte, 1)
	question := strings.Repeat("is it ok? ", 20)
	cfg := hookedDemo(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"id":"q1"`)) && !bytes.Contains(body, []byte(`"method"`)) {
			answered <- body // the lane's answer to the server's request
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		id := rawIDOf(body)
		if id == "" || !bytes.Contains(body, []byte(`"asking"`)) {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"method\":\"elicitation/create\",\"params\":{\"message\":%q,\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\"}}}}}\n\n", question)
		for i := range 20 { // at once after the request, shorter: the reader reuses its buffer
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%d,\"progress\":%d,\"message\":%q}}\n\n", i, i, strings.Repeat("x", len(question)/2))
		}
		w.(http.Flusher).Flush()
		select {
		case <-answered:
		case <-r.Context().Done():
			return true
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%q,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"asked\"}]}}\n\n", id)
		return true
	})
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
	t.Cleanup(func() { m.Close() })
	listedSession(t, m, cfg.Name)
	a := newAnswerer("a", "yes")
	resp, handled, err := m.CallRaw(context.Background(), cfg.Name, RawCall{Tool: "asking", Args: []byte(`{}`), ProtocolVersion: NewProtocol,
		Gen: m.Generation(context.Background(), cfg.Name), Requester: a, Asks: true})
	if err != nil || !handled || !strings.Contains(string(resp), `"asked"`) {
		t.Fatalf("asking: %s %v %v", resp, handled, err)
	}
	select {
	case p := <-a.asked:
		if p.Message != question {
			t.Errorf("the client was asked %q, want %q", p.Message, question)
		}
	default:
		t.Error("the client was not asked (the server's request was refused)")
	}
}

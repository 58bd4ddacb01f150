package streamable

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/state"
)

// subscriptions counts the live subscriptions to the sessions channel of
// a shared state.
type subscriptions struct {
	state.Backend
	live atomic.Int64
}

func (s *subscriptions) Subscribe(channel string, fn func([]byte)) func() {
	cancel := s.Backend.Subscribe(channel, fn)
	if channel != cluster.SessionsChannel {
		return cancel
	}
	s.live.Add(1)
	return func() { s.live.Add(-1); cancel() }
}

// TestFrontEndsWithTheGateway: a front takes the sessions channel until
// its gateway closes its sessions; then it has left the channel, and its
// handler refuses every request (503) instead of serving sessions no
// replica hears of.
func TestFrontEndsWithTheGateway(t *testing.T) {
	t.Parallel()
	local, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	st := &subscriptions{Backend: local}
	h, err := host.New(&config.Config{DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	g := gateway.New(h, &gateway.Options{State: st})
	f := New(g)
	srv := httptest.NewServer(f.Handler(nil))
	defer srv.Close()
	post := func() int {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if n := st.live.Load(); n != 1 {
		t.Fatalf("%d subscriptions to the sessions channel, want the front's", n)
	}
	if code := post(); code == http.StatusServiceUnavailable {
		t.Fatalf("a request before the close refused: %d", code)
	}
	g.Close()
	if n := st.live.Load(); n != 0 {
		t.Errorf("%d subscriptions to the sessions channel after the gateway closed, want none", n)
	}
	if code := post(); code != http.StatusServiceUnavailable {
		t.Errorf("a request after the close: %d, want 503", code)
	}
}

package streamable

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// TestSessionTiedToEndpoint: a session id issued at an endpoint (/mcp/dev)
// is refused (404) at the whole gateway (/mcp) and at another endpoint,
// though all share the keys and the state; it is served where it was
// issued, as /mcp's own is. On the code before, the id opened at /mcp too:
// the session of /mcp/dev was taken up there as a whole-gateway session.
func TestSessionTiedToEndpoint(t *testing.T) {
	t.Parallel()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&config.Config{DefaultMode: "allow_all", Endpoints: []*config.Endpoint{{Name: "dev"}, {Name: "ops"}}},
		&host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	keys := sealbox.Random()
	urls := map[string]string{}
	for _, ep := range []string{"", "dev", "ops"} {
		g := gateway.New(h, &gateway.Options{Keys: keys, State: st, Endpoint: ep})
		t.Cleanup(func() { g.Close() })
		srv := httptest.NewServer(New(g).Handler(nil))
		t.Cleanup(srv.Close)
		urls[ep] = srv.URL
	}
	post := func(url, sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, issued := range []string{"", "dev"} {
		resp := post(urls[issued], "", initialize)
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("initialize at %q: %d, session %q", issued, resp.StatusCode, sid)
		}
		for _, at := range []string{"", "dev", "ops"} {
			want := http.StatusNotFound
			if at == issued {
				want = http.StatusOK
			}
			if got := post(urls[at], sid, ping).StatusCode; got != want {
				t.Errorf("session issued at %q, ping at %q: %d, want %d", issued, at, got, want)
			}
		}
	}
}

package gateway_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/internal/testing/rootstest"
)

// bearerAlice adds alice's token (gateway.UsersVerifier("alice")) to each
// request.
type bearerAlice struct{}

func (bearerAlice) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer alice")
	return http.DefaultTransport.RoundTrip(r)
}

// TestUserClientRootsChanged: over HTTP under inbound OAuth, when alice's
// client (a go-sdk client of 2025-11-25) says its roots changed, her own
// connection of a per-user server (a go-sdk server that lists the roots at
// session start and on each notifications/roots/list_changed) is told, and
// lists alice's new roots. (Before, it was not told.)
func TestUserClientRootsChanged(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 8)
	url := rootstest.Server(t, rootstest.AtStart|rootstest.OnChange, false, seen)
	ctx, cancel := context.WithCancel(context.Background())
	var gw atomic.Pointer[gateway.Gateway]
	h, err := host.New(&config.Config{Servers: []*config.Server{perUserServer("pu", url)}, DefaultMode: "allow_all"},
		&host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil },
			ClientCapabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
			OnListRoots: func(ctx context.Context, server string, u *conn.User) (*mcp.ListRootsResult, error) {
				if g := gw.Load(); g != nil {
					return g.ListRootsOutside(ctx, server, u)
				}
				return nil, nil
			}})
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.New(h, &gateway.Options{UserClients: &gateway.UserClients{}})
	gw.Store(g)
	g.Sync(ctx)
	t.Cleanup(func() {
		g.Close()
		cancel()
		h.Close()
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "alice's client"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/alice/a"})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: aliceServer(t, g), HTTPClient: &http.Client{Transport: bearerAlice{}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil { // (her client is known; her connection opened)
		t.Fatal(err)
	}
	// Her connection's sessions ask when they start: one may be told the
	// settings' roots (none), having asked before the gateway knew her
	// client (while her session was initialized); a session that opens
	// later is told hers. Once one has been, each is open.
	deadline := time.After(15 * time.Second)
	for told := false; !told; {
		select {
		case got := <-seen:
			switch got {
			case "file:///home/alice/a":
				told = true
			case "":
			default:
				t.Fatalf("alice's server listed %q at session start", got)
			}
		case <-deadline:
			t.Fatal("alice's server was not told her roots at session start")
		}
	}
	c.AddRoots(&mcp.Root{URI: "file:///home/alice/b"})
	select {
	case got := <-seen:
		if got != "file:///home/alice/a file:///home/alice/b" {
			t.Fatalf("alice's server listed %q after her change, want both her roots", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("alice's server was not told of her change")
	}
}

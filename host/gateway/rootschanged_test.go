package gateway_test

import (
	"context"
	"net/http"
	"strings"
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

// TestUserClientRootsChanged: over HTTP under inbound OAuth, when alice's
// client (a go-sdk client of 2025-11-25) says its roots changed, her own
// connection of a per-user server (a go-sdk server that lists the roots at
// session start and on each notifications/roots/list_changed) is told, and
// lists alice's new roots; bob's connection of it is not told (it lists
// again only on his own change). (Before, it was not told.)
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
	// The server's listings, by whose roots they are ("" ones, of the
	// settings' roots, dropped).
	seenBy := map[string]chan string{"alice": make(chan string, 8), "bob": make(chan string, 8)}
	go func() {
		for got := range seen {
			for who, c := range seenBy {
				if strings.Contains(got, "/home/"+who+"/") {
					c <- got
				}
			}
		}
	}()
	endpoint := usersServer(t, g, "alice", "bob")
	clients := map[string]*mcp.Client{}
	for _, who := range []string{"alice", "bob"} {
		c := mcp.NewClient(&mcp.Implementation{Name: who + "'s client"}, nil)
		c.AddRoots(&mcp.Root{URI: "file:///home/" + who + "/a"})
		clients[who] = c
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{who, http.DefaultTransport}}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if _, err := cs.ListTools(ctx, nil); err != nil { // (the client is known; the user's connection opened)
			t.Fatal(err)
		}
		// The user's connection's sessions ask when they start: one may be
		// told the settings' roots (none), having asked before the gateway
		// knew the client (while its session was initialized); a session
		// that opens later is told the user's.
		select {
		case got := <-seenBy[who]:
			if got != "file:///home/"+who+"/a" {
				t.Fatalf("%s's server listed %q at session start", who, got)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s's server was not told the roots at session start", who)
		}
	}
	// Alice's change reaches her connection, and not bob's: his server
	// lists nothing for a while (a negative: the notification, the
	// server's listing and the gateway's asking bob's client are each
	// asynchronous, no event marks them all done); bob's change then
	// reaches his, whose next listing is that.
	for _, who := range []string{"alice", "bob"} {
		if who == "bob" {
			select {
			case got := <-seenBy["bob"]:
				t.Fatalf("bob's server listed %q after alice's change", got)
			case <-time.After(300 * time.Millisecond):
			}
		}
		clients[who].AddRoots(&mcp.Root{URI: "file:///home/" + who + "/b"})
		select {
		case got := <-seenBy[who]:
			if want := "file:///home/" + who + "/a file:///home/" + who + "/b"; got != want {
				t.Fatalf("%s's server listed %q after %s's change, want %q", who, got, who, want)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("%s's server was not told of the change", who)
		}
	}
}

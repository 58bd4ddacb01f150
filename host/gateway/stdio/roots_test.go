package stdio_test

import (
	"context"
	"fmt"
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

// TestRootsAtSessionStart: a go-sdk server of 2025-11-25 asks for the
// client's roots when its session starts, outside any call, and again on
// notifications/roots/list_changed. Behind `serve` on stdio (as the CLI
// wires it: the gateway expects its one client, SoleClient, and the host
// asks the gateway, OnListRoots) it is told the one client's roots, even
// though it asks before that client is served. (Before, it was told
// none.)
func TestRootsAtSessionStart(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 8)
	url := rootstest.Server(t, rootstest.AtStart, false, seen)

	ctx := context.Background()
	g := rootsGateway(t, url) // the server asks now, before the client is served

	w, r := servePipes(t, g, nil, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "rooted-client"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/dave/project"})
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	select {
	case got := <-seen:
		if got != "file:///home/dave/project" {
			t.Fatalf("the server was told %q, want the client's root", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server's roots/list was not answered")
	}
}

// rootsGateway is a host of the streamable-HTTP servers at urls (named
// s0, s1, …) and its gateway, wired as `serve` on stdio wires them (the
// gateway expects its one client, SoleClient, and the host asks the
// gateway for roots outside a call, OnListRoots), every server connected
// and synced.
func rootsGateway(t *testing.T, urls ...string) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var servers []*config.Server
	for i, u := range urls {
		servers = append(servers, &config.Server{Name: fmt.Sprintf("s%d", i), Transport: config.TransportHTTP, URL: u, Approved: true, ConnectTimeout: 5 * time.Second})
	}
	var gw atomic.Pointer[gateway.Gateway]
	h, err := host.New(&config.Config{DefaultMode: "allow_all", Servers: servers},
		&host.Options{OutputDir: t.TempDir(), ClientCapabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
			OnListRoots: func(ctx context.Context, server string, u *conn.User) (*mcp.ListRootsResult, error) {
				if g := gw.Load(); g != nil {
					return g.ListRootsOutside(ctx, server, u)
				}
				return nil, nil
			}})
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.New(h, &gateway.Options{SoleClient: true})
	gw.Store(g)
	t.Cleanup(func() {
		g.Close()
		cancel()
		h.Close()
	})
	h.ConnectAll(ctx, nil)
	g.Sync(ctx)
	return g
}

// TestClientRootsChangedReachServers: the stdio client's own
// notifications/roots/list_changed is passed on to every server whose roots
// outside a call come from it (on stdio, all of them): two go-sdk servers of
// 2025-11-25 count the notifications they are sent and list the roots
// again on each, and see the client's new roots. (Before, the gateway
// took the client's notification and told no server: neither was sent
// one.)
func TestClientRootsChangedReachServers(t *testing.T) {
	t.Parallel()
	// Each server counts the notifications and lists the roots on each,
	// reporting on its own channel.
	var (
		seen   [2]chan string
		counts [2]atomic.Int32
		urls   []string
	)
	for i := range seen {
		seen[i] = make(chan string, 8)
		srv := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("s%d", i)}, &mcp.ServerOptions{
			RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
				counts[i].Add(1)
				rootstest.Ask(ctx, req.Session, seen[i], 10*time.Second, false)
			},
		})
		urls = append(urls, rootstest.Serve(t, srv))
	}
	g := rootsGateway(t, urls...)

	ctx := context.Background()
	w, r := servePipes(t, g, nil, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "rooted-client"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/dave/a"})
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(ctx, nil); err != nil { // (the session is initialized: the gateway knows its client)
		t.Fatal(err)
	}

	c.AddRoots(&mcp.Root{URI: "file:///home/dave/b"}) // the client sends notifications/roots/list_changed
	for i := range seen {
		select {
		case got := <-seen[i]:
			if got != "file:///home/dave/a file:///home/dave/b" {
				t.Errorf("s%d listed %q after the notification, want the client's two roots", i, got)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("s%d was not told of the client's change", i)
		}
	}
	for i := range counts {
		if n := counts[i].Load(); n != 1 {
			t.Errorf("s%d was told %d times, want once", i, n)
		}
	}
}

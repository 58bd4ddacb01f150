package stdio_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
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
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted"}, &mcp.ServerOptions{
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			go func() {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				res, err := req.Session.ListRoots(ctx, nil)
				if err != nil {
					seen <- "error: " + err.Error()
					return
				}
				var uris []string
				for _, r := range res.Roots {
					uris = append(uris, r.URI)
				}
				seen <- strings.Join(uris, " ")
			}()
		},
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	closeServer(t, srv, hs)

	ctx := context.Background()
	g := rootsGateway(t, hs.URL) // the server asks now, before the client is served

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

// closeServer ends srv's sessions and hs at the test's end.
func closeServer(t *testing.T, srv *mcp.Server, hs *httptest.Server) {
	t.Cleanup(func() {
		for ss := range srv.Sessions() { // (a request of the server's may still wait)
			ss.Close()
		}
		hs.CloseClientConnections()
		hs.Close()
	})
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
	type listing struct {
		server string
		n      int32 // notifications counted so far
		roots  string
	}
	seen := make(chan listing, 8)
	var urls []string
	for i := range 2 {
		name := fmt.Sprintf("s%d", i)
		var n atomic.Int32
		srv := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{
			RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
				k := n.Add(1)
				go func() { // (a request may not be made from a notification's handler)
					ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
					defer cancel()
					l := listing{server: name, n: k}
					res, err := req.Session.ListRoots(ctx, nil)
					if err != nil {
						l.roots = "error: " + err.Error()
					} else {
						var uris []string
						for _, r := range res.Roots {
							uris = append(uris, r.URI)
						}
						l.roots = strings.Join(uris, " ")
					}
					seen <- l
				}()
			},
		})
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{}))
		closeServer(t, srv, hs)
		urls = append(urls, hs.URL)
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
	got := map[string]listing{}
	timeout := time.After(15 * time.Second)
	for len(got) < len(urls) {
		select {
		case l := <-seen:
			if _, dup := got[l.server]; dup {
				t.Fatalf("%s was told twice: %+v", l.server, l)
			}
			got[l.server] = l
		case <-timeout:
			t.Fatalf("servers told of the client's change: %+v, want s0 and s1", got)
		}
	}
	for _, l := range got {
		if l.n != 1 || l.roots != "file:///home/dave/a file:///home/dave/b" {
			t.Errorf("%s: notification %d, listed %q; want the first, listing the client's two roots", l.server, l.n, l.roots)
		}
	}
}

package stdio_test

import (
	"context"
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
	t.Cleanup(func() {
		for ss := range srv.Sessions() { // (a request of the server's may still wait)
			ss.Close()
		}
		hs.CloseClientConnections()
		hs.Close()
	})

	ctx, cancel := context.WithCancel(context.Background())
	var gw atomic.Pointer[gateway.Gateway]
	h, err := host.New(&config.Config{DefaultMode: "allow_all", Servers: []*config.Server{
		{Name: "r", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second},
	}}, &host.Options{OutputDir: t.TempDir(), ClientCapabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
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
	h.ConnectAll(ctx, nil) // the server asks now, before the client is served
	g.Sync(ctx)

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

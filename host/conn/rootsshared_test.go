package conn

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testing/rootstest"
)

// A shared streamable-HTTP server (2025-11-25) that asks roots/list on its
// standalone stream, while one client's call is in flight, is told the
// settings' roots: the request belongs to no call, and the one client in
// flight is not asked (its roots would reach a server every user shares).
func TestRootsOutsideWhileCallInFlightShared(t *testing.T) {
	seen := make(chan string, 4)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			rootstest.Ask(ctx, req.Session, seen, 5*time.Second, false)
		},
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	cfg := &config.Server{Name: "r", Transport: config.TransportHTTP, URL: rootstest.Serve(t, srv), Approved: true, ConnectTimeout: 5 * time.Second}
	m := NewManager([]*config.Server{cfg}, &Options{
		Roots:        []*mcp.Root{{URI: "file:///settings"}},
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}},
	})
	done := make(chan struct{})
	t.Cleanup(func() { close(release); <-done; m.Close() })
	ctx := context.Background()
	if _, err := m.Session(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	alice := &rooted{answerer: newAnswerer("alice", ""), roots: []string{"file:///home/alice/secret"}}
	go func() {
		defer close(done)
		m.Call(ctx, "r", &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}, &CallOptions{Requester: alice, ClientVersion: LegacyProtocol})
	}()
	<-started
	m.SetRoots([]*mcp.Root{{URI: "file:///settings2"}})
	// (The go-sdk client notifies on each of SetRoots' changes: the server
	// may ask twice, seeing no roots between them.)
	for {
		select {
		case got := <-seen:
			if got == "file:///settings2" {
				return
			}
			if got != "" {
				t.Fatalf("the server asking roots outside any call was told %q, want the settings' roots", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the server was never told the settings' roots")
		}
	}
}

// The roots capability a server is told: listChanged wherever roots are
// answered outside calls (settings { roots }, OnListRoots), so that
// SetRoots' notification is sent; none where the embedder offers
// capabilities without roots (a stdio gateway's client that has none).
func TestRootsCapabilityOffered(t *testing.T) {
	onList := func(context.Context, string, *User) (*mcp.ListRootsResult, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		opts *Options
		want string // "" none, else listChanged's value
	}{
		{"host's own, with roots", &Options{Roots: []*mcp.Root{{URI: "file:///a"}}}, "true"},
		{"host's own, without", &Options{}, ""},
		{"offered roots, settings roots", &Options{Roots: []*mcp.Root{{URI: "file:///a"}}, Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}}, "true"},
		{"offered roots, OnListRoots", &Options{OnListRoots: onList, Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}}, "true"},
		{"offered roots, nothing outside calls", &Options{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}}, "false"},
		{"offered no roots, settings roots", &Options{Roots: []*mcp.Root{{URI: "file:///a"}}, OnListRoots: onList, Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan string, 1)
			srv := mcp.NewServer(&mcp.Implementation{Name: "caps"}, &mcp.ServerOptions{
				InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
					c := req.Session.InitializeParams().Capabilities
					switch {
					case c == nil || c.RootsV2 == nil:
						got <- ""
					default:
						got <- fmt.Sprint(c.RootsV2.ListChanged)
					}
				},
			})
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
			cfg := &config.Server{Name: "c", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}
			tc.opts.ProtocolVersion = LegacyProtocol
			m := NewManager([]*config.Server{cfg}, tc.opts)
			t.Cleanup(func() { m.Close() })
			if _, err := m.Session(context.Background(), "c"); err != nil {
				t.Fatal(err)
			}
			select {
			case g := <-got:
				if g != tc.want {
					t.Fatalf("the server was told roots %q, want %q", g, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("never initialized")
			}
		})
	}
}

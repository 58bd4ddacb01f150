package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
)

// TestPerUserResourceSubscriptions: a user's resources/subscribe to a
// per-user server's resource (its qualified URI) is made through the
// user's own connection, and the notifications/resources/updated of that
// connection reach that user's subscribed session, under the qualified
// URI, and no other user's (bob, subscribed to the same URI through his
// own connection, gets only his own); an unsubscribe unsubscribes
// upstream and the updates stop. The user's connection renews the
// subscription when it reconnects. For a 2025-11-25 client's session and a
// 2026-07-28 client's subscriptions/listen stream. (Before, every
// subscribe to a per-user server's resource was refused as not supported.)
func TestPerUserResourceSubscriptions(t *testing.T) {
	t.Parallel()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			// Each upstream session gets a server of its own, so that one user's
			// connection alone is sent an update; its prompt "whoami" says which.
			var mu sync.Mutex
			type upstream struct {
				server *mcp.Server
				subs   chan string // "subscribe URI", "unsubscribe URI"
			}
			var ups []*upstream
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
				mu.Lock()
				defer mu.Unlock()
				u := &upstream{subs: make(chan string, 10)}
				u.server = mcp.NewServer(&mcp.Implementation{Name: "pu", Version: "1"}, &mcp.ServerOptions{
					SubscribeHandler: func(_ context.Context, r *mcp.SubscribeRequest) error {
						u.subs <- "subscribe " + r.Params.URI
						return nil
					},
					UnsubscribeHandler: func(_ context.Context, r *mcp.UnsubscribeRequest) error {
						u.subs <- "unsubscribe " + r.Params.URI
						return nil
					}})
				who := fmt.Sprint(len(ups))
				u.server.AddPrompt(&mcp.Prompt{Name: "whoami"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: who}}}}, nil
				})
				u.server.AddResource(&mcp.Resource{URI: "note://n", Name: "n"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: who}}}, nil
				})
				ups = append(ups, u)
				return u.server
			}, nil))
			t.Cleanup(up.Close)
			ctx, cancel := context.WithCancel(context.Background())
			h, err := host.New(&config.Config{Servers: []*config.Server{perUserServer("pu", up.URL)}, DefaultMode: "allow_all"},
				&host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			g := gateway.New(h, nil)
			g.Sync(ctx)
			t.Cleanup(func() {
				g.Close()
				cancel()
				h.Close()
			})
			url := usersServer(t, g, "alice", "bob")
			const uri = "mcphost://pu/note://n"

			type user struct {
				cs      *mcp.ClientSession
				updated chan string
				up      *upstream // its own upstream session's
			}
			users := map[string]*user{}
			for _, name := range []string{"alice", "bob"} {
				u := &user{updated: make(chan string, 10)}
				c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { u.updated <- r.Params.URI }})
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{name, http.DefaultTransport}}},
					&mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				u.cs = cs
				res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__pu__whoami"})
				if err != nil {
					t.Fatalf("%s: get mcp__pu__whoami: %v", name, err)
				}
				var i int
				fmt.Sscan(res.Messages[0].Content.(*mcp.TextContent).Text, &i)
				mu.Lock()
				u.up = ups[i]
				mu.Unlock()
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("%s: subscribe to %s: %v", name, uri, err)
				}
				if got := wait(t, u.up.subs, name+"'s upstream subscribe"); got != "subscribe note://n" {
					t.Fatalf("%s's upstream got %q, want subscribe note://n", name, got)
				}
				users[name] = u
			}
			if users["alice"].up == users["bob"].up {
				t.Fatal("alice and bob share an upstream session")
			}
			// quiet fails the test if ch gets anything within a while.
			quiet := func(ch chan string, what string) {
				t.Helper()
				select {
				case got := <-ch:
					t.Errorf("%s: got %q, want nothing", what, got)
				case <-time.After(200 * time.Millisecond):
				}
			}
			for _, name := range []string{"alice", "bob"} {
				other := map[string]string{"alice": "bob", "bob": "alice"}[name]
				users[name].up.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "note://n"})
				if got := wait(t, users[name].updated, name+"'s update"); got != uri {
					t.Errorf("%s: resources/updated of %q, want %q", name, got, uri)
				}
				quiet(users[other].updated, other+" after "+name+"'s update")
			}

			// alice's upstream session ends: her connection reconnects (on
			// her next request) and renews her subscription on its new
			// session, whose updates reach her.
			for ss := range users["alice"].up.server.Sessions() {
				ss.Close()
			}
			var renewed *upstream
			for try := 0; renewed == nil; try++ {
				if try == 50 {
					t.Fatal("alice: her connection did not reconnect")
				}
				res, err := users["alice"].cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__pu__whoami"})
				if err == nil {
					var i int
					fmt.Sscan(res.Messages[0].Content.(*mcp.TextContent).Text, &i)
					mu.Lock()
					if ups[i] != users["alice"].up {
						renewed = ups[i]
					}
					mu.Unlock()
				}
				if renewed == nil {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if got := wait(t, renewed.subs, "alice's renewed upstream subscribe"); got != "subscribe note://n" {
				t.Fatalf("alice's new upstream session got %q, want subscribe note://n", got)
			}
			users["alice"].up = renewed
			renewed.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "note://n"})
			if got := wait(t, users["alice"].updated, "alice's update after the reconnect"); got != uri {
				t.Errorf("alice: resources/updated of %q after the reconnect, want %q", got, uri)
			}
			quiet(users["bob"].updated, "bob after alice's update")

			// alice unsubscribes: her connection unsubscribes upstream; bob's
			// subscription stays.
			if err := users["alice"].cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
				t.Fatalf("alice: unsubscribe: %v", err)
			}
			if got := wait(t, users["alice"].up.subs, "alice's upstream unsubscribe"); got != "unsubscribe note://n" {
				t.Fatalf("alice's upstream got %q, want unsubscribe note://n", got)
			}
			users["alice"].up.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "note://n"})
			users["bob"].up.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "note://n"})
			if got := wait(t, users["bob"].updated, "bob's update after alice's unsubscribe"); got != uri {
				t.Errorf("bob: resources/updated of %q, want %q", got, uri)
			}
			quiet(users["alice"].updated, "alice after her unsubscribe")
			quiet(users["bob"].up.subs, "bob's upstream after alice's unsubscribe")
		})
	}
}

// wait returns what ch gets next, failing the test after 10s.
func wait(t *testing.T, ch chan string, what string) string {
	t.Helper()
	select {
	case got := <-ch:
		return got
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing after 10s", what)
		return ""
	}
}

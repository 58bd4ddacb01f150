package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// TestLegacySessionResourceUpdates: a 2025-11-25 client subscribed to a
// stdio server's resource calls a tool that changes it (touch): the call
// runs on a second session, a process of its own, which reports the update
// to its own subscribers only. The gateway's subscriptions are made there
// too — when the second session opens after the subscription, and on one
// already open — so the update reaches the client. (Before, the second
// process had no subscription and the update was lost.)
func TestLegacySessionResourceUpdates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		openFirst bool // a call opens the second session before the subscription
	}{
		{"subscribed before the second session opens", false},
		{"subscribed while it is open", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough")}})
			updates := make(chan string, 16)
			cs := p.dial(t, oldProtocol, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			})
			ctx := context.Background()
			touch := func(uri string) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__touch", Arguments: map[string]any{"uri": uri}})
				if err != nil || res.IsError {
					t.Fatalf("touch %s: %v %+v", uri, err, res)
				}
			}
			const readme = "demo://readme"
			if tc.openFirst {
				touch("demo://whoami") // (not subscribed: no update)
				if n := p.h.Connections().SecondSessions(ctx, "a"); n != 1 {
					t.Fatalf("%d second sessions open, want 1", n)
				}
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: readme}); err != nil {
				t.Fatal(err)
			}
			touch(readme)
			if n := p.h.Connections().SecondSessions(ctx, "a"); n != 1 {
				t.Fatalf("%d second sessions open, want 1 (the touch ran on the first session?)", n)
			}
			select {
			case u := <-updates:
				if u != readme {
					t.Fatalf("update of %q, want %q", u, readme)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the update of the touch on the second session did not reach the subscribed client")
			}
		})
	}
}

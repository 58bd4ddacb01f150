package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestSubscribeAgainAfterUnsubscribe: with one gateway, a 2025-11-25
// client's subscription is in place upstream when its subscribe is
// answered, also after the session's only subscription was removed (and
// for the same resource again): the update of a touch made at once reaches
// the client, and none after the unsubscription. (Upstream, at 2026-07-28,
// a subscription is a subscriptions/listen request, which go-sdk's
// ClientSession.Subscribe does not await; its POST returns with the
// server's acknowledgment, sent once the server holds the subscription.)
// Across replicas the replica holding the client's stream subscribes
// after the answer (TestSubscriptionsAcrossReplicas).
func TestSubscribeAgainAfterUnsubscribe(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func() func(*http.Request) *mcp.Server {
		srv := demoserver.New(&demoserver.Options{Name: "a", Passthrough: true})
		return func(*http.Request) *mcp.Server { return srv }
	}(), nil))
	t.Cleanup(upstream.Close)
	a := &config.Server{Name: "a", Transport: "http", URL: upstream.URL, Approved: true, ConnectTimeout: 10 * time.Second}
	p := ptServe(t, ptOptions{servers: []*config.Server{a}})
	updates := make(chan string, 64)
	cs := p.dial(t, oldProtocol, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
	})
	ctx := context.Background()
	touch := func(uri string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__touch", Arguments: map[string]any{"uri": uri}})
		if err != nil || res.IsError {
			t.Fatalf("touch %s: %v %+v", uri, err, res)
		}
	}
	next := func(wait time.Duration) (string, bool) {
		select {
		case u := <-updates:
			return u, true
		case <-time.After(wait): // (waiting for a notification that may not come)
			return "", false
		}
	}
	const readme, whoami = "demo://readme", "demo://whoami"
	for i, uri := range []string{readme, whoami, readme} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		touch(uri)
		if u, ok := next(5 * time.Second); !ok || u != uri {
			t.Fatalf("subscription %d (%s): update %q %v", i, uri, u, ok)
		}
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		touch(uri)
		if u, ok := next(300 * time.Millisecond); ok {
			t.Fatalf("after unsubscription %d (%s): update %q", i, uri, u)
		}
	}
}

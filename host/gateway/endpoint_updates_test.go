package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
)

// TestEndpointForeignUpdate: a client of endpoint dev (server a),
// subscribed to a's demo://readme, is not told of b's demo://readme's
// update (b is outside dev). On the code before, resourceUpdated passed
// b's update under its raw URI to dev's sessions subscribed to a's.
func TestEndpointForeignUpdate(t *testing.T) {
	h := reviewHost(t, []*config.Server{withoutLegacy(demo("a", "-passthrough")), withoutLegacy(demo("b", "-passthrough"))},
		[]*config.Endpoint{{Name: "dev", Servers: []string{"a"}}})
	whole := gateway.New(h, nil)
	t.Cleanup(func() { whole.Close() })
	whole.Sync(context.Background())
	dev := gateway.New(h, &gateway.Options{Endpoint: "dev"})
	t.Cleanup(func() { dev.Close() })
	dev.Sync(context.Background())
	got := make(chan string, 10)
	dcs := connectFront(t, dev, "http", "2025-11-25", &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		got <- r.Params.URI
	}})
	ctx := context.Background()
	if err := dcs.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://readme"}); err != nil {
		t.Fatal(err)
	}
	wcs := connectFront(t, whole, "http", "2025-11-25", nil)
	if err := wcs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mcphost://b/demo://readme"}); err != nil {
		t.Fatal(err)
	}
	r, err := wcs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__b__touch", Arguments: map[string]any{"uri": "demo://readme"}})
	if err != nil || r.IsError {
		t.Fatal(err, r)
	}
	select {
	case u := <-got:
		t.Errorf("dev's client (subscribed to a's demo://readme) told %s updated: b's update, a server outside the endpoint", u)
	case <-time.After(2 * time.Second):
	}
}

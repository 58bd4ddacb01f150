package gateway_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/registry"
)

// TestSyncAppliesInReadOrder: Syncs run at once (the watch loop's, a
// finished login's); one that read the registry before a change must never
// apply its older lists — the served tools, the search index — after one
// that read it after the change. The interleaving is forced: Sync A reads
// and is held; a server adds a tool; Sync B starts, and A is let go once B
// has either ended (nothing serializes them: A then applies its older list
// last) or is waiting for A.
func TestSyncAppliesInReadOrder(t *testing.T) {
	t.Parallel()
	for _, search := range []bool{false, true} {
		name := "plain"
		if search {
			name = "tool-search"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cancel()
				h.Close()
			})
			h.ConnectAll(ctx, nil)
			g := gateway.New(h, &gateway.Options{ToolSearch: search})
			t.Cleanup(func() { g.Close() })

			var reads atomic.Int32
			aRead, releaseA := make(chan struct{}), make(chan struct{})
			bWaits := make(chan struct{}, 1)
			// Both Syncs are traced (their points: gateway.WithSyncTrace).
			traced := gateway.WithSyncTrace(ctx, func(point string) {
				switch point {
				case "read":
					if reads.Add(1) == 1 {
						close(aRead)
						<-releaseA
					}
				case "wait":
					select {
					case bWaits <- struct{}{}:
					default:
					}
				}
			})
			aDone := make(chan struct{})
			go func() {
				defer close(aDone)
				g.Sync(traced)
			}()
			<-aRead // A has the list without the new tool

			changed := make(chan struct{}, 1)
			h.Registry().OnChange(func(string) {
				select {
				case changed <- struct{}{}:
				default:
				}
			})
			if res, err := h.CallTool(ctx, "mcp__a__add_tool", map[string]any{"name": "zebra"}, nil); err != nil || res.IsError {
				t.Fatalf("add_tool: %v %+v", err, res)
			}
			for {
				<-changed // the server's list_changed reached the registry
				tools, _ := h.Tools(ctx)
				if slices.ContainsFunc(tools, func(tl *registry.Tool) bool { return tl.Name == "mcp__a__zebra" }) {
					break
				}
			}

			bDone := make(chan struct{})
			go func() {
				defer close(bDone)
				g.Sync(traced)
			}()
			select {
			case <-bDone: // B read and applied the new list before A applied
			case <-bWaits: // B waits for A
			}
			close(releaseA)
			<-aDone
			<-bDone

			st, ct := mcp.NewInMemoryTransports()
			if _, err := g.Server().Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "sync-test"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__zebra", Arguments: map[string]any{"message": "m"}})
			if err != nil || res.IsError {
				t.Errorf("the tool added before the last Sync read is not served: %v %+v", err, res)
			}
			if search {
				res := callFound(t, cs, "mcp__a__zebra", map[string]any{"message": "m"})
				if res.IsError {
					t.Errorf("the tool added before the last Sync read is not in the search index: %s", host.TextOf(res.Content))
				}
			}
		})
	}
}

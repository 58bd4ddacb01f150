package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/testing/rootstest"
)

// TestReloadRoots: settings { roots } answer a server's roots/list outside
// any call; a reload that changes them sends the server
// notifications/roots/list_changed, after which it is told the new ones.
// (Before, such a server was told no roots, and nothing on reload.)
func TestReloadRoots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts func(*host.Options)
	}{
		{"host's own capabilities", func(*host.Options) {}},
		{"serve's capabilities", func(o *host.Options) {
			// (as `mcphost serve` offers them: roots without listChanged,
			// and OnListRoots, which has no answer over HTTP)
			o.ClientCapabilities = &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
				Sampling:    &mcp.SamplingCapabilities{},
				RootsV2:     &mcp.RootCapabilities{},
			}
			o.OnListRoots = func(context.Context, string, *conn.User) (*mcp.ListRootsResult, error) { return nil, nil }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testReloadRoots(t, tc.opts)
		})
	}
}

func testReloadRoots(t *testing.T, opts func(*host.Options)) {
	seen := make(chan string, 8)
	url := rootstest.Server(t, rootstest.AtStart|rootstest.OnChange, false, seen)
	cfg := func(roots ...string) *config.Config {
		c := &config.Config{DefaultMode: "allow_all", Servers: []*config.Server{
			{Name: "r", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}}
		for _, r := range roots {
			c.Settings.Roots = append(c.Settings.Roots, &mcp.Root{URI: r})
		}
		return c
	}
	o := &host.Options{OutputDir: t.TempDir()}
	opts(o)
	h, err := host.New(cfg("file:///src"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	if _, err := h.Connections().Session(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	wait := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for got := ""; got != want; {
			select {
			case got = <-seen:
			case <-deadline:
				t.Fatalf("the server was last told %q, want %q", got, want)
			}
		}
	}
	wait("file:///src")
	if _, err := h.Reload(ctx, cfg("file:///src", "file:///work"), time.Second); err != nil {
		t.Fatal(err)
	}
	wait("file:///src file:///work")
}

package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// TestInterceptorServerNotServed: a server named by an interceptor block
// (config.Server.InterceptorOnly; here the demo server, which has tools,
// prompts and resources) is connected but none of its features is served
// on either front, a call of its tool is refused as unknown, and it does
// not count for ready_when = "all" (one that cannot even start leaves the
// gateway ready). (Before, the gateway served its tools like any server's,
// and /readyz stayed 503.)
func TestInterceptorServerNotServed(t *testing.T) {
	t.Parallel()
	ic := demotest.Server("ic")
	ic.InterceptorOnly = true
	dead := &config.Server{Name: "dead", Transport: config.TransportStdio, Command: "/nonexistent/interceptor-server",
		Approved: true, ConnectTimeout: 5 * time.Second, InterceptorOnly: true}
	// (Servers in name order, as a loaded configuration has them.)
	cfg := &config.Config{Servers: []*config.Server{demotest.Server("d"), dead, ic}, DefaultMode: "allow_all"}
	cfg.Settings.ReadyWhen = config.ReadyAll
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	h.ConnectAll(ctx, nil)
	if _, err := h.Connections().Session(ctx, "ic"); err != nil {
		t.Fatalf("the interceptor server is not connected: %v", err)
	}
	g := gateway.New(h, nil)
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	for _, front := range []string{"stdio", "http"} {
		t.Run(front, func(t *testing.T) {
			cs := connectFront(t, g, front, "2025-11-25", nil)
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			all := strings.Join(names, " ")
			if !strings.Contains(all, "mcp__d__echo") || strings.Contains(all, "__ic__") || strings.Contains(all, "__dead__") {
				t.Errorf("tools: %s", all)
			}
			if ps := strings.Join(promptNames(t, cs), " "); strings.Contains(ps, "__ic__") || !strings.Contains(ps, "__d__") {
				t.Errorf("prompts: %s", ps)
			}
			if n := len(resourceURIs(t, cs)); n != len(resourceURIsOf(t, h, "d")) {
				t.Errorf("resources: %q, want d's %d only", resourceURIs(t, cs), n)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ic__echo", Arguments: map[string]any{"message": "x"}})
			if err == nil && !res.IsError {
				t.Errorf("the interceptor server's tool was called: %+v", res)
			}
		})
	}
	mux := http.NewServeMux()
	streamable.New(g).MountHealth(mux, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var hs struct {
		Servers []struct {
			Name        string `json:"name"`
			Interceptor bool   `json:"interceptor"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(body, &hs); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz %d: %s", resp.StatusCode, body)
	}
	for _, s := range hs.Servers {
		if s.Interceptor != (s.Name == "ic" || s.Name == "dead") {
			t.Errorf("/readyz: %s", body)
		}
	}
}

// resourceURIsOf are the URIs of server's own resources, through the host.
func resourceURIsOf(t *testing.T, h *host.Host, server string) []string {
	t.Helper()
	rs, problems := h.Resources(context.Background(), server)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.URI)
	}
	return out
}

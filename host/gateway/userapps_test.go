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

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
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
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{s}, Permissions: []config.PermissionRule{deny}, DefaultMode: "allow_all"},
		&host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.New(h, nil)
	g.Sync(ctx)
	srv := httptest.NewServer(streamable.New(g).Handler(&streamable.Options{OAuth: &streamable.InboundOAuth{
		Verify: gateway.UsersVerifier("alice", "bob", "carol"), Resource: "http://gateway.example/mcp"}}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		g.Close()
		cancel()
		h.Close()
	})
	// rpc sends a 2026-07-28 request of user's, standing alone.
	id := 0
	rpc := func(user, method, params string) (result map[string]any, errMsg string) {
		t.Helper()
		id++
		var p struct{ URI, Name string }
		json.Unmarshal([]byte(params), &p)
		headers := map[string]string{"Authorization": "Bearer " + user, "Mcp-Protocol-Version": newProtocol, "Mcp-Method": method}
		if n := p.URI + p.Name; n != "" {
			headers["Mcp-Name"] = n
		}
		params = strings.Replace(params, "{", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+newProtocol+
			`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},`, 1)
		params = strings.Replace(params, ",}", "}", 1)
		_, body := post(t, srv.URL, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), headers)
		var out struct {
			Result map[string]any
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal([]byte(answerOf(body)), &out); err != nil {
			t.Fatalf("%s %s: %s (%v)", method, params, body, err)
		}
		if out.Error != nil {
			return nil, out.Error.Message
		}
		return out.Result, ""
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

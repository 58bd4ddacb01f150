package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
)

// userMetaGateway is a gateway whose two servers are per user (OAuth
// per_user; neither asks for a login, so alice's connections need none):
// "pu", a go-sdk server holding metaTool and the MCP Apps resource its
// _meta names, and "pr", the raw server of execution_test.go, whose tool
// "job" has an execution. It returns the URL of the gateway's HTTP front,
// where alice is a user.
func userMetaGateway(t *testing.T) string {
	t.Helper()
	return userMetaGatewayWith(t, nil)
}

// userMetaGatewayWith is userMetaGateway with the gateway's opts.
func userMetaGatewayWith(t *testing.T, opts *gateway.Options) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "pu", Version: "1"}, nil)
	server.AddTool(metaTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil
	})
	server.AddResource(&mcp.Resource{URI: "ui://charts/show.html", Name: "show", MIMEType: "text/html;profile=mcp-app"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: "<p>pu</p>",
				Meta: mcp.Meta{"ui": map[string]any{"prefersBorder": true}}}}}, nil
		})
	pu := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(pu.Close)
	pr := httptest.NewServer(rawToolsHTTP(true, false))
	t.Cleanup(pr.Close)
	g, _ := userGateway(t, &config.Config{Servers: []*config.Server{perUserServer("pu", pu.URL), perUserServer("pr", pr.URL)}, DefaultMode: "allow_all"}, false, opts)
	return aliceServer(t, g)
}

// aliceRPC returns a raw JSON-RPC client of alice's of version at url (a
// 2025-11-25 session, opened on first use, or 2026-07-28 requests standing
// alone): raw, as a go-sdk client would drop "execution".
func aliceRPC(t *testing.T, url, version string) func(method, params string) map[string]any {
	rpc := aliceRawRPC(t, url, version)
	return func(method, params string) map[string]any {
		t.Helper()
		res, msg := rpc(method, params)
		if res == nil {
			t.Fatalf("%s %s: no result (error %q)", method, params, msg)
		}
		return res
	}
}

// userGateway serves a gateway of opts over a host of cfg (connecting its
// servers first if connect), synced, with a context it closes, cancels
// (the context returned) and closes its host with at the test's end.
func userGateway(t *testing.T, cfg *config.Config, connect bool, opts *gateway.Options) (*gateway.Gateway, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if connect {
		h.ConnectAll(ctx, nil)
	}
	g := gateway.New(h, opts)
	g.Sync(ctx)
	t.Cleanup(func() {
		g.Close()
		cancel()
		h.Close()
	})
	return g, ctx
}

// perUserServer is a per-user server (OAuth per_user, no login needed) at
// url: the user's own connection to it.
func perUserServer(name, url string) *config.Server {
	return &config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second,
		OAuth:  &config.OAuth{Grant: config.GrantAuthorizationCode, PerUser: true, AllowLoopback: true},
		Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
}

// showServer is a go-sdk server "pu" with a tool "show" whose _meta names
// the MCP Apps resource ui://charts/show.html (not added).
func showServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "pu", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "show", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://charts/show.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	return server
}

// TestPerUserDefinitionsPassThrough: the tools of per-user servers, added
// to a user's tools/list, carry all their servers say (title, description,
// annotations, output schema, icons, _meta less reserved members,
// execution), for clients of both eras; an MCP Apps tool's
// ui.resourceUri names its server's resource qualified
// (ui://mcphost/SERVER/…), which the user reads through their own
// connection, _meta and all.
func TestPerUserDefinitionsPassThrough(t *testing.T) {
	t.Parallel()
	url := userMetaGateway(t)
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			rpc := aliceRPC(t, url, version)
			res := rpc("tools/list", `{}`)
			var list struct{ Tools []json.RawMessage }
			b, _ := json.Marshal(res)
			json.Unmarshal(b, &list)
			byName := map[string]json.RawMessage{}
			for _, raw := range list.Tools {
				var n struct{ Name string }
				json.Unmarshal(raw, &n)
				byName[n.Name] = raw
			}
			var show mcp.Tool
			if err := json.Unmarshal(byName["mcp__pu__show"], &show); err != nil {
				t.Fatalf("mcp__pu__show in %s: %v", b, err)
			}
			want := metaTool()
			const qualified = "ui://mcphost/pu/charts/show.html"
			wantMeta := mcp.Meta{"ui": map[string]any{"resourceUri": qualified}, "anthropic/alwaysLoad": true}
			if show.Title != want.Title || show.Description != want.Description || !reflect.DeepEqual(show.Icons, want.Icons) ||
				!reflect.DeepEqual(show.Meta, wantMeta) || show.Annotations == nil || show.Annotations.Title != want.Annotations.Title ||
				show.OutputSchema == nil {
				t.Errorf("mcp__pu__show: %s\nwant title, description, icons, annotations, output schema and _meta %v", byName["mcp__pu__show"], wantMeta)
			}
			var job struct {
				Execution any
				Meta      map[string]any `json:"_meta"`
			}
			json.Unmarshal(byName["mcp__pr__job"], &job)
			if !reflect.DeepEqual(job.Execution, rawExecution) || !reflect.DeepEqual(job.Meta, map[string]any{"vendor/hint": "kept"}) {
				t.Errorf("mcp__pr__job: %s, want execution %v", byName["mcp__pr__job"], rawExecution)
			}
			read := rpc("resources/read", `{"uri":"`+qualified+`"}`)
			if read["cacheScope"] != "private" {
				t.Errorf("read %s: cacheScope %v, want private (read through alice's own connection)", qualified, read["cacheScope"])
			}
			rb, _ := json.Marshal(read)
			var rr mcp.ReadResourceResult
			json.Unmarshal(rb, &rr)
			if len(rr.Contents) != 1 || rr.Contents[0].Text != "<p>pu</p>" || rr.Contents[0].MIMEType != "text/html;profile=mcp-app" ||
				!reflect.DeepEqual(rr.Contents[0].Meta, mcp.Meta{"ui": map[string]any{"prefersBorder": true}}) {
				t.Errorf("read %s: %s", qualified, rb)
			}
		})
	}
}

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
)

// TestPerUserResourceOutsideEndpoint: a per-user server's resources, read
// by their qualified URIs (ui://mcphost/SERVER/… for an MCP Apps resource,
// mcphost://SERVER/… for any other), are served by the whole gateway and by
// an endpoint whose servers include the server, and refused as resources
// that do not exist by an endpoint whose servers do not (nor is the
// server's tool listed there), for clients of both eras. (Before, the read
// of a qualified URI went to the per-user server whatever the endpoint:
// userResource did not ask inEndpoint.)
func TestPerUserResourceOutsideEndpoint(t *testing.T) {
	t.Parallel()
	server := showServer()
	for _, uri := range []string{"ui://charts/show.html", "note://n"} {
		server.AddResource(&mcp.Resource{URI: uri, Name: uri},
			func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "content of " + r.Params.URI}}}, nil
			})
	}
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(upstream.Close)
	// pu and pv: two per-user servers (no login needed) of the same
	// upstream.
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{perUserServer("pu", upstream.URL), perUserServer("pv", upstream.URL)}, DefaultMode: "allow_all",
		Endpoints: []*config.Endpoint{{Name: "dev", Servers: []string{"pv"}}, {Name: "both", Servers: []string{"pu", "pv"}}}},
		&host.Options{OutputDir: t.TempDir(), PresentAuthURL: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	urls := map[string]string{}
	for _, endpoint := range []string{"", "dev", "both"} {
		g := gateway.New(h, &gateway.Options{Endpoint: endpoint})
		t.Cleanup(func() { g.Close() })
		g.Sync(ctx)
		urls[endpoint] = aliceServer(t, g)
	}
	tests := []struct {
		endpoint, uri string
		served        bool
	}{
		{"", "ui://mcphost/pu/charts/show.html", true},
		{"", "mcphost://pu/note://n", true},
		{"both", "ui://mcphost/pu/charts/show.html", true},
		{"both", "mcphost://pu/note://n", true},
		{"dev", "ui://mcphost/pv/charts/show.html", true},
		{"dev", "mcphost://pv/note://n", true},
		{"dev", "ui://mcphost/pu/charts/show.html", false},
		{"dev", "mcphost://pu/note://n", false},
	}
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			rpcs := map[string]func(method, params string) (map[string]any, string){}
			for endpoint, url := range urls {
				rpcs[endpoint] = aliceRawRPC(t, url, version)
			}
			list, msg := rpcs["dev"]("tools/list", `{}`)
			if b, _ := json.Marshal(list); msg != "" || strings.Contains(string(b), "mcp__pu__") || !strings.Contains(string(b), `"mcp__pv__show"`) {
				t.Errorf("alice's tools/list at dev: %s %s, want pv's tool and none of pu's", b, msg)
			}
			for _, tt := range tests {
				res, msg := rpcs[tt.endpoint]("resources/read", `{"uri":"`+tt.uri+`"}`)
				contents, _ := res["contents"].([]any)
				switch {
				case tt.served && (len(contents) != 1 || !strings.HasPrefix(fmt.Sprint(contents[0].(map[string]any)["text"]), "content of ")):
					t.Errorf("endpoint %q: read %s: %v %q, want the server's resource", tt.endpoint, tt.uri, res, msg)
				case !tt.served && (res != nil || !strings.Contains(strings.ToLower(msg), "not found")):
					t.Errorf("endpoint %q: read %s: %v %q, want refused as a resource that does not exist", tt.endpoint, tt.uri, res, msg)
				}
			}
		})
	}
}

// aliceRawRPC is aliceRPC answering the error's message, if any, in place
// of failing the test.
func aliceRawRPC(t *testing.T, url, version string) func(method, params string) (map[string]any, string) {
	return userRawRPC(t, url, version, "alice")
}

// userRawRPC is aliceRawRPC of user (whose bearer token is its name: see
// usersServer).
func userRawRPC(t *testing.T, url, version, user string) func(method, params string) (map[string]any, string) {
	var sid string
	id := 10
	return func(method, params string) (map[string]any, string) {
		t.Helper()
		headers := map[string]string{"Authorization": "Bearer " + user}
		if version >= newProtocol {
			headers["Mcp-Protocol-Version"] = version
			headers["Mcp-Method"] = method
			var p struct{ URI, Name string }
			json.Unmarshal([]byte(params), &p)
			if n := p.URI + p.Name; n != "" {
				headers["Mcp-Name"] = n
			}
			params = strings.Replace(params, "{", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+version+
				`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}},`, 1)
			params = strings.Replace(params, ",}", "}", 1)
		} else if sid == "" {
			resp, _ := post(t, url, strings.Replace(initialize, "2025-06-18", version, 1), headers)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize: %s", resp.Status)
			}
			sid = resp.Header.Get("Mcp-Session-Id")
			headers["Mcp-Session-Id"], headers["Mcp-Protocol-Version"] = sid, version
			post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers)
		}
		if sid != "" {
			headers["Mcp-Session-Id"], headers["Mcp-Protocol-Version"] = sid, version
		}
		id++
		_, body := post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), headers)
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
}

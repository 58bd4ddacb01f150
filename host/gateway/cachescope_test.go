package gateway_test

import (
	"bufio"
	"testing"

	"github.com/mcphost/mcphost/host/gateway"
)

// TestCacheScope: a list that may differ from one principal to
// another is served with cacheScope "private" — a user's lists where
// per-user servers' tools, prompts and resources are added, every list where permission rules
// apply to some principals only — and the same list for all stays
// "public" (with inbound OAuth, and on a front without principals).
func TestCacheScope(t *testing.T) {
	t.Parallel()
	lists := []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		want map[string]string // by list; absent: public
	}{
		{"per-user servers", userMetaGateway, map[string]string{"tools/list": "private", "prompts/list": "private", "resources/list": "private", "resources/templates/list": "private"}},
		// (tools/list holds search_tools and call_tool only: the same for
		// all, per-user servers or not; their prompts and resources are
		// listed still.)
		{"per-user servers, tool search", func(t *testing.T) string {
			return userMetaGatewayWith(t, &gateway.Options{ToolSearch: true})
		}, map[string]string{"prompts/list": "private", "resources/list": "private", "resources/templates/list": "private"}},
		{"principal rules", func(t *testing.T) string {
			g, _, _ := hiddenGateway(t)
			return aliceServer(t, g)
		}, map[string]string{"tools/list": "private", "prompts/list": "private", "resources/list": "private", "resources/templates/list": "private"}},
		{"shared", func(t *testing.T) string {
			return aliceServer(t, ptServe(t, ptOptions{servers: widgetServers(t)}).g)
		}, nil},
		{"no principals", func(t *testing.T) string {
			return ptServe(t, ptOptions{servers: widgetServers(t)}).url
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := tc.url(t)
			for _, version := range protocols { // (the go-sdk writes it for both eras)
				rpc := aliceRPC(t, url, version)
				for _, list := range lists {
					want := tc.want[list]
					if want == "" {
						want = "public"
					}
					if got := rpc(list, `{}`)["cacheScope"]; got != want {
						t.Errorf("%s %s: cacheScope %v, want %s", version, list, got, want)
					}
				}
			}
		})
	}
}

// TestCacheScopeStdio: on the stdio front (one client, no principals) the
// lists are public, whatever rules apply to principals elsewhere.
func TestCacheScopeStdio(t *testing.T) {
	t.Parallel()
	g, _, _ := hiddenGateway(t)
	inW, outR := servePipes(t, g)
	pipe := &stdioPipe{r: bufio.NewReader(outR), w: inW}
	for _, list := range []string{"tools/list", "prompts/list", "resources/list"} {
		if got := rawRPC(t, pipe, newProtocol, list)["cacheScope"]; got != "public" {
			t.Errorf("%s: cacheScope %v, want public", list, got)
		}
	}
}

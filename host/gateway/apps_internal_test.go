package gateway

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestQualifiedURIs: a ui:// URI is qualified keeping its scheme (an MCP
// Apps host's app bridge takes ui:// URIs only), any other under
// mcphost://; both parse back; URIs in those namespaces are reserved.
func TestQualifiedURIs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ server, own, served string }{
		{"a", "ui://app/view.html", "ui://mcphost/a/app/view.html"},
		{"b", "ui://x", "ui://mcphost/b/x"},
		{"a", "demo://whoami", "mcphost://a/demo://whoami"},
		{"a", "ui://mcphost/b/w", "ui://mcphost/a/mcphost/b/w"}, // (a's own, not b's)
	} {
		got := qualifyURI(tc.server, tc.own)
		if got != tc.served {
			t.Errorf("qualifyURI(%q, %q) = %q, want %q", tc.server, tc.own, got, tc.served)
		}
		if s, o, ok := unqualifyURI(got); !ok || s != tc.server || o != tc.own {
			t.Errorf("unqualifyURI(%q) = %q %q %v, want %q %q", got, s, o, ok, tc.server, tc.own)
		}
		if !reservedURI(got) {
			t.Errorf("reservedURI(%q) = false", got)
		}
	}
	for _, uri := range []string{"ui://app/x", "ui://mcphost", "ui://mcphost/", "ui://mcphost/a", "ui://mcphost/a/", "mcphost://a", "demo://x"} {
		if s, o, ok := unqualifyURI(uri); ok {
			t.Errorf("unqualifyURI(%q) = %q %q, want not qualified", uri, s, o)
		}
	}
}

// TestExposeOwned: one collision check, by server: a server listing a URI
// twice has it served once, unqualified (as its tools name it: appsURI);
// URIs in the gateway's namespaces are not served, and reported; tools
// name what is served, or their own server's qualified URI (routed to
// it) where their server lists no such resource.
func TestExposeOwned(t *testing.T) {
	t.Parallel()
	servers := []string{"a", "a", "b", "b", "c"}
	defs := []*mcp.Resource{{URI: "ui://w"}, {URI: "ui://w"}, {URI: "ui://v"}, {URI: "ui://v"}, {URI: "ui://mcphost/a/x"}}
	want, problems := exposeOwned("resource", servers, defs, func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource, uri string) *mcp.Resource { c := *r; c.URI = uri; return &c })
	var got []string
	for uri, o := range want {
		got = append(got, o.server+" "+uri)
	}
	if len(got) != 2 || want["ui://w"].server != "a" || want["ui://v"].server != "b" {
		t.Errorf("served %v, want a's ui://w and b's ui://v, unqualified", got)
	}
	if len(problems) != 1 || problems[0].Server != "c" || !strings.Contains(problems[0].Detail, "ui://mcphost/a/x") {
		t.Errorf("problems %v, want c's ui://mcphost/a/x refused", problems)
	}
	x := exposure{apps: map[subKey]string{}}
	for uri, o := range want {
		x.apps[subKey{o.server, o.def.URI}] = uri
	}
	for _, tc := range []struct{ server, uri, want string }{
		{"a", "ui://w", "ui://w"},
		{"b", "ui://w", "ui://mcphost/b/w"}, // (a's: b's tool names b's own)
		{"c", "ui://mcphost/a/x", "ui://mcphost/c/mcphost/a/x"},
	} {
		if got := x.appsURI(tc.server, tc.uri); got != tc.want {
			t.Errorf("appsURI(%q, %q) = %q, want %q", tc.server, tc.uri, got, tc.want)
		}
	}
	wantRouted := map[string]subKey{"ui://mcphost/b/w": {"b", "ui://w"}, "ui://mcphost/c/mcphost/a/x": {"c", "ui://mcphost/a/x"}}
	if !reflect.DeepEqual(x.routed, wantRouted) {
		t.Errorf("routed %v, want %v", x.routed, wantRouted)
	}
}

// FuzzUnqualifyURI: whatever URI a client reads, unqualifyURI either
// refuses it or names a server (no "/" in it) and a URI of its own whose
// qualified form parses back to the same.
func FuzzUnqualifyURI(f *testing.F) {
	for _, s := range []string{"ui://mcphost/a/app/view.html", "mcphost://a/demo://x", "mcphost://a/ui://x", "ui://mcphost//x", "ui://mcphost/a/", "ui://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		server, own, ok := unqualifyURI(uri)
		if !ok {
			return
		}
		if server == "" || strings.Contains(server, "/") || own == "" {
			t.Fatalf("unqualifyURI(%q) = %q %q", uri, server, own)
		}
		if s, o, ok := unqualifyURI(qualifyURI(server, own)); !ok || s != server || o != own {
			t.Fatalf("qualifyURI(%q, %q) = %q parses as %q %q %v", server, own, qualifyURI(server, own), s, o, ok)
		}
	})
}

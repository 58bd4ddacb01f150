package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEndpoints: endpoint "NAME" blocks are read (servers, tools { include,
// exclude } of registry-name patterns, naming), and what is wrong in one is
// an error at its file:line:col.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	const servers = "server \"a\" {\n  command = \"x\"\n}\nserver \"b\" {\n  command = \"y\"\n}\n" // (lines 1-6)
	for _, tc := range []struct {
		name string
		body string // from line 7
		want []*Endpoint
		err  string // in an error at config.hcl:LINE,COL
		at   string
		warn string
	}{
		{name: "all attributes", body: `endpoint "dev" {
  servers = ["a", "b"]
  naming  = "server"
  tools {
    include = ["mcp__a__*", "mcp__b"]
    exclude = ["mcp__a__delete_*"]
  }
}`, want: []*Endpoint{{Name: "dev", Servers: []string{"a", "b"}, Naming: "server",
			Tools: &EndpointTools{Include: []string{"mcp__a__*", "mcp__b"}, Exclude: []string{"mcp__a__delete_*"}}}}},
		{name: "two", body: "endpoint \"x\" {\n  servers = [\"b\"]\n}\nendpoint \"w\" {\n  servers = [\"a\"]\n}",
			want: []*Endpoint{{Name: "w", Servers: []string{"a"}}, {Name: "x", Servers: []string{"b"}}}},
		{name: "unknown server", body: "endpoint \"dev\" {\n  servers = [\"a\", \"github\"]\n}", err: `Endpoint "dev" names server "github", which is not configured. The servers are a, b.`, at: "config.hcl:8,19"},
		{name: "bad naming", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n  naming = \"short\"\n}", err: `naming must be one of prefixed, conditional, bare, server, got "short"`, at: "config.hcl:9,12"},
		{name: "duplicate", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n}\nendpoint \"dev\" {\n  servers = [\"b\"]\n}", err: `An endpoint named "dev" is already declared at`, at: "config.hcl:10,10"},
		{name: "pattern without mcp__", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n  tools {\n    include = [\"create_*\"]\n  }\n}", err: `pattern "create_*" must start with "mcp__"`, at: "config.hcl:10,15"},
		{name: "pattern with a space", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n  tools {\n    exclude = [\"mcp__a__x y\"]\n  }\n}", err: `contains ' '`, at: "config.hcl:10,15"},
		{name: "no servers", body: "endpoint \"dev\" {\n  servers = []\n}", err: `An endpoint serves the servers it names`, at: "config.hcl:8,13"},
		{name: "servers missing", body: "endpoint \"dev\" {\n  naming = \"bare\"\n}", err: `An endpoint serves the servers it names`, at: "config.hcl:7,"},
		{name: "unknown attribute", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n  server = \"a\"\n}", err: `Unsupported argument`, at: "config.hcl:9,3"},
		{name: "bad name", body: "endpoint \"dev/x\" {\n  servers = [\"a\"]\n}", err: `Endpoint name "dev/x" is not allowed`, at: "config.hcl:7,10"},
		{name: "two tools blocks", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n  tools {}\n  tools {}\n}", err: `An endpoint has at most one tools block`, at: "config.hcl:10,3"},
		{name: "include nothing", body: "endpoint \"dev\" {\n  servers = [\"a\"]\n  tools {\n    include = []\n  }\n}",
			want: []*Endpoint{{Name: "dev", Servers: []string{"a"}, Tools: &EndpointTools{Include: []string{}}}}, warn: "include = [] serves none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			tr.user(servers + tc.body + "\n")
			cfg, diags := tr.load()
			if tc.err != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.err) || !strings.Contains(diags.Error(), tc.at) {
					t.Fatalf("diags = %v, want an error at %s containing %q", diags, tc.at, tc.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if tc.warn != "" && !strings.Contains(diags.Error(), tc.warn) {
				t.Errorf("diags = %v, want a warning containing %q", diags, tc.warn)
			}
			for _, e := range cfg.Endpoints {
				if e.Origin == nil || e.Origin.Scope != ScopeUser {
					t.Errorf("endpoint %s origin %+v", e.Name, e.Origin)
				}
				e.Origin = nil
			}
			if diff := cmp.Diff(tc.want, cfg.Endpoints); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndpointAllows: an endpoint serves its servers' tools that its
// patterns (permission rules', over registry names) let through; a
// server's authenticate pseudo-tool always.
func TestEndpointAllows(t *testing.T) {
	t.Parallel()
	e := &Endpoint{Name: "dev", Servers: []string{"a", "b"}, Tools: &EndpointTools{Include: []string{"mcp__a__read_*", "mcp__b"}, Exclude: []string{"mcp__b__drop"}}}
	for _, tc := range []struct {
		server, name string
		login        bool
		want         bool
	}{
		{"a", "mcp__a__read_file", false, true},
		{"a", "mcp__a__write_file", false, false},
		{"a", "mcp__a__authenticate", true, true},
		{"a", "mcp__a__authenticate", false, false},
		{"b", "mcp__b__anything", false, true},
		{"b", "mcp__b__drop", false, false},
		{"c", "mcp__c__read_file", false, false},
		{"c", "mcp__c__authenticate", true, false},
	} {
		if got := e.Allows(tc.server, tc.name, tc.login); got != tc.want {
			t.Errorf("Allows(%s, %s, %v) = %v, want %v", tc.server, tc.name, tc.login, got, tc.want)
		}
	}
	// include = [] serves none (but login pseudo-tools); no include, every
	// tool not excluded. (On the code before, include = [] served every
	// tool, and a server's own tool named authenticate was never filtered.)
	none := &Endpoint{Name: "dev", Servers: []string{"a"}, Tools: &EndpointTools{Include: []string{}}}
	unset := &Endpoint{Name: "dev", Servers: []string{"a"}, Tools: &EndpointTools{Exclude: []string{"mcp__a__drop"}}}
	for _, tc := range []struct {
		e     *Endpoint
		name  string
		login bool
		want  bool
	}{
		{none, "mcp__a__delete_everything", false, false},
		{none, "mcp__a__authenticate", false, false},
		{none, "mcp__a__authenticate", true, true},
		{unset, "mcp__a__anything", false, true},
		{unset, "mcp__a__drop", false, false},
	} {
		if got := tc.e.Allows("a", tc.name, tc.login); got != tc.want {
			t.Errorf("Allows(a, %s, %v) with include %#v = %v, want %v", tc.name, tc.login, tc.e.Tools.Include, got, tc.want)
		}
	}
}

// TestEndpointNotFromAProject: a project file's endpoint block is ignored,
// with a warning (it would widen the user's endpoint of the same name).
func TestEndpointNotFromAProject(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	tr.user("server \"a\" {\n  command = \"x\"\n}\nendpoint \"dev\" {\n  servers = [\"a\"]\n  tools {\n    include = [\"mcp__a__read\"]\n  }\n}\n")
	tr.proj("endpoint \"dev\" {\n  servers = [\"a\"]\n}\n")
	cfg, diags := tr.load()
	if diags.HasErrors() || !strings.Contains(diags.Error(), "a project file cannot declare one") {
		t.Fatalf("diags = %v, want a warning", diags)
	}
	if e := cfg.Endpoint("dev"); e == nil || e.Tools == nil || e.Origin.Scope != ScopeUser {
		t.Errorf("endpoint dev = %+v, want the user's", e)
	}
}

package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// reviewHost is a host of servers and endpoints eps, connected, offering
// its servers the extensions the gateway speaks.
func reviewHost(t *testing.T, servers []*config.Server, eps []*config.Endpoint) *host.Host {
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: servers, DefaultMode: "allow_all", Endpoints: eps}, &host.Options{OutputDir: t.TempDir(),
		ClientCapabilities: &mcp.ClientCapabilities{Extensions: gateway.ClientExtensions()}})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	t.Cleanup(func() { cancel(); h.Close() })
	return h
}

// reviewDial serves g over the streamable front and connects a skills
// client speaking version.
func reviewDial(t *testing.T, g *gateway.Gateway, version string) *mcp.ClientSession {
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	cs, err := skillsClient("r").Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestSkillsAtEndpoint: an endpoint of server a serves none of b's skills,
// nor b's skill files, under any naming, in both eras.
func TestSkillsAtEndpoint(t *testing.T) {
	t.Parallel()
	for _, naming := range []string{"", config.NamingServer, config.NamingBare} {
		for _, v := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(naming+v, func(t *testing.T) {
				h := reviewHost(t, []*config.Server{demo("a", "-skills"), demo("b", "-skills")},
					[]*config.Endpoint{{Name: "dev", Servers: []string{"a"}, Naming: naming}})
				g := gateway.New(h, &gateway.Options{Endpoint: "dev"})
				t.Cleanup(func() { g.Close() })
				g.Sync(context.Background())
				cs := reviewDial(t, g, v)
				for _, s := range listSkills(t, cs).Skills {
					if strings.Contains(string(s.Frontmatter), `"b"`) {
						t.Errorf("b's skill at dev: %s", s.URI)
					}
				}
				for _, uri := range []string{"skill://mcp__b/demo-skill/SKILL.md", "skill://b/demo-skill/SKILL.md", "skill://mcp__b/hidden-skill/SKILL.md"} {
					if r, err := getSkill(cs, uri); err == nil {
						t.Errorf("get %s at dev: %s", uri, r.Skill.Frontmatter)
					}
					if r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
						t.Errorf("read %s at dev: %v", uri, r.Contents[0].Text)
					}
				}
			})
		}
	}
}

// TestSkillFileNotShadowed: a server (b) that lists a resource at the URI
// another server's (a's) skill file is served under does not replace it:
// the read goes to a, and Sync reports b's resource, which is not served.
// On the code before, the read of skill://mcp__a/demo-skill/SKILL.md
// answered b's text (the listed resource won over the skill route).
func TestSkillFileNotShadowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	defs := filepath.Join(dir, "b.json")
	b, _ := json.Marshal(demoserver.Definitions{ExtraResources: []string{"skill://mcp__a/demo-skill/SKILL.md", "skill://mcp__b/own"}})
	if err := os.WriteFile(defs, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h := reviewHost(t, []*config.Server{demo("a", "-skills"), demo("b", "-definitions", defs)}, nil)
	g := gateway.New(h, nil)
	t.Cleanup(func() { g.Close() })
	problems := g.Sync(context.Background())
	var reported bool
	for _, p := range problems {
		if p.Server == "b" && strings.Contains(p.Detail, "skill://mcp__a/demo-skill/SKILL.md") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("b's resource at a's skill URI not reported: %v", problems)
	}
	cs := reviewDial(t, g, "2026-07-28")
	const served = "skill://mcp__a/demo-skill/SKILL.md"
	var listedSkill bool
	for _, s := range listSkills(t, cs).Skills {
		listedSkill = listedSkill || s.URI == served
	}
	if !listedSkill {
		t.Fatalf("%s not listed", served)
	}
	r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: served})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Contents[0].Text, "name: demo-skill") {
		t.Errorf("a's SKILL.md read from another server: %q", r.Contents[0].Text)
	}
	lr, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var own bool
	for _, res := range lr.Resources {
		if res.URI == served {
			t.Errorf("b's resource at a's skill URI listed")
		}
		own = own || res.URI == "skill://mcp__b/own"
	}
	if !own {
		t.Errorf("b's resource under its own label not listed (b serves no skills)")
	}
}

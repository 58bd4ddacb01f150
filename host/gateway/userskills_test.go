package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// TestPerUserSkills: a per-user skill server (the demo server with skills,
// over HTTP, a server of its own for each upstream session: its name,
// which its skill's files say, tells the sessions apart) through the
// gateway, for clients of both eras: skills/list shows a user the
// server's skills under its label (skill://mcp__SERVER/…), "private";
// skills/get and the skill's files go through the user's own connection
// (alice's and carol's files come from two upstream sessions); a user the
// rules deny the server (bob) is listed none, and gets no skill or file.
func TestPerUserSkills(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		mu.Lock()
		defer mu.Unlock()
		n++
		return demoserver.New(&demoserver.Options{Name: fmt.Sprintf("pu-%d", n), Skills: true})
	}, nil))
	t.Cleanup(up.Close)
	deny := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__pu",
		For: &permissions.Principals{Subjects: []string{"bob"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	g, ctx := userGateway(t, &config.Config{Servers: []*config.Server{perUserServer("pu", up.URL)}, Permissions: []config.PermissionRule{deny}, DefaultMode: "allow_all"}, false, nil)
	url := usersServer(t, g, "alice", "bob", "carol")
	const (
		skill = "skill://mcp__pu/demo-skill/SKILL.md"
		guide = "skill://mcp__pu/demo-skill/references/GUIDE.md"
	)
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			dial := func(user string) *mcp.ClientSession {
				cs, err := skillsClient(user).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
					HTTPClient: &http.Client{Transport: bearer{user, http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			guides := map[string]string{}
			for _, user := range []string{"alice", "carol"} {
				cs := dial(user)
				list := listSkills(t, cs)
				if len(list.Skills) != 1 || list.Skills[0].URI != skill || list.CacheScope != "private" {
					t.Fatalf("%s's skills/list: %+v (cacheScope %q), want %s, private", user, list.Skills, list.CacheScope, skill)
				}
				got, err := getSkill(cs, skill)
				if err != nil || got.Skill == nil || got.Skill.URI != skill {
					t.Fatalf("%s's skills/get %s: %+v %v", user, skill, got, err)
				}
				if uris := skillResourceURIs(t, got.Skill); !strings.Contains(strings.Join(uris, " "), guide) {
					t.Errorf("%s's skill's resources: %v, want %s among them", user, uris, guide)
				}
				read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: guide})
				if err != nil || len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "The guide of pu-") || read.CacheScope != "private" {
					t.Fatalf("%s's read of %s: %+v %v", user, guide, read, err)
				}
				guides[user] = read.Contents[0].Text
			}
			if guides["alice"] == guides["carol"] {
				t.Errorf("alice's and carol's skill files: both %q, want each through their own connection", guides["alice"])
			}
			bob := dial("bob")
			if list := listSkills(t, bob); len(list.Skills) != 0 {
				t.Errorf("bob's skills/list: %+v, want none (pu is denied to bob)", list.Skills)
			}
			if got, err := getSkill(bob, skill); err == nil {
				t.Errorf("bob's skills/get %s: %+v, want an error", skill, got)
			}
			if read, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: guide}); err == nil {
				t.Errorf("bob's read of %s: %+v, want an error", guide, read)
			}
		})
	}
}

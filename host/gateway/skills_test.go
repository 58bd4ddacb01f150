package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// The Skills extension (SEP-2640) through the gateway: demo servers that
// serve skills (-skills: the go-sdk server with skills/list and skills/get
// as custom methods, declaring the extension) and one that does not, a
// go-sdk client downstream that sends skills/list and skills/get as custom
// methods, over both fronts in both eras. On the code before skills.go the
// gateway declared no extension and answered skills/list with -32601.

// skillsClient is a go-sdk client that can send the Skills methods.
func skillsClient(name string) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: name}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{registry.ExtensionSkills: map[string]any{}}}})
	if err := mcp.AddSendingCustomMethod[*registry.ListSkillsParams, *registry.ListSkillsResult](c, registry.MethodListSkills); err != nil {
		panic(err)
	}
	if err := mcp.AddSendingCustomMethod[*registry.GetSkillParams, *registry.GetSkillResult](c, registry.MethodGetSkill); err != nil {
		panic(err)
	}
	if err := mcp.AddSendingCustomMethod[*registry.ReadDirectoryParams, *registry.ReadDirectoryResult](c, registry.MethodReadDirectory); err != nil {
		panic(err)
	}
	return c
}

// skillsOverStdio serves g over the stdio front on pipes and connects a
// skills client speaking version.
func skillsOverStdio(t *testing.T, p *ptGateway, version string) *mcp.ClientSession {
	t.Helper()
	inW, outR := servePipes(t, p.g)
	cs, err := skillsClient("skills-stdio-"+version).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// skillsOverHTTP connects a skills client speaking version to the gateway's
// streamable HTTP front.
func skillsOverHTTP(t *testing.T, p *ptGateway, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := skillsClient("skills-http-"+version).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: p.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var skillFronts = []struct {
	name string
	dial func(*testing.T, *ptGateway, string) *mcp.ClientSession
}{{"stdio", skillsOverStdio}, {"http", skillsOverHTTP}}

func listSkills(t *testing.T, cs *mcp.ClientSession) *registry.ListSkillsResult {
	t.Helper()
	res, err := mcp.CallCustomMethod[*registry.ListSkillsParams, *registry.ListSkillsResult](context.Background(), cs,
		registry.MethodListSkills, &registry.ListSkillsParams{})
	if err != nil {
		t.Fatalf("skills/list: %v", err)
	}
	return res
}

func getSkill(cs *mcp.ClientSession, uri string) (*registry.GetSkillResult, error) {
	return mcp.CallCustomMethod[*registry.GetSkillParams, *registry.GetSkillResult](context.Background(), cs,
		registry.MethodGetSkill, &registry.GetSkillParams{URI: uri})
}

// skillResourceURIs are the URIs of a skill entry's resources.
func skillResourceURIs(t *testing.T, s *registry.Skill) []string {
	t.Helper()
	var rs []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal(s.Resources, &rs); err != nil {
		t.Fatalf("resources of %s: %v (%s)", s.URI, err, s.Resources)
	}
	var out []string
	for _, r := range rs {
		if !strings.HasPrefix(r.Digest, "sha256:") {
			t.Errorf("resource %s: digest %q", r.URI, r.Digest)
		}
		out = append(out, r.URI)
	}
	return out
}

// TestSkillsMerged: two servers' skills, merged under the naming's labels
// (the prefixed names' mcp__SERVER, naming "server"'s SERVER), a server
// without the extension contributing none; skills/get routed to the
// owning server, an unlisted skill included; the skill's files readable
// through the gateway under their served URIs; the extension declared.
func TestSkillsMerged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		naming string
		label  func(server string) string
	}{
		{config.NamingPrefixed, func(s string) string { return "mcp__" + s }},
		{config.NamingServer, func(s string) string { return s }},
	} {
		t.Run(tc.naming, func(t *testing.T) {
			t.Parallel()
			for _, f := range skillFronts {
				for _, v := range protocols {
					t.Run(f.name+"/"+v, func(t *testing.T) {
						t.Parallel()
						// (A gateway each: the stdio front drains its gateway as it ends.)
						p := ptServe(t, ptOptions{naming: tc.naming, servers: []*config.Server{
							// (a refuses clients that did not declare the extension: the
							// gateway offers it.)
							demo("a", "-skills", "-skills-client-required"), demo("b", "-skills"), demo("c", "-passthrough")}})
						cs := f.dial(t, p, v)
						ext := cs.InitializeResult().Capabilities.Extensions
						if settings, ok := ext[registry.ExtensionSkills]; !ok {
							t.Errorf("extensions declared: %v, want %s", ext, registry.ExtensionSkills)
						} else if m, _ := settings.(map[string]any); len(m) != 1 || m["directoryRead"] != true {
							t.Errorf("skills settings %v, want {directoryRead: true}", settings)
						}
						res := listSkills(t, cs)
						var uris []string
						for _, s := range res.Skills {
							uris = append(uris, s.URI)
						}
						want := []string{
							"skill://" + tc.label("a") + "/demo-skill/SKILL.md",
							"skill://" + tc.label("b") + "/demo-skill/SKILL.md",
						}
						if strings.Join(uris, " ") != strings.Join(want, " ") {
							t.Fatalf("skills/list: %v, want %v", uris, want)
						}
						if res.ResultType != "complete" || res.TTLMs == nil || *res.TTLMs != 60000 || res.CacheScope != "public" {
							t.Errorf("resultType %q ttlMs %v cacheScope %q", res.ResultType, res.TTLMs, res.CacheScope)
						}
						var fm map[string]any
						json.Unmarshal(res.Skills[1].Frontmatter, &fm)
						if fm["name"] != "demo-skill" || fm["description"] != "Shows how b serves a skill" {
							t.Errorf("frontmatter of b's skill: %s", res.Skills[1].Frontmatter)
						}
						if got, want := skillResourceURIs(t, res.Skills[0]), []string{
							"skill://" + tc.label("a") + "/demo-skill/SKILL.md",
							"skill://" + tc.label("a") + "/demo-skill/references/GUIDE.md",
						}; strings.Join(got, " ") != strings.Join(want, " ") {
							t.Errorf("resources of a's skill: %v, want %v", got, want)
						}

						// skills/get: routed by the label, an unlisted skill too.
						got, err := getSkill(cs, "skill://"+tc.label("b")+"/hidden-skill/SKILL.md")
						if err != nil {
							t.Fatalf("skills/get: %v", err)
						}
						json.Unmarshal(got.Skill.Frontmatter, &fm)
						if got.Skill.URI != "skill://"+tc.label("b")+"/hidden-skill/SKILL.md" || fm["description"] != "An unlisted skill of b" {
							t.Errorf("skills/get: %s %s", got.Skill.URI, got.Skill.Frontmatter)
						}
						for _, bad := range []string{
							"skill://hidden-skill/SKILL.md",                        // not qualified
							"skill://" + tc.label("c") + "/hidden-skill/SKILL.md",  // c has no skills
							"skill://" + tc.label("a") + "/missing-skill/SKILL.md", // a has no such skill
						} {
							_, err := getSkill(cs, bad)
							var je *jsonrpc.Error
							if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
								t.Errorf("skills/get %s: %v, want -32602", bad, err)
							}
						}

						// A directory of the skill, read through the gateway.
						dir, err := mcp.CallCustomMethod[*registry.ReadDirectoryParams, *registry.ReadDirectoryResult](context.Background(), cs,
							registry.MethodReadDirectory, &registry.ReadDirectoryParams{URI: "skill://" + tc.label("b") + "/demo-skill"})
						if err != nil {
							t.Fatalf("resources/directory/read: %v", err)
						}
						var children []string
						for _, r := range dir.Resources {
							children = append(children, r.URI+" "+r.MIMEType)
						}
						if want := []string{
							"skill://" + tc.label("b") + "/demo-skill/SKILL.md text/markdown",
							"skill://" + tc.label("b") + "/demo-skill/references inode/directory",
						}; strings.Join(children, ", ") != strings.Join(want, ", ") {
							t.Errorf("resources/directory/read: %v, want %v", children, want)
						}

						// The skill's files, read through the gateway.
						rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://" + tc.label("a") + "/demo-skill/references/GUIDE.md"})
						if err != nil {
							t.Fatalf("reading a skill file: %v", err)
						}
						if len(rr.Contents) != 1 || rr.Contents[0].Text != "The guide of a.\n" {
							t.Errorf("skill file: %+v", rr.Contents)
						}
					})
				}
			}
		})
	}
}

// TestSkillsNone: without a server of the extension, it is not declared,
// and skills/list is answered with no skills (the gateway serves the
// method; skills/get finds nothing).
func TestSkillsNone(t *testing.T) {
	t.Parallel()
	for _, f := range skillFronts {
		for _, v := range protocols {
			t.Run(f.name+"/"+v, func(t *testing.T) {
				t.Parallel()
				p := ptServe(t, ptOptions{servers: []*config.Server{demo("c", "-passthrough")}})
				cs := f.dial(t, p, v)
				if ext := cs.InitializeResult().Capabilities.Extensions; len(ext) != 0 {
					t.Errorf("extensions declared: %v, want none", ext)
				}
				if res := listSkills(t, cs); len(res.Skills) != 0 {
					t.Errorf("skills: %v", res.Skills)
				}
				if _, err := getSkill(cs, "skill://mcp__c/demo-skill/SKILL.md"); err == nil {
					t.Error("skills/get answered")
				}
			})
		}
	}
}

// TestSkillsBare: under the servers' own names a skill is served under
// its own URI, and one that two servers serve is served for neither.
func TestSkillsBare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		servers []*config.Server
		want    []string
		get     string // its description, from skills/get of skill://hidden-skill/SKILL.md ("": refused)
	}{
		{"one server", []*config.Server{demo("a", "-skills"), demo("c")}, []string{"skill://demo-skill/SKILL.md"}, "An unlisted skill of a"},
		{"two servers", []*config.Server{demo("a", "-skills"), demo("b", "-skills")}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := ptServe(t, ptOptions{naming: config.NamingBare, servers: tc.servers})
			cs := skillsOverHTTP(t, p, newProtocol)
			var uris []string
			for _, s := range listSkills(t, cs).Skills {
				uris = append(uris, s.URI)
			}
			if strings.Join(uris, " ") != strings.Join(tc.want, " ") {
				t.Errorf("skills/list: %v, want %v", uris, tc.want)
			}
			got, err := getSkill(cs, "skill://hidden-skill/SKILL.md")
			if tc.get == "" {
				if err == nil {
					t.Errorf("skills/get answered: %s", got.Skill.Frontmatter)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var fm map[string]any
			json.Unmarshal(got.Skill.Frontmatter, &fm)
			if fm["description"] != tc.get {
				t.Errorf("skills/get: %s", got.Skill.Frontmatter)
			}
		})
	}
}

// TestSkillsDenied: under inbound OAuth, a server the permission rules
// deny a principal contributes no skills to its skills/list, its skills
// are not found by skills/get nor its files read, and the extension is
// declared to it only if a server it may use has it; the lists are
// private — only then: with no rule for some principals only, the lists are
// public (on the code before, private for any principal). Another
// principal sees every server's.
func TestSkillsDenied(t *testing.T) {
	t.Parallel()
	deny := func(server string) config.PermissionRule {
		return config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__" + server,
			For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	}
	for _, tc := range []struct {
		name   string
		rules  []config.PermissionRule
		alice  []string // the URIs of alice's skills/list
		hasExt bool     // the extension declared to alice
		scope  string   // the lists' cacheScope
	}{
		{"a denied", []config.PermissionRule{deny("a")}, []string{"skill://mcp__b/demo-skill/SKILL.md"}, true, "private"},
		{"both denied", []config.PermissionRule{deny("a"), deny("b")}, nil, false, "private"},
		{"none denied", nil, []string{"skill://mcp__a/demo-skill/SKILL.md", "skill://mcp__b/demo-skill/SKILL.md"}, true, "public"},
	} {
		for _, v := range protocols {
			t.Run(tc.name+"/"+v, func(t *testing.T) {
				t.Parallel()
				gw := ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-skills"), demo("b", "-skills")}, rules: tc.rules,
					http: &streamable.Options{OAuth: &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice", "bob"), Resource: "http://gateway.example/mcp"}}})
				dial := func(user string) *mcp.ClientSession {
					cs, err := skillsClient(user).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: gw.url + "/",
						HTTPClient: &http.Client{Transport: &steered{urls: []string{gw.url}, token: user}}}, &mcp.ClientSessionOptions{ProtocolVersion: v})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { cs.Close() })
					return cs
				}
				for _, user := range []string{"alice", "bob"} {
					cs := dial(user)
					want, hasExt := tc.alice, tc.hasExt
					if user == "bob" {
						want, hasExt = []string{"skill://mcp__a/demo-skill/SKILL.md", "skill://mcp__b/demo-skill/SKILL.md"}, true
					}
					if _, ok := cs.InitializeResult().Capabilities.Extensions[registry.ExtensionSkills]; ok != hasExt {
						t.Errorf("%s: extension declared %v, want %v", user, ok, hasExt)
					}
					res := listSkills(t, cs)
					var uris []string
					for _, s := range res.Skills {
						uris = append(uris, s.URI)
					}
					if strings.Join(uris, " ") != strings.Join(want, " ") {
						t.Errorf("%s: skills/list %v, want %v", user, uris, want)
					}
					if res.CacheScope != tc.scope {
						t.Errorf("%s: cacheScope %q, want %q", user, res.CacheScope, tc.scope)
					}
					got, getErr := getSkill(cs, "skill://mcp__a/hidden-skill/SKILL.md")
					if getErr == nil && got.CacheScope != tc.scope {
						t.Errorf("%s: skills/get cacheScope %q, want %q", user, got.CacheScope, tc.scope)
					}
					_, readErr := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://mcp__a/demo-skill/references/GUIDE.md"})
					if denied := user == "alice" && tc.rules != nil; (getErr != nil) != denied || (readErr != nil) != denied {
						t.Errorf("%s: skills/get of a's skill: %v; reading a's skill file: %v", user, getErr, readErr)
					}
				}
			})
		}
	}
}

// TestSkillsReload: what is declared and listed follows the servers a
// reload adds and removes (each initialize declares the extensions of the
// servers then connected).
func TestSkillsReload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := demo("c")
	gw := ptServe(t, ptOptions{servers: []*config.Server{c}})
	for _, step := range []struct {
		servers []*config.Server
		want    []string
	}{
		{[]*config.Server{c}, nil},
		{[]*config.Server{c, demo("a", "-skills")}, []string{"skill://mcp__a/demo-skill/SKILL.md"}},
		{[]*config.Server{c}, nil},
	} {
		if _, err := gw.h.Reload(ctx, &config.Config{Servers: step.servers, DefaultMode: "allow_all"}, time.Second); err != nil {
			t.Fatal(err)
		}
		gw.h.ConnectAll(ctx, nil)
		gw.g.Sync(ctx)
		cs := skillsOverHTTP(t, gw, newProtocol)
		if _, ok := cs.InitializeResult().Capabilities.Extensions[registry.ExtensionSkills]; ok != (step.want != nil) {
			t.Errorf("servers %d: extension declared %v", len(step.servers), ok)
		}
		var uris []string
		for _, s := range listSkills(t, cs).Skills {
			uris = append(uris, s.URI)
		}
		if strings.Join(uris, " ") != strings.Join(step.want, " ") {
			t.Errorf("servers %d: skills %v, want %v", len(step.servers), uris, step.want)
		}
	}
}

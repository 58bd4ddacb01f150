package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// listsServer is a go-sdk server (name) with prompts "greet" and "secret",
// a resource note://n, a template note://{id}, an MCP Apps tool "show"
// and its resource ui://charts/show.html, subscriptions, and completions: each answer names the
// upstream session that gave it (for a per-user server, one per user's
// connection).
func listsServer(name string) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{name + " " + r.Params.Ref.Name + r.Params.Ref.URI + " session " + r.Session.ID()}}}, nil
		}})
	server.AddTool(&mcp.Tool{Name: "show", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://charts/show.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	for _, p := range []string{"greet", "secret"} {
		server.AddPrompt(&mcp.Prompt{Name: p, Title: "The " + p, Arguments: []*mcp.PromptArgument{{Name: "who"}}},
			func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
					Content: &mcp.TextContent{Text: name + " " + p + " " + r.Params.Arguments["who"] + " session " + r.Session.ID()}}}}, nil
			})
	}
	read := func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: name + " " + r.Params.URI + " session " + r.Session.ID()}}}, nil
	}
	server.AddResource(&mcp.Resource{URI: "note://n", Name: "n", Title: "A note"}, read)
	server.AddResource(&mcp.Resource{URI: "ui://charts/show.html", Name: "show", MIMEType: "text/html;profile=mcp-app"}, read)
	server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "note://{id}", Name: "notes"}, read)
	return server
}

// userListsGateway serves, over HTTP to users alice, bob and carol, a
// shared server "sh" and a per-user server "pu" (no login needed), both
// listsServer; the rules deny pu to bob and pu's prompt "secret" to carol.
// The endpoint "dev" serves sh only. It returns the URL of the gateway's
// front (of endpoint, "" for the whole gateway).
func userListsGateway(t *testing.T, naming, endpoint string) string {
	t.Helper()
	return userListsGatewayWith(t, &gateway.Options{Naming: naming, Endpoint: endpoint})
}

// userListsGatewayWith is userListsGateway with the gateway's options opts.
func userListsGatewayWith(t *testing.T, opts *gateway.Options) string {
	t.Helper()
	urls := map[string]string{}
	for _, name := range []string{"sh", "pu"} {
		server := listsServer(name)
		up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
		t.Cleanup(up.Close)
		urls[name] = up.URL
	}
	sh := &config.Server{Name: "sh", Transport: config.TransportHTTP, URL: urls["sh"], Approved: true, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	rule := func(pattern, subject string) config.PermissionRule {
		return config.PermissionRule{Behavior: permissions.Deny, Pattern: pattern,
			For: &permissions.Principals{Subjects: []string{subject}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	}
	g, _ := userGateway(t, &config.Config{Servers: []*config.Server{sh, perUserServer("pu", urls["pu"])}, DefaultMode: "allow_all",
		Permissions: []config.PermissionRule{rule("mcp__pu", "bob"), rule("mcp__pu__secret", "carol")},
		Endpoints:   []*config.Endpoint{{Name: "dev", Servers: []string{"sh"}}}}, true, opts)
	return usersServer(t, g, "alice", "bob", "carol")
}

// listed returns the names (prompts) or URIs (resources, templates) of a
// list result, sorted.
func listed(res map[string]any) []string {
	var out []string
	for _, field := range []string{"prompts", "resources", "resourceTemplates"} {
		items, _ := res[field].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			for _, k := range []string{"name", "uri", "uriTemplate"} {
				if s, ok := m[k].(string); ok && (field == "prompts") == (k == "name") {
					out = append(out, s)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestPerUserLists: a user's prompts/list, resources/list and
// resources/templates/list hold, after what is served to all, the
// prompts (under their registry names, SERVER__PROMPT under naming
// "server"), resources and templates (under their qualified URIs, the MCP
// Apps resource's as its tool names it) of the user's per-user servers,
// less what the rules deny the user (bob: the server; carol: a prompt),
// and only where the endpoint serves the server; each list is "private".
// For clients of both eras. (Before, none of pu's were listed.)
func TestPerUserLists(t *testing.T) {
	t.Parallel()
	shared := map[string][]string{
		"prompts/list":             {"mcp__sh__greet", "mcp__sh__secret"},
		"resources/list":           {"note://n", "ui://charts/show.html"},
		"resources/templates/list": {"note://{id}"},
	}
	own := map[string][]string{
		"prompts/list":             {"mcp__pu__greet", "mcp__pu__secret"},
		"resources/list":           {"mcphost://pu/note://n", "ui://mcphost/pu/charts/show.html"},
		"resources/templates/list": {"mcphost://pu/note://{id}"},
	}
	withOwn := func(list string, except ...string) []string {
		out := slices.DeleteFunc(slices.Clone(own[list]), func(s string) bool { return slices.Contains(except, s) })
		out = append(slices.Clone(shared[list]), out...)
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name, naming, endpoint, user string
		want                         func(list string) []string
	}{
		{"alice", "", "", "alice", func(l string) []string { return withOwn(l) }},
		{"bob, pu denied", "", "", "bob", func(l string) []string { return shared[l] }},
		{"carol, a prompt denied", "", "", "carol", func(l string) []string { return withOwn(l, "mcp__pu__secret") }},
		{"naming server", config.NamingServer, "", "alice", func(l string) []string {
			if l != "prompts/list" {
				return withOwn(l)
			}
			return []string{"pu__greet", "pu__secret", "sh__greet", "sh__secret"}
		}},
		{"endpoint without pu", "", "dev", "alice", func(l string) []string { return shared[l] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := userListsGateway(t, tt.naming, tt.endpoint)
			for _, version := range protocols {
				rpc := userRawRPC(t, url, version, tt.user)
				for _, list := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
					res, msg := rpc(list, `{}`)
					if got, want := listed(res), tt.want(list); !slices.Equal(got, want) {
						t.Errorf("%s %s: %v %s, want %v", version, list, got, msg, want)
					}
					if res["cacheScope"] != "private" {
						t.Errorf("%s %s: cacheScope %v, want private", version, list, res["cacheScope"])
					}
				}
			}
		})
	}
}

// TestPerUserGetAndRead: a per-user server's prompt, resource, template's
// resource and completions are got, read and completed through the
// caller's own connection (alice's and carol's answers come from two
// upstream sessions), with the definitions as listed; a user the rules
// deny the server (bob), or the prompt (carol's "secret"), is answered as
// for a prompt or resource that does not exist. What is served to all is
// not affected; a subscription to a per-user server's resource is taken
// for alice, refused to bob (TestPerUserResourceSubscriptions: its
// updates). For clients of both eras. (Before, a per-user prompt was an
// unknown prompt to all, and only the MCP Apps resource was read.)
func TestPerUserGetAndRead(t *testing.T) {
	t.Parallel()
	url := userListsGateway(t, "", "")
	requests := []struct {
		name, method, params string
		text                 func(res map[string]any) string // the answer's text
		want                 string                          // its prefix (less the session)
	}{
		{"prompt", "prompts/get", `{"name":"mcp__pu__greet","arguments":{"who":"you"}}`, promptText, "pu greet you session "},
		{"resource", "resources/read", `{"uri":"mcphost://pu/note://n"}`, contentsText, "pu note://n session "},
		{"apps resource", "resources/read", `{"uri":"ui://mcphost/pu/charts/show.html"}`, contentsText, "pu ui://charts/show.html session "},
		{"template's resource", "resources/read", `{"uri":"mcphost://pu/note://7"}`, contentsText, "pu note://7 session "},
		{"prompt completion", "completion/complete", `{"ref":{"type":"ref/prompt","name":"mcp__pu__greet"},"argument":{"name":"who","value":"y"}}`, completionText, "pu greet session "},
		{"template completion", "completion/complete", `{"ref":{"type":"ref/resource","uri":"mcphost://pu/note://{id}"},"argument":{"name":"id","value":"1"}}`, completionText, "pu note://{id} session "},
		{"shared prompt", "prompts/get", `{"name":"mcp__sh__greet","arguments":{"who":"all"}}`, promptText, "sh greet all session "},
		{"shared resource", "resources/read", `{"uri":"note://n"}`, contentsText, "sh note://n session "},
	}
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			alice, bob, carol := userRawRPC(t, url, version, "alice"), userRawRPC(t, url, version, "bob"), userRawRPC(t, url, version, "carol")
			for _, r := range requests {
				a, msg := alice(r.method, r.params)
				c, cmsg := carol(r.method, r.params)
				at, ct := r.text(a), r.text(c)
				if !strings.HasPrefix(at, r.want) || !strings.HasPrefix(ct, r.want) {
					t.Errorf("%s: alice's %q (%s), carol's %q (%s), want %q…", r.name, at, msg, ct, cmsg, r.want)
					continue
				}
				if strings.HasPrefix(r.want, "pu ") && at == ct {
					t.Errorf("%s: alice's and carol's answers %q: want each through their own connection", r.name, at)
				}
				if strings.HasPrefix(r.method, "resources/") && strings.HasPrefix(r.want, "pu ") && a["cacheScope"] != "private" {
					t.Errorf("%s: alice's read: cacheScope %v, want private", r.name, a["cacheScope"])
				}
				b, bmsg := bob(r.method, r.params)
				switch {
				case !strings.HasPrefix(r.want, "pu "):
					if !strings.HasPrefix(r.text(b), strings.Replace(r.want, "session ", "", 1)[:4]) {
						t.Errorf("%s: bob's %v %q, want what is served to all", r.name, b, bmsg)
					}
				case b != nil || !strings.Contains(strings.ToLower(bmsg), notFoundWord(r.method)):
					t.Errorf("%s: bob's %v %q, want answered as %s", r.name, b, bmsg, notFoundWord(r.method))
				}
			}
			if res, msg := carol("prompts/get", `{"name":"mcp__pu__secret"}`); res != nil || !strings.Contains(msg, "unknown prompt") {
				t.Errorf("carol's get of the prompt denied her: %v %q, want an unknown prompt", res, msg)
			}
			if res, msg := alice("prompts/get", `{"name":"mcp__pu__none"}`); res != nil || !strings.Contains(msg, "unknown prompt") {
				t.Errorf("alice's get of a prompt pu does not have: %v %q, want an unknown prompt", res, msg)
			}
			if version == oldProtocol {
				if res, msg := alice("resources/subscribe", `{"uri":"mcphost://pu/note://n"}`); res == nil {
					t.Errorf("alice's subscribe to pu's resource: %q, want taken", msg)
				}
				if res, msg := bob("resources/subscribe", `{"uri":"mcphost://pu/note://n"}`); res != nil || !strings.Contains(msg, "no server offers") {
					t.Errorf("bob's subscribe to pu's resource: %v %q, want refused as a resource no server offers", res, msg)
				}
			}
		})
	}
}

// notFoundWord is what the error answered to a request of method for
// something the caller is not served says.
func notFoundWord(method string) string {
	switch method {
	case "prompts/get":
		return "unknown prompt"
	case "resources/read":
		return "not found"
	}
	return "no served prompt or resource template"
}

func promptText(res map[string]any) string {
	var r mcp.GetPromptResult
	b, _ := json.Marshal(res)
	if json.Unmarshal(b, &r) != nil || len(r.Messages) != 1 {
		return ""
	}
	t, _ := r.Messages[0].Content.(*mcp.TextContent)
	if t == nil {
		return ""
	}
	return t.Text
}

func contentsText(res map[string]any) string {
	var r mcp.ReadResourceResult
	b, _ := json.Marshal(res)
	if json.Unmarshal(b, &r) != nil || len(r.Contents) != 1 {
		return ""
	}
	return r.Contents[0].Text
}

func completionText(res map[string]any) string {
	var r mcp.CompleteResult
	b, _ := json.Marshal(res)
	if json.Unmarshal(b, &r) != nil || len(r.Completion.Values) != 1 {
		return ""
	}
	return r.Completion.Values[0]
}

// TestPerUserListChanged: a per-user server's prompts/list_changed, sent
// on one user's connection, reaches that user's sessions (a 2025-11-25
// client's session, a 2026-07-28 client's listen stream) and no other
// user's, and the user's next prompts/list holds the change. (Before, the
// user's view was dropped and nobody was told.)
func TestPerUserListChanged(t *testing.T) {
	t.Parallel()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			// Each upstream session gets a server of its own, so that one user's
			// connection alone is told of a change; its prompt "whoami" says which.
			var mu sync.Mutex
			var servers []*mcp.Server
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
				mu.Lock()
				defer mu.Unlock()
				s := mcp.NewServer(&mcp.Implementation{Name: "pu", Version: "1"}, nil)
				who := fmt.Sprint(len(servers))
				s.AddPrompt(&mcp.Prompt{Name: "whoami"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: who}}}}, nil
				})
				servers = append(servers, s)
				return s
			}, nil))
			t.Cleanup(up.Close)
			g, ctx := userGateway(t, &config.Config{Servers: []*config.Server{perUserServer("pu", up.URL)}, DefaultMode: "allow_all"}, false, nil)
			url := usersServer(t, g, "alice", "carol")
			type user struct {
				cs      *mcp.ClientSession
				changed chan struct{}
				server  *mcp.Server // its own upstream server
			}
			users := map[string]*user{}
			for _, name := range []string{"alice", "carol"} {
				u := &user{changed: make(chan struct{}, 10)}
				c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
					PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { u.changed <- struct{}{} }})
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{name, http.DefaultTransport}}},
					&mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				u.cs = cs
				res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__pu__whoami"})
				if err != nil {
					t.Fatalf("%s: get mcp__pu__whoami: %v", name, err)
				}
				var i int
				fmt.Sscan(res.Messages[0].Content.(*mcp.TextContent).Text, &i)
				mu.Lock()
				u.server = servers[i]
				mu.Unlock()
				users[name] = u
			}
			if users["alice"].server == users["carol"].server {
				t.Fatal("alice and carol share an upstream session")
			}
			add := func(name, prompt string) {
				t.Helper()
				users[name].server.AddPrompt(&mcp.Prompt{Name: prompt}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{}, nil
				})
				select {
				case <-users[name].changed:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: no prompts/list_changed after its server added %s", name, prompt)
				}
				list, err := users[name].cs.ListPrompts(ctx, nil)
				if err != nil || !slices.ContainsFunc(list.Prompts, func(p *mcp.Prompt) bool { return p.Name == "mcp__pu__"+prompt }) {
					t.Errorf("%s: prompts/list after the change: %v %v, want mcp__pu__%s", name, list, err, prompt)
				}
			}
			add("alice", "new")
			add("carol", "other") // (after alice's: a list_changed of alice's sent to carol would be in carol's channel by now)
			for name, u := range users {
				select {
				case <-u.changed:
					t.Errorf("%s: a list_changed of another user's connection reached it", name)
				default:
				}
			}
		})
	}
}

// TestPerUserPromptGetAudited: a per-user server's prompts/get has one
// audit line, with the request's one decision: an allowed get's (allow,
// ok), and — answered as an unknown prompt all the same — one of a prompt
// the rules deny the user (carol: deny, denied, the rule that denies it)
// or of a server they deny the user whole (bob). Before, a denied get had
// no line at all.
func TestPerUserPromptGetAudited(t *testing.T) {
	t.Parallel()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var buf syncbuf.Buffer
			log := audit.New(&buf, nil)
			url := userListsGatewayWith(t, &gateway.Options{Audit: log})
			cases := []struct {
				user, prompt      string
				decision, outcome string
				rule              string // a substring of the line's rule
			}{
				{"alice", "mcp__pu__greet", "allow", audit.OutcomeOK, "default mode"},
				{"carol", "mcp__pu__secret", "deny", audit.OutcomeDenied, "mcp__pu__secret"},
				{"bob", "mcp__pu__greet", "deny", audit.OutcomeDenied, "mcp__pu"},
			}
			for _, c := range cases {
				res, msg := userRawRPC(t, url, version, c.user)("prompts/get", `{"name":"`+c.prompt+`"}`)
				if (c.outcome == audit.OutcomeOK) != (res != nil) {
					t.Errorf("%s's get of %s: %v %q", c.user, c.prompt, res, msg)
				}
			}
			var lines []audit.Record
			for _, r := range allRecords(t, log, &buf) {
				if r.Event == audit.EventPromptGet {
					lines = append(lines, r)
				}
			}
			if len(lines) != len(cases) {
				t.Fatalf("%d prompts/get audit lines, want %d: %+v", len(lines), len(cases), lines)
			}
			for _, c := range cases {
				i := slices.IndexFunc(lines, func(r audit.Record) bool { return r.Subject == c.user })
				if i < 0 {
					t.Errorf("%s: no audit line", c.user)
					continue
				}
				r := lines[i]
				if r.Tool != c.prompt || r.Server != "pu" || r.Decision != c.decision || r.Outcome != c.outcome || !strings.Contains(r.Rule, c.rule) {
					t.Errorf("%s's line %+v: want %s, server pu, decision %s, outcome %s, rule ~%q", c.user, r, c.prompt, c.decision, c.outcome, c.rule)
				}
			}
		})
	}
}

// TestServeUsersLeavesSharedListsAtOnce: when a gateway synced for no
// users is then served to users of inbound OAuth (ServeUsers, as a front
// with inbound OAuth does), its per-user servers' prompts have left the
// lists served to all by the time ServeUsers returns. (Before, they left
// on the sync loop's next turn: a user's first prompts/list could hold a
// per-user prompt twice, once as served to all and once from the user's
// own connection, TestPerUserLists' flake.)
func TestServeUsersLeavesSharedListsAtOnce(t *testing.T) {
	t.Parallel()
	urls := map[string]string{}
	for _, name := range []string{"sh", "pu"} {
		up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return listsServer(name) }, nil))
		t.Cleanup(up.Close)
		urls[name] = up.URL
	}
	sh := &config.Server{Name: "sh", Transport: config.TransportHTTP, URL: urls["sh"], Approved: true, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	g, _ := userGateway(t, &config.Config{Servers: []*config.Server{sh, perUserServer("pu", urls["pu"])}, DefaultMode: "allow_all"}, true, &gateway.Options{})
	all := []string{"mcp__pu__greet", "mcp__pu__secret", "mcp__sh__greet", "mcp__sh__secret"}
	if got := g.ServedPrompts(); !slices.Equal(got, all) {
		t.Fatalf("served to all without users: %v, want %v", got, all)
	}
	g.ServeUsers()
	if got, want := g.ServedPrompts(), all[2:]; !slices.Equal(got, want) {
		t.Errorf("served to all once ServeUsers returned: %v, want %v", got, want)
	}
}

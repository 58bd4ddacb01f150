package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// TestToolOverridesServed: a server's tool overrides change the served
// definition (title, description, annotations) and the served name's tool
// part, under each naming mode; a call by the overridden name reaches the
// server's tool; permission rules and the audit log keep the canonical
// name; a name that would take another tool's is refused and reported.
func TestToolOverridesServed(t *testing.T) {
	t.Parallel()
	yes, no, title := true, false, "Say it"
	denyEcho := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a__echo", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	withOverrides := func(o map[string]*config.ToolOverride) func() []*config.Server {
		return func() []*config.Server {
			s := demo("a")
			s.Tools = &config.ToolFilter{Overrides: o}
			return []*config.Server{s}
		}
	}
	say := map[string]*config.ToolOverride{
		"echo": {Name: "say", Title: "Say", Description: "Says the message back.",
			Annotations: &config.ToolAnnotations{Title: &title, ReadOnlyHint: &yes, OpenWorldHint: &no}},
		"add": {Description: "Adds."},
	}
	for _, tc := range []struct {
		name        string
		naming      string
		servers     func() []*config.Server
		rules       []config.PermissionRule
		want        map[string]*mcp.Tool // served tools (name, title, description, annotations)
		noTools     []string
		call        string // a call that must reach the server's echo
		denied      string // a call that a rule on the canonical name denies
		wantProblem string
	}{
		{name: "prefixed", naming: config.NamingPrefixed, servers: withOverrides(say),
			want: map[string]*mcp.Tool{
				"mcp__a__say": {Name: "mcp__a__say", Title: "Say", Description: "Says the message back.",
					Annotations: &mcp.ToolAnnotations{Title: "Say it", ReadOnlyHint: true, OpenWorldHint: &no}},
				"mcp__a__add": {Name: "mcp__a__add", Description: "Adds.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			},
			noTools: []string{"mcp__a__echo"}, call: "mcp__a__say"},
		{name: "server", naming: config.NamingServer, servers: withOverrides(say), rules: []config.PermissionRule{denyEcho},
			want: map[string]*mcp.Tool{"a__say": {Name: "a__say", Title: "Say", Description: "Says the message back.",
				Annotations: &mcp.ToolAnnotations{Title: "Say it", ReadOnlyHint: true, OpenWorldHint: &no}}},
			noTools: []string{"a__echo", "mcp__a__say"}, denied: "a__say"},
		{name: "bare", naming: config.NamingBare, servers: withOverrides(say),
			want:    map[string]*mcp.Tool{"say": {Name: "say", Title: "Say", Description: "Says the message back.", Annotations: &mcp.ToolAnnotations{Title: "Say it", ReadOnlyHint: true, OpenWorldHint: &no}}},
			noTools: []string{"echo"}, call: "say"},
		{name: "a name taken from another tool", naming: config.NamingPrefixed,
			servers: withOverrides(map[string]*config.ToolOverride{"echo": {Name: "add"}}),
			want:    map[string]*mcp.Tool{"mcp__a__add": {Name: "mcp__a__add"}}, noTools: []string{"mcp__a__echo"},
			wantProblem: `the tool "echo" is not served under "mcp__a__add", which reads as a registry name`},
		{name: "two tools renamed alike", naming: config.NamingServer,
			servers:     withOverrides(map[string]*config.ToolOverride{"echo": {Name: "x"}, "add": {Name: "x"}}),
			noTools:     []string{"a__x", "a__echo", "a__add"},
			wantProblem: `the tools mcp__a__add, mcp__a__echo would all be served as "a__x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf syncbuf.Buffer
			log := audit.New(&buf, nil)
			p := ptServe(t, ptOptions{servers: tc.servers(), naming: tc.naming, rules: tc.rules, gopts: &gateway.Options{Audit: log}})
			var details []string
			for _, pr := range p.problems {
				details = append(details, pr.Server+": "+pr.Detail)
			}
			all := strings.Join(details, "\n")
			if tc.wantProblem == "" && len(details) > 0 {
				t.Errorf("problems:\n%s", all)
			}
			if tc.wantProblem != "" && !strings.Contains(all, tc.wantProblem) {
				t.Errorf("problems:\n%s\nwant one containing %q", all, tc.wantProblem)
			}
			cs := p.dial(t, newProtocol, nil)
			ctx := context.Background()
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			served := map[string]*mcp.Tool{}
			for _, mt := range res.Tools {
				served[mt.Name] = mt
			}
			for name, want := range tc.want {
				got, ok := served[name]
				if !ok {
					t.Errorf("tool %s not served; tools: %v", name, toolNames(t, cs))
					continue
				}
				if want.Description == "" {
					continue // (only that it is served)
				}
				g := &mcp.Tool{Name: got.Name, Title: got.Title, Description: got.Description, Annotations: got.Annotations}
				if diff := cmp.Diff(want, g); diff != "" {
					t.Errorf("tool %s (-want +got):\n%s", name, diff)
				}
			}
			for _, n := range tc.noTools {
				if _, ok := served[n]; ok {
					t.Errorf("tool %s served", n)
				}
			}
			if tc.call != "" {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.call, Arguments: map[string]any{"message": "over"}})
				if err != nil || res.IsError || !strings.Contains(textOf(res), "over") {
					t.Errorf("call %s: %v %s", tc.call, err, textOf(res))
				}
			}
			if tc.denied != "" {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.denied, Arguments: map[string]any{"message": "over"}})
				if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), `permission denied: mcp__a__echo is deny by rule "mcp__a__echo"`) {
					t.Errorf("call %s under a deny rule of its canonical name: %v %s", tc.denied, err, textOf(res))
				}
			}
			if tc.call == "" && tc.denied == "" {
				return
			}
			cs.Close()
			var tools []string
			for _, r := range allRecords(t, log, &buf) {
				if r.Event == audit.EventToolCall {
					tools = append(tools, r.Tool)
				}
			}
			if len(tools) != 1 || tools[0] != "mcp__a__echo" {
				t.Errorf("audit lines name %v, want the canonical mcp__a__echo", tools)
			}
		})
	}
}

// TestServerNamingOnEveryPath: under --naming server, a call by a served
// name (SERVER__TOOL, or SERVER__NAME of a tool override) reaches the tool
// on every path — the relay's and the go-sdk server's, over stdio and HTTP,
// for clients of both eras — with one audit line under the canonical name;
// a registry name is not a served name, and answers as an unknown tool.
func TestServerNamingOnEveryPath(t *testing.T) {
	t.Parallel()
	const newMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	for _, tc := range []struct {
		name string
		meta string
		call func(t *testing.T, g *gateway.Gateway, body, name string) rpcAnswer
	}{
		{name: "http 2025-11-25 relay", call: httpSessionCall()},
		{name: "http 2025-11-25 go-sdk", meta: `"progressToken":"p"`, call: httpSessionCall()},
		{name: "http 2026-07-28 relay", meta: newMeta, call: httpStatelessCall},
		{name: "http 2026-07-28 go-sdk", meta: newMeta + `,"progressToken":"p"`, call: httpStatelessCall},
		{name: "stdio relay", call: stdioCall()},
		{name: "stdio go-sdk", meta: `"progressToken":"p"`, call: stdioCall()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, log, buf := hiddenGatewayWith(t, gateway.Options{Naming: config.NamingServer})
			for _, name := range []string{"a__echo", "a__add"} {
				got := tc.call(t, g, callBody(7, name, tc.meta), name)
				if !strings.Contains(got.body, `"result"`) {
					t.Errorf("call %s: %d %s", name, got.status, got.body)
				}
			}
			got := tc.call(t, g, callBody(8, "mcp__a__echo", tc.meta), "mcp__a__echo")
			if !strings.Contains(got.body, `"code":-32602`) || !strings.Contains(got.body, `unknown tool`) {
				t.Errorf("call of a registry name under server naming: %d %s, want unknown tool", got.status, got.body)
			}
			var tools []string
			for _, r := range auditLines(t, log, buf) {
				tools = append(tools, r.Tool)
			}
			if diff := cmp.Diff([]string{"mcp__a__echo", "mcp__a__add", "mcp__a__echo"}, tools); diff != "" {
				t.Errorf("audit lines' tools (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerNamingPerUser: under --naming server, a per-user server's
// tools are added to a user's tools/list as SERVER__TOOL too, and a call by
// that name reaches the tool (here the authenticate pseudo-tool of alice,
// who has not logged in); the registry name answers as an unknown tool.
func TestServerNamingPerUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		naming         string
		served, absent string
	}{
		{config.NamingServer, "prot__authenticate", "mcp__prot__authenticate"},
		{config.NamingPrefixed, "mcp__prot__authenticate", "prot__authenticate"},
	} {
		t.Run(tc.naming, func(t *testing.T) {
			t.Parallel()
			g, log, buf := hiddenGatewayWith(t, gateway.Options{Naming: tc.naming})
			checkProtServedAs(t, g, log, buf, tc.served, tc.absent, "")
		})
	}
}

// TestToolOverridesPerUser: a per-user server's tool takes its override's
// name in a user's tools/list (with its title and description), a call by
// that name reaches it, the tool's own served name answers as unknown, and
// the audit line names the canonical mcp__prot__authenticate. (Before, the
// override's name was not applied to per-user servers' tools.)
func TestToolOverridesPerUser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		naming         string
		served, absent string
	}{
		{config.NamingServer, "prot__sign_in", "prot__authenticate"},
		{config.NamingPrefixed, "mcp__prot__sign_in", "mcp__prot__authenticate"},
	} {
		t.Run(tc.naming, func(t *testing.T) {
			t.Parallel()
			g, log, buf := hiddenGatewayProt(t, gateway.Options{Naming: tc.naming}, &config.ToolFilter{Overrides: map[string]*config.ToolOverride{
				"authenticate": {Name: "sign_in", Description: "Signs you in to prot."}}})
			checkProtServedAs(t, g, log, buf, tc.served, tc.absent, `"description":"Signs you in to prot."`)
		})
	}
}

// checkProtServedAs checks prot's authenticate tool at g (per user: a
// session of alice's): alice's tools/list lists it as served, not as absent
// (and holds also, if not "", the text listed), a call of served reaches it,
// one of absent answers unknown tool, and the first audit line names the
// canonical mcp__prot__authenticate.
func checkProtServedAs(t *testing.T, g *gateway.Gateway, log *audit.Log, buf *syncbuf.Buffer, served, absent, listed string) {
	t.Helper()
	call := httpSessionCall()
	list := call(t, g, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "")
	if !strings.Contains(list.body, `"name":"`+served+`"`) || strings.Contains(list.body, `"name":"`+absent+`"`) ||
		!strings.Contains(list.body, listed) {
		t.Errorf("alice's tools/list: %s; want %s (with %s), not %s", list.body, served, listed, absent)
	}
	got := call(t, g, callBody(4, served, ""), served)
	if strings.Contains(got.body, "unknown tool") || !strings.Contains(got.body, `"result"`) {
		t.Errorf("call %s: %d %s", served, got.status, got.body)
	}
	got = call(t, g, callBody(5, absent, ""), absent)
	if !strings.Contains(got.body, "unknown tool") {
		t.Errorf("call %s: %d %s, want unknown tool", absent, got.status, got.body)
	}
	var tools []string
	for _, r := range auditLines(t, log, buf) {
		tools = append(tools, r.Tool)
	}
	if len(tools) == 0 || tools[0] != "mcp__prot__authenticate" {
		t.Errorf("audit lines' tools %v, want the first under the canonical mcp__prot__authenticate", tools)
	}
}

// TestToolOverridesSearched: --tool-search's index takes an override's
// name, title and description: a search for words only the override has
// finds the tool (under its registry name), and a search for words only the
// server's description had no longer does. (Before, the index held the
// server's text only.)
func TestToolOverridesSearched(t *testing.T) {
	t.Parallel()
	a := demo("a")
	a.Tools = &config.ToolFilter{Overrides: map[string]*config.ToolOverride{
		"add": {Name: "sum_numbers", Title: "Abacus", Description: "Totals a pair of figures for accountants."}}}
	sg := newSearchGateway(t, config.NamingPrefixed, a)
	cs := sg.stdio(t, "2026-07-28", nil)
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"accountants figures", true},
		{"abacus", true},
		{"sum numbers", true},
		{"two", false}, // (only in the server's description, "Adds two numbers.")
	} {
		f := search(t, cs, map[string]any{"query": tc.query, "limit": 20})
		if got := slices.Contains(f.names(), "mcp__a__add"); got != tc.want {
			t.Errorf("search %q found %v: mcp__a__add found %v, want %v", tc.query, f.names(), got, tc.want)
		}
	}
}

// TestToolOverrideOfNoTool: an override naming a tool the server does not
// list is reported (a registry problem, logged by serve), not refused.
func TestToolOverrideOfNoTool(t *testing.T) {
	t.Parallel()
	a := demo("a")
	a.Tools = &config.ToolFilter{Overrides: map[string]*config.ToolOverride{"ecko": {Name: "say"}, "echo": {Title: "Echo"}}}
	p := ptServe(t, ptOptions{servers: []*config.Server{a}})
	var details []string
	for _, pr := range p.problems {
		details = append(details, pr.Server+": "+pr.Detail)
	}
	want := `a: tools { override "ecko" } names no tool the server lists`
	if len(details) != 1 || !strings.HasPrefix(details[0], want) {
		t.Errorf("problems %q, want one starting %q", details, want)
	}
	// An endpoint's gateway, syncing the same server, does not report it
	// again (the whole gateway does). On the code before, every
	// endpoint's Sync reported it too.
	h := reviewHost(t, []*config.Server{a}, []*config.Endpoint{{Name: "dev", Servers: []string{"a"}}})
	dev := gateway.New(h, &gateway.Options{Endpoint: "dev"})
	t.Cleanup(func() { dev.Close() })
	if problems := dev.Sync(context.Background()); len(problems) != 0 {
		t.Errorf("the endpoint's problems: %v, want none", problems)
	}
}

// TestToolOverridesReload: changing a server's override by a hot reload
// changes what is served (the new name, title and description; the old
// name is gone) and clients are sent notifications/tools/list_changed; the
// tool stays callable (its pin is on the server's definition, which did not
// change) and its audit lines keep the canonical name.
func TestToolOverridesReload(t *testing.T) {
	t.Parallel()
	withOverride := func(o *config.ToolOverride) []*config.Server {
		a := demo("a")
		a.Tools = &config.ToolFilter{Overrides: map[string]*config.ToolOverride{"echo": o}}
		return []*config.Server{a}
	}
	var buf syncbuf.Buffer
	log := audit.New(&buf, nil)
	p := ptServe(t, ptOptions{servers: withOverride(&config.ToolOverride{Name: "say", Description: "Says it."}), gopts: &gateway.Options{Audit: log}})
	changed := make(chan struct{}, 10)
	cs := p.dial(t, "2025-11-25", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	ctx := context.Background()
	descOf := func() map[string]string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, mt := range res.Tools {
			out[mt.Name] = mt.Description
		}
		return out
	}
	if d := descOf(); d["mcp__a__say"] != "Says it." {
		t.Fatalf("before the reload: %v", d)
	}
	for _, step := range []struct {
		o          *config.ToolOverride
		name, desc string
		gone       string
	}{
		{&config.ToolOverride{Name: "shout", Title: "Shout", Description: "Shouts it."}, "mcp__a__shout", "Shouts it.", "mcp__a__say"},
		{nil, "mcp__a__echo", "", "mcp__a__shout"},
	} {
		cfg := &config.Config{Servers: withOverride(step.o), DefaultMode: "allow_all"}
		if step.o == nil {
			cfg.Servers[0].Tools = nil
		}
		if _, err := p.h.Reload(ctx, cfg, time.Second); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("override %+v: no tools/list_changed after the reload", step.o)
		}
		d := descOf()
		if _, ok := d[step.name]; !ok || (step.desc != "" && d[step.name] != step.desc) {
			t.Errorf("override %+v: served %v, want %s (%q)", step.o, d, step.name, step.desc)
		}
		if _, ok := d[step.gone]; ok {
			t.Errorf("override %+v: %s still served", step.o, step.gone)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: step.name, Arguments: map[string]any{"message": "m"}})
		if err != nil || res.IsError || textOf(res) != "m" {
			t.Errorf("call %s after the reload: %v %s", step.name, err, textOf(res))
		}
	}
	cs.Close()
	var tools []string
	for _, r := range allRecords(t, log, &buf) {
		if r.Event == audit.EventToolCall {
			tools = append(tools, r.Tool)
		}
	}
	if diff := cmp.Diff([]string{"mcp__a__echo", "mcp__a__echo"}, tools); diff != "" {
		t.Errorf("audit lines' tools (-want +got):\n%s", diff)
	}
}

// TestToolOverrideLogsCanonical: a call of a renamed tool that fails
// (here: its server's tool_timeout passes) is logged under the tool's
// canonical name, on the relay's path and the go-sdk server's.
func TestToolOverrideLogsCanonical(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		meta mcp.Meta
	}{{"relay", nil}, {"go-sdk", mcp.Meta{"progressToken": "p"}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := demo("a")
			a.ToolTimeout, a.MaxToolDuration = 150*time.Millisecond, 200*time.Millisecond
			a.Tools = &config.ToolFilter{Overrides: map[string]*config.ToolOverride{"slow": {Name: "snail"}}}
			var logs syncbuf.Buffer
			p := ptServe(t, ptOptions{servers: []*config.Server{a}, gopts: &gateway.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})}})
			cs := p.dial(t, "2025-11-25", nil)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__snail", Arguments: map[string]any{"milliseconds": 3000}, Meta: tc.meta})
			if err == nil && !res.IsError {
				t.Fatalf("the call outlived max_tool_duration: %s", textOf(res))
			}
			out := logs.String()
			if !strings.Contains(out, "tool=mcp__a__slow") || strings.Contains(out, "snail") {
				t.Errorf("logs:\n%s\nwant the failed call under tool=mcp__a__slow, never the served name", out)
			}
		})
	}
}

package gateway_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestToolSearchListChecks: search_tools shows no more of the tools than
// the tools/list response checks leave: a tool a check removes is not
// found, a description it redacts is found redacted, and a list it
// refuses refuses the search — on both fronts. (The checker is written in
// the test, the engine's seam, as in checkevents_test.go.)
func TestToolSearchListChecks(t *testing.T) {
	t.Parallel()
	filter := func(c *intercept.Call, p intercept.Phase) intercept.Verdict {
		var l mcp.ListToolsResult
		if err := json.Unmarshal(c.Payload, &l); err != nil {
			return intercept.Verdict{Action: intercept.Deny, Reason: err.Error()}
		}
		l.Tools = slices.DeleteFunc(l.Tools, func(x *mcp.Tool) bool { return x.Name == "mcp__a__echo" })
		for _, x := range l.Tools {
			x.Description = "REDACTED"
		}
		b, _ := json.Marshal(&l)
		return intercept.Verdict{Action: intercept.Mutate, Payload: b}
	}
	refuse := func(*intercept.Call, intercept.Phase) intercept.Verdict {
		return intercept.Verdict{Action: intercept.Deny, Reason: "no list for you"}
	}
	for _, tc := range []struct {
		name   string
		event  string // the check's (tools/list)
		decide func(*intercept.Call, intercept.Phase) intercept.Verdict
	}{{name: "none"}, {name: "filtered", decide: filter}, {name: "refused", decide: refuse},
		// A check of another event leaves the search alone.
		{name: "prompts/list only", event: intercept.EventPromptsList, decide: filter}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			k := &gwChecker{decide: tc.decide}
			event := intercept.EventToolsList
			if tc.event != "" {
				event = tc.event
			}
			listChecked := tc.decide != nil && event == intercept.EventToolsList
			if tc.decide != nil {
				e, err := intercept.InterceptorEntry(&config.Interceptor{Name: "guard", Builtin: "test", Events: []string{event}, Phases: []string{"response"}}, intercept.KindBuiltin, k)
				if err != nil {
					t.Fatal(err)
				}
				h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
			}
			h.ConnectAll(ctx, nil)
			g := gateway.New(h, &gateway.Options{ToolSearch: true})
			t.Cleanup(func() {
				g.Close()
				cancel()
				h.Close()
			})
			g.Sync(ctx)
			sg := &searchGateway{g: g, h: h}
			for _, front := range []string{"stdio", "http"} {
				var cs *mcp.ClientSession
				if front == "stdio" {
					cs = sg.stdio(t, "2025-11-25", nil)
				} else {
					cs = sg.http(t, "2025-11-25", nil)
				}
				args := map[string]any{"query": "echo message", "limit": 20}
				if tc.name == "refused" {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.SearchToolName, Arguments: args})
					if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), "refused by builtin guard: no list for you") {
						t.Errorf("%s: search answered %v, %v; want the refusal", front, res, err)
					}
					continue
				}
				f := search(t, cs, args)
				names := f.names()
				if len(names) < 2 {
					t.Fatalf("%s: found %v, want the echo tools", front, names)
				}
				if got := slices.Contains(names, "mcp__a__echo"); got != !listChecked {
					t.Errorf("%s: found %v: mcp__a__echo found %v", front, names, got)
				}
				for _, x := range f.Tools {
					if redacted := x.Description == "REDACTED"; redacted != listChecked {
						t.Errorf("%s: %s's description %q", front, x.Name, x.Description)
					}
				}
			}
			for _, c := range k.calls() {
				if c.Event != event {
					t.Errorf("the check saw %s", c.Event)
				}
			}
		})
	}
}

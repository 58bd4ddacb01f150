package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// The checks of prompts/get, resources/read and the list methods, with
// checkers written in the test: a Checker is the engine's seam, and each
// kind of check (hooks, plugins, interceptor servers, built-ins) is tested
// against its real peer by its own package; here what matters is what the
// host does with their verdicts, against the real demo server.

// evChecker is a Checker that returns what its func decides and keeps the
// calls it saw (by phase).
type evChecker struct {
	mu     sync.Mutex
	seen   []intercept.Call
	phases []intercept.Phase
	decide func(c *intercept.Call, p intercept.Phase) (intercept.Verdict, error)
}

func (k *evChecker) Check(_ context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	k.mu.Lock()
	k.seen = append(k.seen, *c)
	k.phases = append(k.phases, p)
	k.mu.Unlock()
	return k.decide(c, p)
}

func (k *evChecker) calls() ([]intercept.Call, []intercept.Phase) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.seen), slices.Clone(k.phases)
}

// evEntry is an in-process interceptor (the built-in kind) named name of
// events and phases ("request", "response"; none: both), run by k.
func evEntry(t *testing.T, name string, k intercept.Checker, events []string, mode string, phases ...string) *intercept.Entry {
	t.Helper()
	e, err := intercept.InterceptorEntry(&config.Interceptor{Name: name, Builtin: "test", Events: events, Phases: phases, Mode: mode}, intercept.KindBuiltin, k)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// evHost is a host of the passthrough demo server "one" with the checks
// entries in force.
func evHost(t *testing.T, opts *host.Options, entries ...*intercept.Entry) *host.Host {
	t.Helper()
	if opts == nil {
		opts = &host.Options{}
	}
	opts.OutputDir = t.TempDir()
	h, err := host.New(&config.Config{DefaultMode: "allow_all", Servers: []*config.Server{demotest.Server("one", "-passthrough")}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.Serving().SetChecksForTesting(intercept.NewChain(entries))
	return h
}

// mutate is a Mutate verdict of payload v.
func mutate(t *testing.T, v any) intercept.Verdict {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return intercept.Verdict{Action: intercept.Mutate, Payload: b}
}

// promptText is the text of a prompt result's first message.
func promptText(res *mcp.GetPromptResult) string {
	if res == nil || len(res.Messages) == 0 {
		return ""
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// wantRefused checks that err is a check's refusal by name with code and
// reason.
func wantRefused(t *testing.T, err error, name string, code int64, reason string) {
	t.Helper()
	var re *intercept.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, intercept.ErrRefused) {
		t.Fatalf("error %v (%T), want a check's refusal", err, err)
	}
	if re.By != name || re.Code != code || !strings.Contains(re.Error(), reason) {
		t.Errorf("refusal by %q, code %d: %q; want by %q, code %d, with %q", re.By, re.Code, re.Error(), name, code, reason)
	}
}

// TestCheckPromptGet: the request checks of prompts/get see {name,
// arguments} as sent to the server and may change the arguments or refuse
// the prompt (-32602); the response checks see the result and may replace
// it or refuse it (-32603); audit mode changes nothing; checks of other
// events do not run. What ran is on the call's DecisionNote.
func TestCheckPromptGet(t *testing.T) {
	t.Parallel()
	const greet = "Say hello to Ann."
	tests := []struct {
		name     string
		events   []string
		phases   []string
		mode     string
		decide   func(t *testing.T, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error)
		want     string // the prompt's text
		code     int64  // a refusal's code (0: none)
		reason   string
		decision string // the record's
		ran      int    // checks that ran (phases)
	}{
		{name: "other event", events: []string{intercept.EventToolsCall}, want: greet},
		{name: "pass", events: []string{intercept.EventPromptsGet}, want: greet, decision: "pass", ran: 2,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) (intercept.Verdict, error) {
				return intercept.Verdict{}, nil
			}},
		{name: "request mutates the arguments", events: []string{intercept.EventPromptsGet}, phases: []string{"request"}, want: "Say hello to Bob.", decision: "mutate", ran: 1,
			decide: func(t *testing.T, c *intercept.Call, _ intercept.Phase) (intercept.Verdict, error) {
				return mutate(t, map[string]any{"name": "greet", "arguments": map[string]string{"name": "Bob"}}), nil
			}},
		{name: "request refused", events: []string{intercept.EventPromptsGet}, phases: []string{"request"}, code: -32602, reason: "no prompts for Ann", decision: "deny", ran: 1,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) (intercept.Verdict, error) {
				return intercept.Verdict{Action: intercept.Deny, Reason: "no prompts for Ann"}, nil
			}},
		{name: "request refused with a code", events: []string{intercept.EventPromptsGet}, phases: []string{"request"}, code: -32001, reason: "busy", decision: "deny", ran: 1,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) (intercept.Verdict, error) {
				return intercept.Verdict{Action: intercept.Deny, Reason: "busy", Code: -32001}, nil
			}},
		{name: "request may not change the prompt", events: []string{intercept.EventPromptsGet}, phases: []string{"request"}, code: jsonrpc.CodeInternalError, reason: "another prompt's name", decision: "mutate", ran: 1,
			decide: func(t *testing.T, c *intercept.Call, _ intercept.Phase) (intercept.Verdict, error) {
				return mutate(t, map[string]any{"name": "other", "arguments": map[string]string{"name": "Ann"}}), nil
			}},
		{name: "response replaced", events: []string{intercept.EventPromptsGet}, phases: []string{"response"}, want: "[REDACTED]", decision: "mutate", ran: 1,
			decide: func(t *testing.T, c *intercept.Call, _ intercept.Phase) (intercept.Verdict, error) {
				return mutate(t, &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "[REDACTED]"}}}}), nil
			}},
		{name: "response refused", events: []string{intercept.EventPromptsGet}, phases: []string{"response"}, code: -32603, reason: "too friendly", decision: "deny", ran: 1,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) (intercept.Verdict, error) {
				return intercept.Verdict{Action: intercept.Deny, Reason: "too friendly"}, nil
			}},
		{name: "a failed check refuses", events: []string{intercept.EventPromptsGet}, phases: []string{"request"}, code: -32602, decision: "error", ran: 1,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) (intercept.Verdict, error) {
				return intercept.Verdict{}, errors.New("checker down")
			}},
		{name: "audit mode", events: []string{intercept.EventPromptsGet}, mode: "audit", want: greet, decision: "would_deny", ran: 2,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) (intercept.Verdict, error) {
				return intercept.Verdict{Action: intercept.Deny, Reason: "no"}, nil
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := &evChecker{decide: func(c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
				if tc.decide == nil {
					t.Errorf("check of %s ran", c.Event)
					return intercept.Verdict{}, nil
				}
				return tc.decide(t, c, p)
			}}
			h := evHost(t, nil, evEntry(t, "guard", k, tc.events, tc.mode, tc.phases...))
			note := new(host.DecisionNote)
			ctx := host.WithDecisionNote(context.Background(), note)
			res, err := h.GetPromptResult(ctx, "mcp__one__greet", &mcp.GetPromptParams{Arguments: map[string]string{"name": "Ann"}})
			switch {
			case tc.code == jsonrpc.CodeInternalError && tc.reason == "another prompt's name":
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != tc.code || !strings.Contains(rpc.Message, tc.reason) {
					t.Fatalf("error %v, want -32603 with %q", err, tc.reason)
				}
			case tc.code != 0:
				wantRefused(t, err, "guard", tc.code, tc.reason)
			case err != nil:
				t.Fatal(err)
			case promptText(res) != tc.want:
				t.Errorf("prompt %q, want %q", promptText(res), tc.want)
			}
			seen, phases := k.calls()
			if len(seen) != tc.ran {
				t.Fatalf("%d checks ran (%v), want %d", len(seen), phases, tc.ran)
			}
			for i, c := range seen {
				if c.Event != intercept.EventPromptsGet || c.Server != "one" || c.Name != "mcp__one__greet" || c.Original != "greet" || c.Front != "library" || c.Who != nil {
					t.Errorf("call %+v", c)
				}
				var payload map[string]any
				if err := json.Unmarshal(c.Payload, &payload); err != nil {
					t.Fatalf("payload %s: %v", c.Payload, err)
				}
				if phases[i] == intercept.Request {
					if payload["name"] != "greet" || payload["arguments"].(map[string]any)["name"] != "Ann" {
						t.Errorf("request payload %s", c.Payload)
					}
				} else if _, ok := payload["messages"]; !ok {
					t.Errorf("response payload %s", c.Payload)
				}
			}
			recs := note.Checks()
			if len(recs) != tc.ran {
				t.Fatalf("records %+v, want %d", recs, tc.ran)
			}
			for _, r := range recs {
				if r.Name != "guard" || r.Kind != intercept.KindBuiltin || !strings.HasPrefix(r.Event, "prompts/get/") || r.Decision != tc.decision && r.Decision != "pass" {
					t.Errorf("record %+v, want guard's %s", r, tc.decision)
				}
			}
			if tc.ran > 0 && !slices.ContainsFunc(recs, func(r intercept.Record) bool { return r.Decision == tc.decision }) {
				t.Errorf("records %+v, none %s", recs, tc.decision)
			}
		})
	}
}

// TestCheckResourceRead: the request checks of resources/read see {uri}
// and may point it at another resource of the server or refuse it
// (-32602); the response checks may replace or refuse the contents.
func TestCheckResourceRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		phases []string
		decide func(t *testing.T, c *intercept.Call, p intercept.Phase) intercept.Verdict
		want   string
		code   int64
	}{
		{name: "pass", want: "This is the mcphost demo server.",
			decide: func(*testing.T, *intercept.Call, intercept.Phase) intercept.Verdict { return intercept.Verdict{} }},
		{name: "request points elsewhere", phases: []string{"request"}, want: "I am one.",
			decide: func(t *testing.T, c *intercept.Call, _ intercept.Phase) intercept.Verdict {
				if string(c.Payload) != `{"uri":"demo://readme"}` {
					t.Errorf("payload %s", c.Payload)
				}
				return mutate(t, map[string]string{"uri": "demo://whoami"})
			}},
		{name: "request refused", phases: []string{"request"}, code: -32602,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) intercept.Verdict {
				return intercept.Verdict{Action: intercept.Deny, Reason: "not for you"}
			}},
		{name: "response redacted", phases: []string{"response"}, want: "This is the [REDACTED] demo server.",
			decide: func(t *testing.T, c *intercept.Call, _ intercept.Phase) intercept.Verdict {
				return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(strings.Replace(string(c.Payload), "mcphost", "[REDACTED]", 1))}
			}},
		{name: "response refused", phases: []string{"response"}, code: -32603,
			decide: func(*testing.T, *intercept.Call, intercept.Phase) intercept.Verdict {
				return intercept.Verdict{Action: intercept.Deny, Reason: "not for you"}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := &evChecker{decide: func(c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
				if c.Event != intercept.EventResourcesRead || c.Server != "one" || c.Name != "demo://readme" {
					t.Errorf("call %+v", c)
				}
				return tc.decide(t, c, p), nil
			}}
			h := evHost(t, nil, evEntry(t, "guard", k, []string{intercept.EventResourcesRead}, "", tc.phases...))
			res, err := h.ReadResourceResult(context.Background(), "one", &mcp.ReadResourceParams{URI: "demo://readme"})
			if tc.code != 0 {
				wantRefused(t, err, "guard", tc.code, "not for you")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 || res.Contents[0].Text != tc.want {
				t.Errorf("contents %+v, want %q", res.Contents, tc.want)
			}
		})
	}
}

// TestCheckList: a list's response checks see it whole and may filter it
// (the list becomes theirs; the items it held are not changed) or refuse
// it (-32603) (a list's request has no checks: intercept.InterceptorEntry
// refuses them); a list no check matches, and a result of another kind, pass
// untouched. A list changed for a gateway caller is private to it.
func TestCheckList(t *testing.T) {
	t.Parallel()
	filter := func(t *testing.T, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
		if p != intercept.Response {
			t.Errorf("a list checked in phase %v", p)
		}
		var l mcp.ListToolsResult
		if err := json.Unmarshal(c.Payload, &l); err != nil {
			t.Fatal(err)
		}
		l.Tools = slices.DeleteFunc(l.Tools, func(x *mcp.Tool) bool { return strings.Contains(x.Name, "secret") })
		return mutate(t, &l), nil
	}
	newList := func() (*mcp.ListToolsResult, []*mcp.Tool) {
		tools := []*mcp.Tool{{Name: "mcp__one__echo", InputSchema: map[string]any{"type": "object"}}, {Name: "mcp__one__secret", InputSchema: map[string]any{"type": "object"}}}
		return &mcp.ListToolsResult{Tools: slices.Clone(tools)}, tools
	}
	alice := &inbound.Principal{Issuer: "https://idp", Subject: "alice"}
	tests := []struct {
		name   string
		events []string
		who    *inbound.Principal
		decide func(t *testing.T, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error)
		method string
		want   []string
		scope  string
		code   int64 // a refusal's
	}{
		{name: "filtered", events: []string{intercept.EventToolsList}, decide: filter, method: "tools/list", want: []string{"mcp__one__echo"}},
		{name: "filtered for a caller", events: []string{intercept.EventToolsList}, who: alice, decide: filter, method: "tools/list", want: []string{"mcp__one__echo"}, scope: "private"},
		{name: "another list's check", events: []string{intercept.EventPromptsList}, decide: filter, method: "tools/list", want: []string{"mcp__one__echo", "mcp__one__secret"}},
		{name: "not a list", events: []string{intercept.EventToolsList}, decide: filter, method: "tools/call", want: []string{"mcp__one__echo", "mcp__one__secret"}},
		{name: "refused", events: []string{intercept.EventToolsList}, method: "tools/list", code: -32603,
			decide: func(_ *testing.T, _ *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
				if p == intercept.Request {
					return intercept.Verdict{}, nil
				}
				return intercept.Verdict{Action: intercept.Deny, Reason: "no lists today"}, nil
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := &evChecker{decide: func(c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) { return tc.decide(t, c, p) }}
			h := evHost(t, nil, evEntry(t, "lists", k, tc.events, ""))
			ctx := host.WithCaller(context.Background(), tc.who, "")
			l, tools := newList()
			err := h.Serving().CheckList(ctx, tc.method, l)
			if tc.code != 0 {
				wantRefused(t, err, "lists", tc.code, "no lists today")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range l.Tools {
				got = append(got, x.Name)
			}
			if !slices.Equal(got, tc.want) || l.CacheScope != tc.scope {
				t.Errorf("list %v, cacheScope %q; want %v, %q", got, l.CacheScope, tc.want, tc.scope)
			}
			if tools[0].Name != "mcp__one__echo" || tools[1].Name != "mcp__one__secret" {
				t.Errorf("the listed tools were changed: %v %v", tools[0], tools[1])
			}
			seen, _ := k.calls()
			for _, c := range seen {
				if c.Event != tc.method || c.Server != "" || c.Name != "" || c.Who != tc.who {
					t.Errorf("call %+v", c)
				}
			}
		})
	}
}

// TestCheckCallInfo: a check is told the session, endpoint and front its
// call came by (host.WithCallInfo), and its span is recorded under the
// request's.
func TestCheckCallInfo(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.New(context.Background(), &telemetry.Options{SpanExporter: exp, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	k := &evChecker{decide: func(*intercept.Call, intercept.Phase) (intercept.Verdict, error) { return intercept.Verdict{}, nil }}
	h := evHost(t, &host.Options{Telemetry: tel}, evEntry(t, "guard", k, []string{intercept.EventPromptsGet}, "", "request"))
	ctx, span := tel.StartRequest(context.Background(), "prompts/get", "mcp__one__greet", telemetry.RequestInfo{})
	ctx = host.WithCallInfo(ctx, host.CallInfo{Session: "0123456789abcdef", Endpoint: "dev", Front: "http"})
	if _, err := h.GetPromptResult(ctx, "mcp__one__greet", &mcp.GetPromptParams{Arguments: map[string]string{"name": "Ann"}}); err != nil {
		t.Fatal(err)
	}
	span.End(nil)
	seen, _ := k.calls()
	if len(seen) != 1 || seen[0].Session != "0123456789abcdef" || seen[0].Endpoint != "dev" || seen[0].Front != "http" {
		t.Fatalf("calls %+v", seen)
	}
	if err := tel.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var parent, check *tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		switch s.Name {
		case "prompts/get mcp__one__greet":
			parent = &s
		case telemetry.CheckSpanName:
			check = &s
		}
	}
	if parent == nil || check == nil {
		t.Fatalf("spans %v", exp.GetSpans())
	}
	if check.Parent.SpanID() != parent.SpanContext.SpanID() {
		t.Errorf("the check's span is not the request's child")
	}
	attrs := map[string]string{}
	for _, a := range check.Attributes {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	want := map[string]string{"mcphost.check.name": "guard", "mcphost.check.kind": "builtin", "mcphost.check.event": "prompts/get/request", "mcphost.check.decision": "pass"}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, attrs[k], v)
		}
	}
}

// TestCheckListFree: a list no check matches costs no allocation: with
// no checks at all, and with checks of other events only. (Not parallel:
// AllocsPerRun.)
func TestCheckListFree(t *testing.T) {
	k := &evChecker{decide: func(*intercept.Call, intercept.Phase) (intercept.Verdict, error) { return intercept.Verdict{}, nil }}
	for name, entries := range map[string][]*intercept.Entry{
		"no checks":    nil,
		"other events": {evEntry(t, "guard", k, []string{intercept.EventToolsCall, intercept.EventPromptsList}, "")},
	} {
		t.Run(name, func(t *testing.T) {
			h := evHost(t, nil, entries...)
			l := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "mcp__one__echo"}}}
			ctx := context.Background()
			if err := h.Serving().CheckList(ctx, "tools/list", l); err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(100, func() { h.Serving().CheckList(ctx, "tools/list", l) }); n != 0 {
				t.Errorf("CheckList allocates %v times, want 0", n)
			}
			if got := h.Serving().HasChecks(); got != (entries != nil) {
				t.Errorf("HasChecks = %v", got)
			}
		})
	}
	if seen, _ := k.calls(); len(seen) != 0 {
		t.Errorf("checks ran: %+v", seen)
	}
}

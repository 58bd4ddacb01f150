package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// The gate's hooks and interceptors with checks written in the test (a
// Checker is the engine's seam: the real kinds — command hooks, plugins,
// interceptor servers — have their own tests against real processes, and
// checks_real_test.go runs them through the host), against the real demo
// server.

// checkFunc is a Checker.
type checkFunc func(ctx context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error)

func (f checkFunc) Check(ctx context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	return f(ctx, c, p)
}

// counted is a check that counts its runs and returns v.
type counted struct {
	runs atomic.Int32
	mu   sync.Mutex
	last *intercept.Call // the last call it saw
	v    func(c *intercept.Call) intercept.Verdict
}

func (k *counted) Check(_ context.Context, c *intercept.Call, _ intercept.Phase) (intercept.Verdict, error) {
	k.runs.Add(1)
	k.mu.Lock()
	cc := *c
	k.last = &cc
	k.mu.Unlock()
	return k.v(c), nil
}

func verdict(v intercept.Verdict) func(*intercept.Call) intercept.Verdict {
	return func(*intercept.Call) intercept.Verdict { return v }
}

// hookEntry is a hook of event run by ck: for the tool calls of
// mcp__one__echo (not the test's stats), the elicitations of every server.
func hookEntry(t *testing.T, event string, ck intercept.Checker, mod ...func(*config.Hook)) *intercept.Entry {
	t.Helper()
	hk := &config.Hook{Event: event, Command: "test", Origin: config.Origin{Scope: config.ScopeUser, File: "/test/config.hcl"}}
	if !strings.HasPrefix(event, "Elicitation") {
		hk.Match = &config.CheckMatch{Tools: []string{"mcp__one__echo", "mcp__one__fail"}}
	}
	for _, m := range mod {
		m(hk)
	}
	e, err := intercept.HookEntry(hk, ck)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// interceptorEntry is a built-in-kind interceptor (in process) run by ck.
func interceptorEntry(t *testing.T, name string, ck intercept.Checker, phases ...string) *intercept.Entry {
	t.Helper()
	ic := &config.Interceptor{Name: name, Builtin: "test", Phases: phases, Match: &config.CheckMatch{Tools: []string{"mcp__one__echo"}}}
	e, err := intercept.InterceptorEntry(ic, intercept.KindBuiltin, ck)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkedHost is a host of the demo server "one" (extra demo flags args)
// under the default mode and rules given, with the checks entries.
func checkedHost(t *testing.T, cfg *config.Config, opts *Options, entries ...*intercept.Entry) *Host {
	t.Helper()
	if cfg == nil {
		cfg = &config.Config{DefaultMode: "allow_all"}
	}
	if len(cfg.Servers) == 0 {
		cfg.Servers = []*config.Server{demotest.Server("one")}
	}
	if opts == nil {
		opts = &Options{}
	}
	opts.OutputDir = t.TempDir()
	h, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.checks.Store(intercept.NewChain(entries))
	return h
}

// calls returns how often the demo server "one" ran tool.
func calls(t *testing.T, h *Host, tool string) int {
	t.Helper()
	res, err := h.CallTool(WithoutCaller(context.Background()), "mcp__one__stats", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var st map[string]int
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("stats: %s: %v", b, err)
	}
	return st[tool]
}

func askRule(pattern string) []config.PermissionRule {
	return []config.PermissionRule{{Pattern: pattern, Behavior: permissions.Ask}}
}

// TestGatePreToolUse: the PreToolUse hooks' decision merged with the rules'
// (deny > ask > allow: a hook's allow skips only the default mode's
// question, never an ask rule's; a hook's ask forces the question; a
// hook's deny refuses the call before the server sees it, and a call the
// rules deny runs no hook); updatedInput is what the server gets.
func TestGatePreToolUse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mode   string
		perms  []config.PermissionRule
		v      intercept.Verdict
		asked  bool   // Options.Ask was asked
		denied bool   // the call was refused
		rule   string // the pattern of the decision's rule ("": none)
		hooks  int32  // runs of the hook
		echo   string // what the server echoed
	}{
		{name: "pass", mode: "allow_all", v: intercept.Verdict{}, hooks: 1, echo: "hi"},
		{name: "deny", mode: "allow_all", v: intercept.Verdict{Action: intercept.Deny, Reason: "no echo today"}, denied: true, rule: HookRulePattern, hooks: 1},
		{name: "allow skips the default mode's ask", mode: "ask", v: intercept.Verdict{Action: intercept.Allow}, rule: HookRulePattern, hooks: 1, echo: "hi"},
		{name: "allow keeps an ask rule", mode: "allow_all", perms: askRule("mcp__one__echo"), v: intercept.Verdict{Action: intercept.Allow}, asked: true, rule: "mcp__one__echo", hooks: 1, echo: "hi"},
		{name: "ask forces the question", mode: "allow_all", v: intercept.Verdict{Action: intercept.Ask, Reason: "sure?"}, asked: true, rule: HookRulePattern, hooks: 1, echo: "hi"},
		{name: "default ask without a decision", mode: "ask", v: intercept.Verdict{}, asked: true, hooks: 1, echo: "hi"},
		{name: "updatedInput", mode: "allow_all", v: intercept.Verdict{Action: intercept.Allow, Payload: json.RawMessage(`{"message":"rewritten"}`)}, hooks: 1, echo: "rewritten"},
		{name: "rules deny: no hook", mode: "deny", perms: []config.PermissionRule{{Pattern: "mcp__one__stats", Behavior: permissions.Allow}}, v: intercept.Verdict{Action: intercept.Allow}, denied: true, hooks: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hook := &counted{v: verdict(tc.v)}
			var asked atomic.Int32
			var askedRule string
			opts := &Options{Ask: func(_ context.Context, _ *registry.Tool, d permissions.Decision) (bool, error) {
				asked.Add(1)
				if d.Rule != nil {
					askedRule = d.Rule.Pattern
				}
				return true, nil
			}}
			h := checkedHost(t, &config.Config{DefaultMode: tc.mode, Permissions: tc.perms}, opts, hookEntry(t, "PreToolUse", hook))
			n := new(DecisionNote)
			ctx := WithDecisionNote(context.Background(), n)
			res, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "hi"}, nil)
			if got := hook.runs.Load(); got != tc.hooks {
				t.Errorf("the hook ran %d times, want %d", got, tc.hooks)
			}
			if (asked.Load() > 0) != tc.asked {
				t.Errorf("asked %d times, want asked %v", asked.Load(), tc.asked)
			}
			if tc.asked && tc.rule != "" && askedRule != tc.rule {
				t.Errorf("asked about rule %q, want %q", askedRule, tc.rule)
			}
			if d, _, ok := n.Get(); ok && tc.rule != "" && (d.Rule == nil || d.Rule.Pattern != tc.rule) {
				t.Errorf("decision %+v, want rule %q", d, tc.rule)
			}
			if tc.denied {
				if !errors.Is(err, ErrDenied) {
					t.Fatalf("err %v, want ErrDenied", err)
				}
				if tc.hooks > 0 {
					var r *intercept.RefusedError
					if !errors.As(err, &r) || !errors.Is(err, intercept.ErrRefused) || !strings.Contains(err.Error(), "no echo today") {
						t.Fatalf("err %v, want a refusal by the hook with its reason", err)
					}
				}
				if n := calls(t, h, "echo"); n != 0 {
					t.Fatalf("the server ran echo %d times", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := TextOf(res.Content); got != tc.echo {
				t.Fatalf("echo %q, want %q", got, tc.echo)
			}
			if tc.hooks > 0 {
				if hook.last.ID == "" || !strings.HasPrefix(hook.last.ID, "mcphost_") || hook.last.Name != "mcp__one__echo" || hook.last.Front != "library" || hook.last.Session == "" {
					t.Errorf("the hook saw %+v", hook.last)
				}
			}
			if recs := n.Checks(); len(recs) != int(tc.hooks) {
				t.Errorf("records %+v, want %d", recs, tc.hooks)
			}
		})
	}
}

// TestGateRequestInterceptors: the request interceptors check the
// arguments the hooks left, before anyone is asked; a refusal with a code
// is that JSON-RPC error (validate_input's -32602), and the server never
// sees the call; a mutation is what the server gets.
func TestGateRequestInterceptors(t *testing.T) {
	t.Parallel()
	var order []string
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	hook := &counted{v: func(*intercept.Call) intercept.Verdict {
		note("hook")
		return intercept.Verdict{Action: intercept.Ask, Payload: json.RawMessage(`{"message":"bad"}`)}
	}}
	validate := &counted{v: func(c *intercept.Call) intercept.Verdict {
		note("validate")
		if strings.Contains(string(c.Payload), "bad") {
			return intercept.Verdict{Action: intercept.Deny, Code: jsonrpc.CodeInvalidParams, Reason: "invalid arguments for mcp__one__echo: at '/message': bad"}
		}
		return intercept.Verdict{}
	}}
	var asked atomic.Int32
	opts := &Options{Ask: func(context.Context, *registry.Tool, permissions.Decision) (bool, error) {
		asked.Add(1)
		return true, nil
	}}
	h := checkedHost(t, nil, opts, hookEntry(t, "PreToolUse", hook), interceptorEntry(t, "args", validate, "request"))
	_, err := h.CallTool(context.Background(), "mcp__one__echo", map[string]any{"message": "good"}, nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "at '/message'") {
		t.Fatalf("err %v, want -32602 naming the path", err)
	}
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("err %v does not match ErrDenied", err)
	}
	if asked.Load() != 0 {
		t.Fatal("asked about a call the interceptor refused")
	}
	if n := calls(t, h, "echo"); n != 0 {
		t.Fatalf("the server ran echo %d times", n)
	}
	if strings.Join(order, ",") != "hook,validate" {
		t.Fatalf("order %v", order)
	}

	// A mutation is what the server gets.
	upper := &counted{v: func(c *intercept.Call) intercept.Verdict {
		return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(strings.ReplaceAll(string(c.Payload), "hi", "HI"))}
	}}
	h2 := checkedHost(t, nil, nil, interceptorEntry(t, "upper", upper, "request"))
	res, err := h2.CallTool(context.Background(), "mcp__one__echo", json.RawMessage(`{"message":"hi"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := TextOf(res.Content); got != "HI" {
		t.Fatalf("echo %q, want HI", got)
	}
}

// TestGateResponseChecks: the response checks see the result before the
// caller does, on the go-sdk path (CallTool) and on the relay (RelayCall):
// a PostToolUse block is an error result with its reason, an
// updatedMCPToolOutput replaces the output, and a result nothing changed
// goes out as the server's bytes. A failed call goes to the
// PostToolUseFailure hooks.
func TestGateResponseChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		v       intercept.Verdict
		want    string
		isError bool
	}{
		{name: "pass", v: intercept.Verdict{}, want: "hi"},
		{name: "block", v: intercept.Verdict{Action: intercept.Deny, Reason: "not for you"}, want: "not for you", isError: true},
		{name: "updatedMCPToolOutput", v: intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"replaced"}]}`)}, want: "replaced"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			post := &counted{v: verdict(tc.v)}
			h := checkedHost(t, nil, nil, hookEntry(t, "PostToolUse", post))
			ctx := context.Background()
			res, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "hi"}, nil)
			if tc.isError {
				var te *ToolError
				if !errors.As(err, &te) || !res.IsError {
					t.Fatalf("CallTool: %v, want a tool error", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := TextOf(res.Content); !strings.Contains(got, tc.want) {
				t.Fatalf("CallTool: %q, want %q", got, tc.want)
			}
			if got := string(post.last.Payload); !strings.Contains(got, `"hi"`) {
				t.Fatalf("the hook saw %s", got)
			}
			// The relay.
			if _, problems := h.Tools(ctx); len(problems) > 0 {
				t.Fatal(problems)
			}
			resp, handled, err := h.Serving().RelayCall(ctx, "mcp__one__echo", json.RawMessage(`{"message":"hi"}`), RelayOptions{ProtocolVersion: conn.NewProtocol})
			if !handled || err != nil {
				t.Fatalf("RelayCall: handled %v, %v", handled, err)
			}
			var jr struct {
				Result mcp.CallToolResult `json:"result"`
			}
			if err := json.Unmarshal(resp, &jr); err != nil {
				t.Fatalf("%s: %v", resp, err)
			}
			if got := TextOf(jr.Result.Content); !strings.Contains(got, tc.want) || jr.Result.IsError != tc.isError {
				t.Fatalf("RelayCall: %s, want %q (isError %v)", resp, tc.want, tc.isError)
			}
			if post.runs.Load() != 2 {
				t.Fatalf("the hook ran %d times", post.runs.Load())
			}
		})
	}

	// A failed call: PostToolUseFailure.
	failure := &counted{v: verdict(intercept.Verdict{})}
	post := &counted{v: verdict(intercept.Verdict{})}
	h := checkedHost(t, nil, nil, hookEntry(t, "PostToolUseFailure", failure), hookEntry(t, "PostToolUse", post))
	if _, err := h.CallTool(context.Background(), "mcp__one__fail", nil, nil); err == nil {
		t.Fatal("fail did not fail")
	}
	if failure.runs.Load() != 1 || post.runs.Load() != 0 || !failure.last.IsError {
		t.Fatalf("PostToolUseFailure ran %d times (%+v), PostToolUse %d", failure.runs.Load(), failure.last, post.runs.Load())
	}
}

// TestRelayChecks: the relay takes calls that no check matches (RelayStart
// starts them); a call a hook checks is left by RelayStart (a hook runs a
// process: not on a read loop) and taken by RelayCall, its hooks run once
// however many steps gate it; a built-in check runs on RelayStart's read
// loop.
func TestRelayChecks(t *testing.T) {
	t.Parallel()
	hook := &counted{v: verdict(intercept.Verdict{})}
	other := hookEntry(t, "PreToolUse", hook, func(hk *config.Hook) { hk.Match = &config.CheckMatch{Tools: []string{"mcp__other__*"}} })
	builtin := &counted{v: verdict(intercept.Verdict{})}
	onEcho := interceptorEntry(t, "b", builtin, "request")
	onEcho.Match.Tools = []string{"mcp__one__add"}
	h := checkedHost(t, nil, nil, other, onEcho)
	ctx := context.Background()
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	start := func(h *Host, tool, args string) (bool, string) {
		t.Helper()
		ch := make(chan []byte, 1)
		ok := h.Serving().RelayStart(ctx, tool, json.RawMessage(args), RelayOptions{ProtocolVersion: conn.NewProtocol},
			func(resp []byte, handled bool, err error) {
				if err != nil || !handled {
					t.Errorf("%s: handled %v, %v", tool, handled, err)
				}
				ch <- resp
			})
		if !ok {
			return false, ""
		}
		return true, string(<-ch)
	}
	if ok, resp := start(h, "mcp__one__echo", `{"message":"fast"}`); !ok || !strings.Contains(resp, "fast") {
		t.Fatalf("an unmatched call: started %v, %s", ok, resp)
	}
	if ok, resp := start(h, "mcp__one__add", `{"a":1,"b":2}`); !ok || !strings.Contains(resp, "3") || builtin.runs.Load() != 1 {
		t.Fatalf("a call a built-in checks: started %v, %s, ran %d", ok, resp, builtin.runs.Load())
	}
	if hook.runs.Load() != 0 {
		t.Fatal("a hook for other tools ran")
	}

	// A hook that matches: not on the read loop.
	pre := &counted{v: verdict(intercept.Verdict{Action: intercept.Ask})}
	h2 := checkedHost(t, nil, nil, hookEntry(t, "PreToolUse", pre))
	if _, problems := h2.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	n := new(DecisionNote)
	nctx := WithDecisionNote(ctx, n)
	if h2.Serving().RelayStart(nctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), RelayOptions{ProtocolVersion: conn.NewProtocol}, func([]byte, bool, error) {}) {
		t.Fatal("RelayStart took a call a hook checks")
	}
	if pre.runs.Load() != 0 {
		t.Fatal("RelayStart ran a hook")
	}
	// The hook asks: the relay leaves the call to the full path, which
	// asks (here: the caller asks) without running the hook again.
	if _, handled, _ := h2.Serving().RelayCall(nctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), RelayOptions{ProtocolVersion: conn.NewProtocol}); handled {
		t.Fatal("RelayCall took a call a hook asks about")
	}
	_, err := h2.CallTool(nctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), &CallOptions{CallerAsks: true})
	var ar *ApprovalRequiredError
	if !errors.As(err, &ar) || ar.Decision.Rule == nil || ar.Decision.Rule.Pattern != HookRulePattern {
		t.Fatalf("err %v, want the hook's question", err)
	}
	if pre.runs.Load() != 1 {
		t.Fatalf("the hook ran %d times in one call", pre.runs.Load())
	}
	if recs := n.Checks(); len(recs) != 1 || recs[0].Decision != "ask" {
		t.Fatalf("records %+v", recs)
	}
	// Allowed by the hook: RelayCall takes it.
	pre2 := &counted{v: verdict(intercept.Verdict{Action: intercept.Allow, Payload: json.RawMessage(`{"message":"by hook"}`)})}
	h3 := checkedHost(t, nil, nil, hookEntry(t, "PreToolUse", pre2))
	if _, problems := h3.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	resp, handled, err := h3.Serving().RelayCall(ctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), RelayOptions{ProtocolVersion: conn.NewProtocol})
	if !handled || err != nil || !strings.Contains(string(resp), "by hook") {
		t.Fatalf("RelayCall: %s, %v, %v", resp, handled, err)
	}
}

// TestGateAuditMode: a check in audit mode runs and is recorded as what it
// would do, and changes nothing.
func TestGateAuditMode(t *testing.T) {
	t.Parallel()
	deny := &counted{v: verdict(intercept.Verdict{Action: intercept.Deny, Reason: "would"})}
	e := hookEntry(t, "PreToolUse", deny, func(hk *config.Hook) { hk.Mode = "audit" })
	h := checkedHost(t, nil, nil, e)
	n := new(DecisionNote)
	res, err := h.CallTool(WithDecisionNote(context.Background(), n), "mcp__one__echo", map[string]any{"message": "hi"}, nil)
	if err != nil || TextOf(res.Content) != "hi" {
		t.Fatalf("%v, %v", res, err)
	}
	if recs := n.Checks(); len(recs) != 1 || recs[0].Decision != "would_deny" {
		t.Fatalf("records %+v", recs)
	}
}

// TestElicitationHooks: an Elicitation hook answers a server's question
// without anyone being asked — asked in the result (2026-07-28) and by the
// server's own request during the call (before) — and an
// ElicitationResult hook changes an answer.
func TestElicitationHooks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, tool, protocol string }{
		{"input required", "ask", ""},
		{"elicitation/create", "ask_old", "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answer := &counted{v: func(c *intercept.Call) intercept.Verdict {
				if c.Elicit == nil || c.Server != "one" {
					return intercept.Verdict{}
				}
				return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"accept","content":{"answer":"from the hook"}}`)}
			}}
			var asked atomic.Int32
			srv := demotest.Server("one", "-passthrough")
			if tc.protocol != "" {
				srv = demotest.Server("one", "-passthrough", "-protocol", tc.protocol)
			}
			h := checkedHost(t, &config.Config{Servers: []*config.Server{srv}, DefaultMode: "allow_all"}, &Options{
				OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			}, hookEntry(t, "Elicitation", answer))
			res, err := h.CallTool(context.Background(), "mcp__one__"+tc.tool, map[string]any{"question": "?"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := TextOf(res.Content); !strings.Contains(got, "answer: from the hook") || asked.Load() != 0 || answer.runs.Load() != 1 {
				t.Fatalf("%q; asked %d, hook ran %d", got, asked.Load(), answer.runs.Load())
			}
		})
	}
	// ElicitationResult overrides the user's answer.
	override := &counted{v: verdict(intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"accept","content":{"answer":"overridden"}}`)})}
	h := checkedHost(t, &config.Config{Servers: []*config.Server{demotest.Server("one", "-passthrough")}, DefaultMode: "allow_all"}, &Options{
		OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "user"}}, nil
		},
	}, hookEntry(t, "ElicitationResult", override))
	res, err := h.CallTool(context.Background(), "mcp__one__ask", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := TextOf(res.Content); !strings.Contains(got, "answer: overridden") {
		t.Fatalf("%q", got)
	}
}

// TestBuildChecks: a kind this build cannot run refuses the configuration
// (New and Reload); a project file's blocks not approved do not run.
func TestBuildChecks(t *testing.T) {
	t.Parallel()
	hk := &config.Hook{Event: "PreToolUse", Command: "true", Approved: true, Origin: config.Origin{Scope: config.ScopeUser, File: "/u/config.hcl"}}
	unapproved := &config.Hook{Event: "PreToolUse", Command: "true", Origin: config.Origin{Scope: config.ScopeProject, File: "/p/.mcphost.hcl"}}
	none := checkKinds{}
	if c, err := buildChecks(&config.Config{Hooks: []*config.Hook{unapproved}}, none); err != nil || c != nil {
		t.Fatalf("an unapproved project hook: %v, %v", c, err)
	}
	if _, err := buildChecks(&config.Config{Hooks: []*config.Hook{hk}}, none); !errors.Is(err, ErrCheckUnsupported) || !strings.Contains(err.Error(), "/u/config.hcl") {
		t.Fatalf("an unsupported hook: %v", err)
	}
	for _, ic := range []*config.Interceptor{{Name: "p", Plugin: "x"}, {Name: "s", Server: "x"}, {Name: "b", Builtin: "x"}} { // (none: no kind runs)
		if _, err := buildChecks(&config.Config{Interceptors: []*config.Interceptor{ic}}, none); !errors.Is(err, ErrCheckUnsupported) {
			t.Fatalf("%s: %v", ic.Name, err)
		}
	}
	var built []string
	kinds := checkKinds{
		hook: func(h *config.Hook) (*intercept.Entry, error) {
			built = append(built, "hook "+h.Event)
			return intercept.HookEntry(h, checkFunc(nil))
		},
		builtin: func(ic *config.Interceptor) (*intercept.Entry, error) {
			built = append(built, "builtin "+ic.Name)
			return intercept.InterceptorEntry(ic, intercept.KindBuiltin, checkFunc(nil))
		},
	}
	c, err := buildChecks(&config.Config{Hooks: []*config.Hook{hk, unapproved}, Interceptors: []*config.Interceptor{{Name: "v", Builtin: "validate_input"}}}, kinds)
	if err != nil || c == nil || strings.Join(built, ",") != "hook PreToolUse,builtin v" {
		t.Fatalf("%v, %v, %v", c, err, built)
	}
}

// TestGateUncheckedAllocs: a call no check matches costs the gate nothing
// more than a call with no checks configured: no allocation (the relay's
// fast path, gateNoPerson and gateNoWait).
func TestGateUncheckedAllocs(t *testing.T) {
	other := hookEntry(t, "PreToolUse", &counted{v: verdict(intercept.Verdict{})}, func(hk *config.Hook) {
		hk.Match = &config.CheckMatch{Tools: []string{"mcp__other__*"}}
	})
	ctx := context.Background()
	args := callArgs{raw: json.RawMessage(`{"message":"m"}`)}
	var allocs [2]float64
	for i, entries := range [][]*intercept.Entry{nil, {other}} {
		h := checkedHost(t, nil, nil, entries...)
		if _, problems := h.Tools(ctx); len(problems) > 0 {
			t.Fatal(problems)
		}
		for _, mode := range []gateMode{gateNoPerson, gateNoWait} {
			if g, err := h.gate(ctx, "mcp__one__echo", "one", true, false, 0, mode, args); err != nil || g.plan != nil {
				t.Fatalf("gate: %v, plan %v", err, g)
			}
		}
		allocs[i] = testing.AllocsPerRun(500, func() {
			h.gate(ctx, "mcp__one__echo", "one", true, false, 0, gateNoWait, args)
			h.gate(ctx, "mcp__one__echo", "one", true, false, 0, gateNoPerson, args)
		})
	}
	if allocs[1] != allocs[0] {
		t.Fatalf("the gate allocates %.1f times for a call no check matches, %.1f with no checks", allocs[1], allocs[0])
	}
}

// TestMergeHooks: the PreToolUse hooks' decision merged with the rules'
// (D1): deny > ask > allow; a hook's allow turns only the default mode's
// ask into allow; a decision a hook made names the hook as its rule.
func TestMergeHooks(t *testing.T) {
	t.Parallel()
	rule := func(b permissions.Behavior) permissions.Decision {
		return permissions.Decision{Behavior: b, Rule: &permissions.Rule{Behavior: b, Pattern: "mcp__s__t", Source: "u.hcl:1"}}
	}
	mode := func(b permissions.Behavior) permissions.Decision {
		return permissions.Decision{Behavior: b, Mode: permissions.ModeAsk}
	}
	managed := func(b permissions.Behavior) permissions.Decision {
		return permissions.Decision{Behavior: b, Mode: permissions.ModeAsk, ModeSource: "managed scope, /etc/m.hcl:1", ModeManaged: true}
	}
	by := &intercept.Entry{Name: "PreToolUse", Source: "user scope, /h.hcl:3"}
	tests := []struct {
		d        permissions.Decision
		hook     intercept.Action
		want     permissions.Behavior
		fromHook bool
	}{
		{mode(permissions.Allow), intercept.Pass, permissions.Allow, false},
		{mode(permissions.Allow), intercept.Allow, permissions.Allow, false},
		{mode(permissions.Allow), intercept.Ask, permissions.Ask, true},
		{mode(permissions.Allow), intercept.Deny, permissions.Deny, true},
		{rule(permissions.Allow), intercept.Ask, permissions.Ask, true},
		{rule(permissions.Allow), intercept.Deny, permissions.Deny, true},
		{mode(permissions.Ask), intercept.Pass, permissions.Ask, false},
		{mode(permissions.Ask), intercept.Allow, permissions.Allow, true},
		{mode(permissions.Ask), intercept.Ask, permissions.Ask, true},
		{mode(permissions.Ask), intercept.Deny, permissions.Deny, true},
		{rule(permissions.Ask), intercept.Pass, permissions.Ask, false},
		{rule(permissions.Ask), intercept.Allow, permissions.Ask, false},
		{rule(permissions.Ask), intercept.Deny, permissions.Deny, true},
		{rule(permissions.Deny), intercept.Allow, permissions.Deny, false},
		{rule(permissions.Deny), intercept.Pass, permissions.Deny, false},
		// The managed configuration's default mode is managed policy: a
		// hook's allow does not skip its ask; a hook's deny still wins.
		{managed(permissions.Ask), intercept.Allow, permissions.Ask, false},
		{managed(permissions.Ask), intercept.Deny, permissions.Deny, true},
	}
	for _, tc := range tests {
		pre := intercept.PreOutcome{Hook: tc.hook}
		if tc.hook != intercept.Pass {
			pre.HookBy = by
		}
		got := mergeHooks(tc.d, pre)
		fromHook := got.Rule != nil && got.Rule.Pattern == HookRulePattern
		if got.Behavior != tc.want || fromHook != tc.fromHook || (fromHook && got.Rule.Source != by.Source) {
			t.Errorf("rules %s (rule %v), hook %s: got %+v (rule %+v), want %s (by the hook: %v)", tc.d.Behavior, tc.d.Rule != nil, tc.hook, got, got.Rule, tc.want, tc.fromHook)
		}
	}
	// A hook that failed closed denies.
	if got := mergeHooks(mode(permissions.Allow), intercept.PreOutcome{Hook: intercept.Deny, Refused: &intercept.RefusedError{By: "PreToolUse"}}); got.Behavior != permissions.Deny {
		t.Errorf("failed closed: %+v", got)
	}
}

// relayedAsker is a Requester of a relayed call of one client.
type relayedAsker struct{ client *int }

func (relayedAsker) Capabilities() *mcp.ClientCapabilities { return nil }
func (relayedAsker) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}
func (relayedAsker) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, errors.New("no")
}
func (relayedAsker) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errors.New("no")
}
func (r relayedAsker) Client() any { return r.client }
func (relayedAsker) RelayedCall()  {}

// TestElicitHooksRequester: a call's Requester is wrapped only when an
// Elicitation hook applies to its server; the wrapper is comparable,
// belongs to the inner Requester's client, keeps the relayed-call mark and
// unwraps to the inner one.
func TestElicitHooksRequester(t *testing.T) {
	t.Parallel()
	ans := &counted{v: verdict(intercept.Verdict{})}
	e := hookEntry(t, "Elicitation", ans, func(hk *config.Hook) { hk.Match = &config.CheckMatch{Servers: []string{"one"}} })
	h := checkedHost(t, nil, nil, e)
	ctx := context.Background()
	client := new(int)
	inner := relayedAsker{client}
	if r := h.withElicitHooks(ctx, inner, "two", nil); r != conn.Requester(inner) {
		t.Fatalf("wrapped for a server no hook matches: %T", r)
	}
	r := h.withElicitHooks(ctx, inner, "one", nil)
	if _, ok := r.(interface{ RelayedCall() }); !ok {
		t.Fatalf("%T lost the relayed-call mark", r)
	}
	if c, ok := r.(interface{ Client() any }); !ok || c.Client() != any(client) {
		t.Fatalf("%T does not belong to the inner client", r)
	}
	if u, ok := r.(interface{ Unwrap() conn.Requester }); !ok || u.Unwrap() != conn.Requester(inner) {
		t.Fatalf("%T does not unwrap", r)
	}
	_ = r == r // comparable
	res, err := r.Elicit(ctx, &mcp.ElicitParams{Message: "?"})
	if err != nil || res.Action != "decline" || ans.runs.Load() != 1 || ans.last.Server != "one" || ans.last.Front != "library" {
		t.Fatalf("%+v, %v; hook ran %d (%+v)", res, err, ans.runs.Load(), ans.last)
	}
}

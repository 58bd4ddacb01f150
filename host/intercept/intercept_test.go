package intercept

// The engine is tested apart from the kinds of checks (hook scripts,
// plugins, interceptor servers, built-ins), with fake Checkers: what is
// under test here is the order, the merge, the timeouts and the fail-closed
// rules, which no real check can drive through every combination. The
// kinds' packages test themselves against real processes.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
)

// fake is a Checker that returns a fixed verdict (or error) after an
// optional delay, counting its runs.
type fake struct {
	v     Verdict
	err   error
	delay time.Duration
	runs  atomic.Int32
	fn    func(c *Call, p Phase) Verdict // overrides v when set
	seen  atomic.Pointer[Call]
}

func (f *fake) Check(ctx context.Context, c *Call, p Phase) (Verdict, error) {
	f.runs.Add(1)
	cc := *c
	f.seen.Store(&cc)
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		}
	}
	if f.err != nil {
		return Verdict{}, f.err
	}
	if f.fn != nil {
		return f.fn(c, p), nil
	}
	return f.v, nil
}

func hook(event string, ck Checker, opts ...func(*Entry)) *Entry {
	place := hookPlaces[event]
	e := &Entry{Name: event, Kind: KindHook, Hook: event, Events: []string{place.event}, Phases: place.phase,
		Timeout: time.Second, Blocking: true, Checker: ck}
	for _, o := range opts {
		o(e)
	}
	return e
}

func icpt(name string, ck Checker, opts ...func(*Entry)) *Entry {
	e := &Entry{Name: name, Kind: KindPlugin, Events: []string{EventToolsCall}, Phases: Request | Response,
		Timeout: time.Second, Blocking: true, Checker: ck}
	for _, o := range opts {
		o(e)
	}
	return e
}

func audit(e *Entry)    { e.Mode = Audit }
func failOpen(e *Entry) { e.FailOpen = true }
func dedup(k string) func(*Entry) {
	return func(e *Entry) { e.DedupKey = k }
}
func events(ev ...string) func(*Entry) { return func(e *Entry) { e.Events = ev } }
func phases(p Phase) func(*Entry)      { return func(e *Entry) { e.Phases = p } }

func toolCall() *Call {
	return &Call{Event: EventToolsCall, Server: "demo", Name: "mcp__demo__echo", Original: "echo", ID: "mcphost_1",
		Payload: json.RawMessage(`{"message":"hi"}`), Args: json.RawMessage(`{"message":"hi"}`)}
}

func decisions(recs []Record) string {
	var ds []string
	for _, r := range recs {
		ds = append(ds, r.Name+"="+r.Decision)
	}
	return strings.Join(ds, ",")
}

func TestForTool(t *testing.T) {
	alice := &inbound.Principal{Subject: "alice", Groups: []string{"eng"}}
	bob := &inbound.Principal{Subject: "bob"}
	onlyGithub := hook(HookPreToolUse, &fake{}, func(e *Entry) {
		e.Match.Matcher = func(n string) bool { return strings.HasPrefix(n, "mcp__github__") }
	})
	servers := icpt("servers", &fake{}, func(e *Entry) { e.Match.Servers = []string{"demo"} })
	tools := icpt("tools", &fake{}, func(e *Entry) { e.Match.Tools = []string{"mcp__demo__ec*"} })
	eng := icpt("eng", &fake{}, func(e *Entry) { e.Match.Principals = &permissions.Principals{Groups: []string{"eng"}} })
	prompts := icpt("prompts", &fake{}, events(EventPromptsGet))
	elicit := hook(HookElicitation, &fake{}, func(e *Entry) { e.Match.Matcher = func(n string) bool { return n == "demo" } })
	c := NewChain([]*Entry{onlyGithub, servers, tools, eng, prompts, elicit})

	names := func(p *Plan) string {
		var ns []string
		for _, e := range p.Entries() {
			ns = append(ns, e.Name)
		}
		return strings.Join(ns, ",")
	}
	tests := []struct {
		name         string
		plan         *Plan
		want         string
		blocking     bool
		request, rsp bool
	}{
		{"unmatched", c.ForTool("mcp__other__x", "other", nil), "", false, false, false},
		{"matcher", c.ForTool("mcp__github__issue", "github", nil), "PreToolUse", true, true, false},
		{"server and tool", c.ForTool("mcp__demo__echo", "demo", nil), "servers,tools", true, true, true},
		{"server only", c.ForTool("mcp__demo__stats", "demo", nil), "servers", true, true, true},
		{"principal", c.ForTool("mcp__demo__echo", "demo", alice), "servers,tools,eng", true, true, true},
		{"other principal", c.ForTool("mcp__demo__echo", "demo", bob), "servers,tools", true, true, true},
		{"principal only", c.ForTool("mcp__x__y", "x", alice), "eng", true, true, true},
		{"principal only, nobody", c.ForTool("mcp__x__y", "x", nil), "", false, false, false},
		{"prompts", c.ForEvent(EventPromptsGet, "x", "p", nil), "prompts", true, true, true},
		{"elicit", c.ForElicit("demo", nil), "Elicitation", true, true, false},
		{"elicit other", c.ForElicit("other", nil), "", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(tt.plan); got != tt.want {
				t.Errorf("plan = %q, want %q", got, tt.want)
			}
			if (tt.want == "") != (tt.plan == nil) {
				t.Errorf("plan nil = %v, want nil only when nothing matches", tt.plan == nil)
			}
			if tt.plan.Blocking() != tt.blocking || tt.plan.HasRequest() != tt.request || tt.plan.HasResponse() != tt.rsp {
				t.Errorf("Blocking, HasRequest, HasResponse = %v %v %v, want %v %v %v",
					tt.plan.Blocking(), tt.plan.HasRequest(), tt.plan.HasResponse(), tt.blocking, tt.request, tt.rsp)
			}
		})
	}
	// Cached: the same plan without principals is the same pointer.
	c2 := NewChain([]*Entry{servers, tools})
	if p1, p2 := c2.ForTool("mcp__demo__stats", "demo", nil), c2.ForTool("mcp__demo__stats", "demo", nil); p1 == nil || p1 != p2 {
		t.Error("the plan of one tool is built twice")
	}
	// A name cached for one server, asked for another, is not taken from
	// the cache.
	if got := names(c2.ForTool("mcp__demo__stats", "other", nil)); got != "" {
		t.Errorf("plan for another server = %q, want none", got)
	}
	var nilChain *Chain
	if nilChain.ForTool("mcp__demo__echo", "demo", nil) != nil || nilChain.ForElicit("demo", nil) != nil {
		t.Error("a nil chain has a plan")
	}
	if NewChain(nil) != nil {
		t.Error("NewChain(nil) != nil")
	}
}

func TestPlanCacheBounded(t *testing.T) {
	c := NewChain([]*Entry{icpt("r", &fake{}, events(EventResourcesRead))})
	for i := range maxCached + 10 {
		if c.ForEvent(EventResourcesRead, "s", "file:///"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+json.Number(rune(i)).String(), nil) == nil {
			t.Fatal("no plan")
		}
	}
	if n := len(*c.other.Load()); n > maxCached {
		t.Errorf("cache holds %d keys, more than %d", n, maxCached)
	}
}

func TestPre(t *testing.T) {
	allowIn := json.RawMessage(`{"message":"allowed"}`)
	allowIn2 := json.RawMessage(`{"message":"allowed2"}`)
	askIn := json.RawMessage(`{"message":"asked"}`)
	tests := []struct {
		name      string
		hooks     []*Entry
		want      Action
		by        string // HookBy's Source
		reason    string
		args      string
		refused   bool
		context   []string
		decisions string
	}{
		{name: "none", hooks: nil, want: Pass},
		{name: "pass", hooks: []*Entry{hook(HookPreToolUse, &fake{})}, want: Pass, decisions: "PreToolUse=pass"},
		{name: "allow", hooks: []*Entry{hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Payload: allowIn}})},
			want: Allow, args: string(allowIn), decisions: "PreToolUse=allow"},
		{name: "deny beats allow", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Deny, Reason: "no"}}, func(e *Entry) { e.Source = "d" }),
		}, want: Deny, by: "d", reason: "no", refused: true, decisions: "PreToolUse=allow,PreToolUse=deny"},
		{name: "deny beats ask", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Deny, Reason: "first"}}, func(e *Entry) { e.Source = "d1" }),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Ask}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Deny, Reason: "second"}}),
		}, want: Deny, by: "d1", reason: "first", refused: true},
		{name: "ask beats allow", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Payload: allowIn}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Ask, Reason: "check", Payload: askIn}}, func(e *Entry) { e.Source = "a" }),
		}, want: Ask, by: "a", reason: "check", args: string(askIn)},
		{name: "pass (defer) does not beat allow", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Pass}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow}}),
		}, want: Allow},
		{name: "later declared updatedInput wins", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Payload: allowIn}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Payload: allowIn2}}),
		}, want: Allow, args: string(allowIn2)},
		{name: "updatedInput without a decision", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Mutate, Payload: allowIn}}),
		}, want: Pass, args: string(allowIn)},
		{name: "deny drops updatedInput", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Payload: allowIn}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Deny}}),
		}, want: Deny, refused: true},
		{name: "audit deny changes nothing", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Action: Deny, Reason: "no", Context: "c"}}, audit),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Payload: allowIn}}, audit),
		}, want: Pass, decisions: "PreToolUse=would_deny,PreToolUse=would_mutate"},
		{name: "error fails closed", hooks: []*Entry{
			hook(HookPreToolUse, &fake{err: errors.New("spawn")}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow}}),
		}, want: Deny, reason: "the check failed (fail closed)", refused: true, decisions: "PreToolUse=error,PreToolUse=allow"},
		{name: "error fail_open passes", hooks: []*Entry{
			hook(HookPreToolUse, &fake{err: errors.New("spawn")}, failOpen),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow}}),
		}, want: Allow, decisions: "PreToolUse=error,PreToolUse=allow"},
		{name: "error in audit passes", hooks: []*Entry{
			hook(HookPreToolUse, &fake{err: errors.New("spawn")}, audit),
		}, want: Pass, decisions: "PreToolUse=error"},
		{name: "contexts in declared order", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Context: "one"}}),
			hook(HookPreToolUse, &fake{v: Verdict{Action: Allow, Context: "two"}}),
		}, want: Allow, context: []string{"one", "two"}},
		{name: "contexts capped", hooks: []*Entry{
			hook(HookPreToolUse, &fake{v: Verdict{Context: strings.Repeat("é", 9000)}}),
			hook(HookPreToolUse, &fake{v: Verdict{Context: strings.Repeat("b", 5000)}}),
			hook(HookPreToolUse, &fake{v: Verdict{Context: "dropped"}}),
		}, want: Pass, context: []string{strings.Repeat("é", 9000), strings.Repeat("b", 1000)}},
		{name: "post hooks do not run", hooks: []*Entry{
			hook(HookPostToolUse, &fake{v: Verdict{Action: Deny}}),
		}, want: Pass},
		{name: "interceptors do not run", hooks: []*Entry{
			icpt("i", &fake{v: Verdict{Action: Deny}}),
		}, want: Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewChain(tt.hooks).ForTool("mcp__demo__echo", "demo", nil)
			out := p.Pre(t.Context(), toolCall())
			if out.Hook != tt.want {
				t.Errorf("Hook = %v, want %v", out.Hook, tt.want)
			}
			if tt.by != "" && (out.HookBy == nil || out.HookBy.Source != tt.by) {
				t.Errorf("HookBy = %+v, want source %q", out.HookBy, tt.by)
			}
			if tt.reason != "" && out.Reason != tt.reason {
				t.Errorf("Reason = %q, want %q", out.Reason, tt.reason)
			}
			if string(out.Args) != tt.args {
				t.Errorf("Args = %s, want %s", out.Args, tt.args)
			}
			if (out.Refused != nil) != tt.refused {
				t.Errorf("Refused = %v, want set %v", out.Refused, tt.refused)
			}
			if out.Refused != nil && (!errors.Is(out.Refused, ErrRefused) || out.Refused.Reason != out.Reason || out.Refused.Kind != KindHook) {
				t.Errorf("Refused = %+v", out.Refused)
			}
			if strings.Join(out.Context, "|") != strings.Join(tt.context, "|") {
				t.Errorf("Context = %.40q, want %.40q", out.Context, tt.context)
			}
			if tt.decisions != "" && decisions(out.Records) != tt.decisions {
				t.Errorf("records = %s, want %s", decisions(out.Records), tt.decisions)
			}
		})
	}
}

func TestPreDedup(t *testing.T) {
	f1, f2, f3 := &fake{v: Verdict{Action: Allow}}, &fake{v: Verdict{Action: Deny}}, &fake{}
	p := NewChain([]*Entry{
		hook(HookPreToolUse, f1, dedup("cmd a")),
		hook(HookPreToolUse, f2, dedup("cmd a")),
		hook(HookPreToolUse, f3, dedup("cmd b")),
	}).ForTool("mcp__demo__echo", "demo", nil)
	out := p.Pre(t.Context(), toolCall())
	if f1.runs.Load() != 1 || f2.runs.Load() != 0 || f3.runs.Load() != 1 {
		t.Errorf("runs = %d %d %d, want 1 0 1", f1.runs.Load(), f2.runs.Load(), f3.runs.Load())
	}
	if out.Hook != Allow || len(out.Records) != 2 {
		t.Errorf("outcome = %v with %d records", out.Hook, len(out.Records))
	}
}

// TestParallelAndTimeouts uses the synctest clock: hooks of one phase run
// in parallel, and a check past its timeout fails closed.
func TestParallelAndTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow1, slow2 := &fake{delay: 200 * time.Millisecond, v: Verdict{Action: Allow}}, &fake{delay: 200 * time.Millisecond}
		p := NewChain([]*Entry{hook(HookPreToolUse, slow1), hook(HookPreToolUse, slow2)}).ForTool("mcp__demo__echo", "demo", nil)
		start := time.Now()
		out := p.Pre(t.Context(), toolCall())
		if d := time.Since(start); d != 200*time.Millisecond {
			t.Errorf("two 200 ms hooks took %v: not in parallel", d)
		}
		if out.Hook != Allow {
			t.Errorf("Hook = %v", out.Hook)
		}
	})
	tests := []struct {
		name      string
		entry     *Entry
		refused   bool
		decisions string
	}{
		{"hook timeout", hook(HookPreToolUse, &fake{delay: time.Hour, v: Verdict{Action: Allow}}), true, "PreToolUse=timeout"},
		{"hook timeout fail_open", hook(HookPreToolUse, &fake{delay: time.Hour}, failOpen), false, "PreToolUse=timeout"},
		{"interceptor timeout", icpt("slow", &fake{delay: time.Hour}), true, "slow=timeout"},
		{"interceptor timeout fail_open", icpt("slow", &fake{delay: time.Hour}, failOpen), false, "slow=timeout"},
		{"interceptor timeout audit", icpt("slow", &fake{delay: time.Hour}, audit), false, "slow=timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.entry.Timeout = 5 * time.Second
				p := NewChain([]*Entry{tt.entry}).ForTool("mcp__demo__echo", "demo", nil)
				start := time.Now()
				var recs []Record
				var refused bool
				if tt.entry.Kind == KindHook {
					out := p.Pre(t.Context(), toolCall())
					recs, refused = out.Records, out.Refused != nil
					if refused && out.Refused.Reason != "the check timed out (fail closed)" {
						t.Errorf("reason = %q", out.Refused.Reason)
					}
				} else {
					_, r, err := p.Request(t.Context(), toolCall())
					recs, refused = r, err != nil
					var re *RefusedError
					if err != nil && !errors.As(err, &re) {
						t.Errorf("err = %v, want a *RefusedError", err)
					}
				}
				if d := time.Since(start); d != 5*time.Second {
					t.Errorf("took %v, want the 5 s timeout", d)
				}
				if refused != tt.refused {
					t.Errorf("refused = %v, want %v", refused, tt.refused)
				}
				if decisions(recs) != tt.decisions {
					t.Errorf("records = %s, want %s", decisions(recs), tt.decisions)
				}
			})
		})
	}
}

func TestRequest(t *testing.T) {
	upper := &fake{fn: func(c *Call, p Phase) Verdict {
		return Verdict{Action: Mutate, Payload: json.RawMessage(strings.ToUpper(string(c.Payload)))}
	}}
	wrap := &fake{fn: func(c *Call, p Phase) Verdict {
		return Verdict{Action: Mutate, Payload: json.RawMessage(`{"w":` + string(c.Payload) + `}`)}
	}}
	deny := &fake{v: Verdict{Action: Deny, Reason: "bad", Code: -32602}}
	tests := []struct {
		name      string
		entries   []*Entry
		want      string
		err       *RefusedError
		decisions string
	}{
		{name: "nothing", entries: []*Entry{hook(HookPreToolUse, &fake{v: Verdict{Action: Deny}})}, want: `{"message":"hi"}`},
		{name: "pass", entries: []*Entry{icpt("a", &fake{})}, want: `{"message":"hi"}`, decisions: "a=pass"},
		{name: "mutations in order", entries: []*Entry{icpt("u", upper), icpt("w", wrap)},
			want: `{"w":{"MESSAGE":"HI"}}`, decisions: "u=mutate,w=mutate"},
		{name: "declared order the other way", entries: []*Entry{icpt("w", wrap), icpt("u", upper)},
			want: `{"W":{"MESSAGE":"HI"}}`},
		{name: "deny stops", entries: []*Entry{icpt("u", upper), icpt("d", deny), icpt("w", wrap)},
			err: &RefusedError{By: "d", Kind: KindPlugin, Reason: "bad", Code: -32602}, decisions: "u=mutate,d=deny"},
		{name: "audit on a copy", entries: []*Entry{icpt("u", upper, audit), icpt("d", deny, audit), icpt("w", wrap)},
			want: `{"w":{"message":"hi"}}`, decisions: "u=would_mutate,d=would_deny,w=mutate"},
		{name: "error fails closed", entries: []*Entry{icpt("e", &fake{err: errors.New("crash")}), icpt("w", wrap)},
			err: &RefusedError{By: "e", Kind: KindPlugin, Reason: "the check failed (fail closed)"}, decisions: "e=error"},
		{name: "error fail_open", entries: []*Entry{icpt("e", &fake{err: errors.New("crash")}, failOpen), icpt("w", wrap)},
			want: `{"w":{"message":"hi"}}`, decisions: "e=error,w=mutate"},
		{name: "response only", entries: []*Entry{icpt("d", deny, phases(Response))}, want: `{"message":"hi"}`},
		{name: "allow is pass", entries: []*Entry{icpt("a", &fake{v: Verdict{Action: Allow}})}, want: `{"message":"hi"}`, decisions: "a=pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewChain(tt.entries).ForTool("mcp__demo__echo", "demo", nil)
			got, recs, err := p.Request(t.Context(), toolCall())
			if tt.err != nil {
				var re *RefusedError
				if !errors.As(err, &re) || *re != *tt.err {
					t.Fatalf("err = %#v, want %#v", err, tt.err)
				}
			} else if err != nil || string(got) != tt.want {
				t.Errorf("Request = %s, %v; want %s", got, err, tt.want)
			}
			if tt.decisions != "" && decisions(recs) != tt.decisions {
				t.Errorf("records = %s, want %s", decisions(recs), tt.decisions)
			}
			for _, r := range recs {
				if r.Event != "tools/call/request" || r.Start.IsZero() || r.End.Before(r.Start) {
					t.Errorf("record %+v", r)
				}
			}
		})
	}
}

func TestResponse(t *testing.T) {
	const okResult = `{"content":[{"type":"text","text":"hi"}],"_meta":{"x":1.50}}`
	const errResult = `{"content":[{"type":"text","text":"boom"}],"isError":true}`
	redact := &fake{fn: func(c *Call, p Phase) Verdict {
		return Verdict{Action: Mutate, Payload: json.RawMessage(strings.ReplaceAll(string(c.Payload), "hi", "[REDACTED]"))}
	}}
	tests := []struct {
		name      string
		entries   []*Entry
		event     string
		payload   string
		callErr   error
		pre       []string
		want      string
		changed   bool
		err       *RefusedError
		decisions string
	}{
		{name: "unchanged", entries: []*Entry{icpt("p", &fake{})}, payload: okResult, want: okResult, decisions: "p=pass"},
		{name: "interceptor mutates", entries: []*Entry{icpt("r", redact)}, payload: okResult,
			want: strings.ReplaceAll(okResult, "hi", "[REDACTED]"), changed: true, decisions: "r=mutate"},
		{name: "interceptor deny on tools/call", entries: []*Entry{icpt("d", &fake{v: Verdict{Action: Deny, Reason: "leak"}}), icpt("r", redact)},
			payload: okResult, want: `{"content":[{"type":"text","text":"leak"}],"isError":true}`, changed: true, decisions: "d=deny"},
		{name: "interceptor deny on prompts/get", event: EventPromptsGet, entries: []*Entry{icpt("d", &fake{v: Verdict{Action: Deny, Reason: "leak"}}, events(EventPromptsGet))},
			payload: `{"messages":[]}`, err: &RefusedError{By: "d", Kind: KindPlugin, Reason: "leak"}},
		{name: "interceptor fails closed", entries: []*Entry{icpt("e", &fake{err: errors.New("x")})},
			payload: okResult, want: `{"content":[{"type":"text","text":"the check failed (fail closed)"}],"isError":true}`, changed: true, decisions: "e=error"},
		{name: "audit mutation not applied", entries: []*Entry{icpt("r", redact, audit)}, payload: okResult, want: okResult, decisions: "r=would_mutate"},
		{name: "PostToolUse block", entries: []*Entry{hook(HookPostToolUse, &fake{v: Verdict{Action: Deny, Reason: "blocked"}}),
			hook(HookPostToolUseFailure, &fake{v: Verdict{Context: "never"}})},
			payload: okResult, want: `{"content":[{"type":"text","text":"blocked"}],"isError":true}`, changed: true, decisions: "PostToolUse=deny"},
		{name: "PostToolUse output string", entries: []*Entry{hook(HookPostToolUse, &fake{v: Verdict{Action: Mutate, Payload: json.RawMessage(`"new"`)}})},
			payload: okResult, want: `{"content":[{"type":"text","text":"new"}]}`, changed: true},
		{name: "PostToolUse output object", entries: []*Entry{hook(HookPostToolUse, &fake{v: Verdict{Action: Mutate, Payload: json.RawMessage(`{"content":[],"structuredContent":{"a":1}}`)}})},
			payload: okResult, want: `{"content":[],"structuredContent":{"a":1}}`, changed: true},
		{name: "PostToolUse output array", entries: []*Entry{hook(HookPostToolUse, &fake{v: Verdict{Action: Mutate, Payload: json.RawMessage(`[{"type":"text","text":"a"}]`)}})},
			payload: okResult, want: `{"content":[{"type":"text","text":"a"}]}`, changed: true},
		{name: "contexts appended", entries: []*Entry{hook(HookPostToolUse, &fake{v: Verdict{Context: "post"}})},
			payload: okResult, pre: []string{"pre"}, changed: true,
			want: `{"_meta":{"x":1.50},"content":[{"type":"text","text":"hi"},{"type":"text","text":"pre"},{"type":"text","text":"post"}]}`},
		{name: "failure hooks on an error result", entries: []*Entry{
			hook(HookPostToolUse, &fake{v: Verdict{Action: Deny, Reason: "never"}}),
			hook(HookPostToolUseFailure, &fake{v: Verdict{Action: Deny, Reason: "saw it", Context: "ctx"}})},
			payload: errResult, changed: true, decisions: "PostToolUseFailure=deny",
			want: `{"content":[{"type":"text","text":"boom"},{"type":"text","text":"ctx"},{"type":"text","text":"saw it"}],"isError":true}`},
		{name: "failure hooks on a failed call", entries: []*Entry{
			icpt("r", redact),
			hook(HookPostToolUseFailure, &fake{v: Verdict{Context: "ctx"}})},
			callErr: errors.New("upstream gone"), decisions: "PostToolUseFailure=pass"},
		{name: "failure hook error does not block", entries: []*Entry{hook(HookPostToolUseFailure, &fake{err: errors.New("x")})},
			payload: errResult, want: errResult, decisions: "PostToolUseFailure=error"},
		{name: "post hook error fails closed", entries: []*Entry{hook(HookPostToolUse, &fake{err: errors.New("x")})},
			payload: okResult, want: `{"content":[{"type":"text","text":"the check failed (fail closed)"}],"isError":true}`, changed: true},
		{name: "interceptor deny then failure hooks", entries: []*Entry{
			icpt("d", &fake{v: Verdict{Action: Deny, Reason: "leak"}}),
			hook(HookPostToolUseFailure, &fake{})},
			payload: okResult, want: `{"content":[{"type":"text","text":"leak"}],"isError":true}`, changed: true, decisions: "d=deny,PostToolUseFailure=pass"},
		{name: "redaction before post hooks", entries: []*Entry{
			hook(HookPostToolUse, &fake{fn: func(c *Call, p Phase) Verdict { return Verdict{Context: string(c.Payload)} }}),
			icpt("r", redact)},
			payload: `{"content":[{"type":"text","text":"hi"}]}`, changed: true,
			want: `{"content":[{"type":"text","text":"[REDACTED]"},{"type":"text","text":"{\"content\":[{\"type\":\"text\",\"text\":\"[REDACTED]\"}]}"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			event := tt.event
			if event == "" {
				event = EventToolsCall
			}
			p := NewChain(tt.entries).ForEvent(event, "demo", "mcp__demo__echo", nil)
			c := toolCall()
			c.Event, c.Err, c.PreContext = event, tt.callErr, tt.pre
			c.Payload = nil
			if tt.payload != "" {
				c.Payload = json.RawMessage(tt.payload)
				c.IsError = resultIsError(c.Payload)
			}
			got, changed, recs, err := p.Response(t.Context(), c)
			if tt.err != nil {
				var re *RefusedError
				if !errors.As(err, &re) || *re != *tt.err {
					t.Fatalf("err = %#v, want %#v", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want || changed != tt.changed {
				t.Errorf("Response = %s, %v, %v;\nwant %s, %v", got, changed, err, tt.want, tt.changed)
			}
			if tt.decisions != "" && decisions(recs) != tt.decisions {
				t.Errorf("records = %s, want %s", decisions(recs), tt.decisions)
			}
		})
	}
}

func TestElicit(t *testing.T) {
	accept := json.RawMessage(`{"action":"accept","content":{"ok":true}}`)
	tests := []struct {
		name          string
		entries       []*Entry
		before, after string // the answers' actions; "" for nil
	}{
		{"none", []*Entry{hook(HookPreToolUse, &fake{v: Verdict{Action: Deny}})}, "", "accept"},
		{"pass", []*Entry{hook(HookElicitation, &fake{}), hook(HookElicitationResult, &fake{})}, "", "accept"},
		{"auto-answer", []*Entry{hook(HookElicitation, &fake{v: Verdict{Action: Mutate, Payload: accept}})}, "accept", "accept"},
		{"deny declines", []*Entry{
			hook(HookElicitation, &fake{v: Verdict{Action: Mutate, Payload: accept}}),
			hook(HookElicitation, &fake{v: Verdict{Action: Deny}}),
			hook(HookElicitationResult, &fake{v: Verdict{Action: Deny}})}, "decline", "decline"},
		{"bad answer declines", []*Entry{hook(HookElicitation, &fake{v: Verdict{Action: Mutate, Payload: json.RawMessage(`{"action":"yes"}`)}})}, "decline", "accept"},
		{"error declines", []*Entry{hook(HookElicitation, &fake{err: errors.New("x")}), hook(HookElicitationResult, &fake{err: errors.New("x")})}, "decline", "decline"},
		{"error fail_open", []*Entry{hook(HookElicitation, &fake{err: errors.New("x")}, failOpen)}, "", "accept"},
		{"audit", []*Entry{hook(HookElicitation, &fake{v: Verdict{Action: Deny}}, audit)}, "", "accept"},
		{"override", []*Entry{hook(HookElicitationResult, &fake{v: Verdict{Action: Mutate, Payload: json.RawMessage(`{"action":"cancel"}`)}})}, "", "cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewChain(tt.entries).ForElicit("demo", nil)
			c := &Call{Event: EventElicit, Server: "demo", Name: "demo", Elicit: &mcp.ElicitParams{Message: "ok?"}}
			before, _, err := p.ElicitBefore(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			if got := actionOf(before); got != tt.before {
				t.Errorf("ElicitBefore = %q, want %q", got, tt.before)
			}
			after, _, err := p.ElicitAfter(t.Context(), c, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": "b"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := actionOf(after); got != tt.after {
				t.Errorf("ElicitAfter = %q, want %q", got, tt.after)
			}
		})
	}
}

func actionOf(r *mcp.ElicitResult) string {
	if r == nil {
		return ""
	}
	return r.Action
}

func TestHookEntry(t *testing.T) {
	origin := config.Origin{Scope: config.ScopeUser, File: "/x/config.hcl", Range: hcl.Range{Start: hcl.Pos{Line: 12}}}
	tests := []struct {
		name    string
		h       config.Hook
		events  string
		phases  Phase
		timeout time.Duration
		mode    Mode
		err     bool
	}{
		{name: "pre", h: config.Hook{Event: "PreToolUse", Command: "x"}, events: EventToolsCall, phases: Request, timeout: DefaultHookTimeout},
		{name: "post", h: config.Hook{Event: "PostToolUse", Command: "x", Timeout: time.Second, Mode: "audit"}, events: EventToolsCall, phases: Response, timeout: time.Second, mode: Audit},
		{name: "failure", h: config.Hook{Event: "PostToolUseFailure", URL: "http://x"}, events: EventToolsCall, phases: Response, timeout: DefaultHookTimeout},
		{name: "elicitation", h: config.Hook{Event: "Elicitation", Command: "x"}, events: EventElicit, phases: Request, timeout: DefaultHookTimeout},
		{name: "elicitation result", h: config.Hook{Event: "ElicitationResult", Command: "x"}, events: EventElicit, phases: Response, timeout: DefaultHookTimeout},
		{name: "unknown event", h: config.Hook{Event: "SessionStart", Command: "x"}, err: true},
		{name: "bad mode", h: config.Hook{Event: "PreToolUse", Command: "x", Mode: "permissive"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.h.Origin = origin
			tt.h.Match = &config.CheckMatch{Servers: []string{"demo"}, Principals: &permissions.Principals{Groups: []string{"eng"}}}
			e, err := HookEntry(&tt.h, &fake{})
			if tt.err {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err = %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(e.Events, ",") != tt.events || e.Phases != tt.phases || e.Timeout != tt.timeout || e.Mode != tt.mode {
				t.Errorf("entry %v %v %v %v", e.Events, e.Phases, e.Timeout, e.Mode)
			}
			if e.Source != "user scope, /x/config.hcl:12" || !e.Blocking || e.Kind != KindHook || e.Hook != tt.h.Event || e.DedupKey == "" {
				t.Errorf("entry %+v", e)
			}
			if e.Match.Servers[0] != "demo" || e.Match.Principals.Groups[0] != "eng" {
				t.Errorf("match %+v", e.Match)
			}
		})
	}
	a, _ := HookEntry(&config.Hook{Event: "PreToolUse", Command: "x", Env: map[string]string{"A": "1", "B": "2"}}, &fake{})
	b, _ := HookEntry(&config.Hook{Event: "PreToolUse", Command: "x", Env: map[string]string{"B": "2", "A": "1"}, Matcher: "Bash"}, &fake{})
	c, _ := HookEntry(&config.Hook{Event: "PreToolUse", Command: "x", Env: map[string]string{"A": "2"}}, &fake{})
	d, _ := HookEntry(&config.Hook{Event: "PreToolUse", URL: "x"}, &fake{})
	if a.DedupKey != b.DedupKey || a.DedupKey == c.DedupKey || a.DedupKey == d.DedupKey {
		t.Errorf("dedup keys %q %q %q %q", a.DedupKey, b.DedupKey, c.DedupKey, d.DedupKey)
	}
	if a.Match.Matcher != nil {
		t.Error("an empty matcher is not nil (matches all)")
	}
}

func TestInterceptorEntry(t *testing.T) {
	tests := []struct {
		name   string
		ic     config.Interceptor
		kind   Kind
		phases Phase
		events string
		err    bool
	}{
		{name: "plugin defaults", ic: config.Interceptor{Name: "g", Plugin: "guard-regex"}, kind: KindPlugin, phases: Request | Response, events: EventToolsCall},
		{name: "validate_input", ic: config.Interceptor{Name: "v", Builtin: "validate_input"}, kind: KindBuiltin, phases: Request, events: EventToolsCall},
		{name: "validate_output", ic: config.Interceptor{Name: "v", Builtin: "validate_output"}, kind: KindBuiltin, phases: Response, events: EventToolsCall},
		{name: "phases given", ic: config.Interceptor{Name: "s", Server: "x", Phases: []string{"response"}, Events: []string{"prompts/get", "tools/list"}}, kind: KindServer, phases: Response, events: "prompts/get,tools/list"},
		{name: "list request only", ic: config.Interceptor{Name: "s", Server: "x", Phases: []string{"request"}, Events: []string{"tools/list", "prompts/list"}}, kind: KindServer, err: true},
		{name: "list and call request", ic: config.Interceptor{Name: "s", Server: "x", Phases: []string{"request"}, Events: []string{"tools/list", "tools/call"}}, kind: KindServer, phases: Request, events: "tools/list,tools/call"},
		{name: "bad phase", ic: config.Interceptor{Name: "s", Server: "x", Phases: []string{"both"}}, kind: KindServer, err: true},
		{name: "elicitation event", ic: config.Interceptor{Name: "s", Server: "x", Events: []string{EventElicit}}, kind: KindServer, err: true},
		{name: "bad mode", ic: config.Interceptor{Name: "s", Server: "x", Mode: "permissive"}, kind: KindServer, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := InterceptorEntry(&tt.ic, tt.kind, &fake{})
			if tt.err {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err = %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Phases != tt.phases || strings.Join(e.Events, ",") != tt.events || e.Timeout != DefaultInterceptorTimeout ||
				e.Blocking != (tt.kind != KindBuiltin) || e.DedupKey != "" || e.Name != tt.ic.Name || e.Source != "dynamic scope" {
				t.Errorf("entry %+v", e)
			}
		})
	}
}

type panicker struct{}

func (panicker) Check(context.Context, *Call, Phase) (Verdict, error) { panic("bug") }

// TestConcurrentPlans asks for plans of many names from many goroutines
// (run with -race): the copy-on-write cache stays consistent.
func TestConcurrentPlans(t *testing.T) {
	c := NewChain([]*Entry{
		icpt("even", &fake{}, func(e *Entry) {
			e.Match.Tools = []string{"mcp__s__*0", "mcp__s__*2", "mcp__s__*4", "mcp__s__*6", "mcp__s__*8"}
		}),
		icpt("p", &fake{}, events(EventPromptsGet)),
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				n := (i*7 + g) % 100
				name := "mcp__s__t" + strconv.Itoa(n)
				if got := c.ForTool(name, "s", nil) != nil; got != (n%2 == 0) {
					t.Errorf("%s: plan %v", name, got)
				}
				if c.ForEvent(EventPromptsGet, "s", name, nil) == nil {
					t.Errorf("%s: no prompts plan", name)
				}
			}
		})
	}
	wg.Wait()
	if n := len(*c.tools.Load()); n != 100 {
		t.Errorf("%d tools cached, want 100", n)
	}
}

// TestPanicFailsClosed: a check that panics is a failed check.
func TestPanicFailsClosed(t *testing.T) {
	p := NewChain([]*Entry{hook(HookPreToolUse, panicker{}), hook(HookPreToolUse, &fake{}), icpt("i", panicker{}), icpt("o", panicker{}, failOpen)}).
		ForTool("mcp__demo__echo", "demo", nil)
	if out := p.Pre(t.Context(), toolCall()); out.Refused == nil || decisions(out.Records) != "PreToolUse=error,PreToolUse=pass" {
		t.Errorf("Pre = %+v", out)
	}
	if _, recs, err := p.Request(t.Context(), toolCall()); !errors.Is(err, ErrRefused) || decisions(recs) != "i=error" {
		t.Errorf("Request = %v, %s", err, decisions(recs))
	}
	var zero Chain
	if zero.ForTool("mcp__demo__echo", "demo", nil) != nil {
		t.Error("a zero Chain has a plan")
	}
}

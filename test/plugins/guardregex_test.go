//go:build unix

package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	iplugin "github.com/mcphost/mcphost/host/intercept/plugin"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/sdk"
)

// guardOptions deny SQL drops and rm -rf, and mask AWS key ids and the
// word "classified".
const guardOptions = `{"deny_arguments":["(?i)drop\\s+table","rm -rf"],"redact_results":["AKIA[0-9A-Z]{16}","classified"]}`

// guardRuntime locks the real plugins with the real CLI, loads the
// configuration and returns a runtime that starts them, with the pids of
// guard-regex's processes as they start.
func guardRuntime(t testing.TB) (*plugins.Runtime, *config.Config, func() []int) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := lockedConfig(t, dir, "")
	cfg, diags := config.Load(&config.LoadOptions{Files: []string{cfgPath}, LookupEnv: func(k string) (string, bool) {
		if k == "HOME" {
			return dir, true
		}
		return "", false
	}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var mu sync.Mutex
	var pids []int
	rt, err := plugins.New(cfg, &plugins.Options{Logger: hclog.NewNullLogger(), OnStart: func(name string, pid int) {
		if name == "guard-regex" {
			mu.Lock()
			pids = append(pids, pid)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, cfg, func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), pids...)
	}
}

// guardEntry is the entry of `interceptor "guard" { plugin = "guard-regex"
// options = … }` run by rt.
func guardEntry(t testing.TB, rt *plugins.Runtime, options string) *intercept.Entry {
	t.Helper()
	return guardBlock(t, rt, &config.Interceptor{Name: "guard", Plugin: "guard-regex", Options: json.RawMessage(options)})
}

// guardBlock is the entry of the block ic (naming guard-regex) run by rt.
func guardBlock(t testing.TB, rt *plugins.Runtime, ic *config.Interceptor) *intercept.Entry {
	t.Helper()
	e, err := iplugin.New(ic,
		func(ctx context.Context) (sdk.Interceptor, error) { return rt.Interceptor(ctx, "guard-regex") })
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestGuardRegexIsLocked: `mcphost plugins lock` records guard-regex as an
// interceptor with the schema of its options (which the configuration
// checks interceptor blocks against), and `plugins list` says so.
func TestGuardRegexIsLocked(t *testing.T) {
	dir := t.TempDir()
	cfgPath := lockedConfig(t, dir, "")
	l, diags := config.ReadLock(filepath.Join(dir, "lock.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p := l.Find("guard-regex")
	if p == nil || !p.Interceptor || p.Headers || len(p.Transports) > 0 {
		t.Fatalf("lock entry %+v", p)
	}
	c := p.Component("interceptor", "guard-regex")
	if c == nil {
		t.Fatalf("no interceptor component in %+v", p.Components)
	}
	got := map[string]string{}
	for _, a := range c.Attributes {
		got[a.Name] = a.Type
	}
	if len(got) != 2 || got["deny_arguments"] != "list(string)" || got["redact_results"] != "list(string)" {
		t.Errorf("options schema %v", got)
	}
	out, err := mcphost(t, dir, "--config", cfgPath, "plugins", "list")
	if err != nil || !strings.Contains(out, "guard-regex") || !strings.Contains(out, "interceptor") {
		t.Errorf("plugins list: %v\n%s", err, out)
	}
	// Another plugin is not an interceptor.
	if ws := l.Find("transport-ws"); ws == nil || ws.Interceptor {
		t.Errorf("transport-ws entry %+v", ws)
	}
}

// TestGuardRegexDeniesAndRedacts: the real plugin process denies a call
// whose arguments match deny_arguments and masks redact_results' matches
// in a result's text and structured content.
func TestGuardRegexDeniesAndRedacts(t *testing.T) {
	rt, _, _ := guardRuntime(t)
	e := guardEntry(t, rt, guardOptions)
	ctx := context.Background()
	tests := []struct {
		name    string
		phase   intercept.Phase
		payload string
		want    intercept.Verdict
	}{
		{"clean arguments", intercept.Request, `{"sql":"select 1"}`, intercept.Verdict{Action: intercept.Pass}},
		{"a denied argument", intercept.Request, `{"db":"main","sql":"DROP TABLE users"}`, intercept.Verdict{Action: intercept.Deny, Reason: "argument at /sql matches deny_arguments[0]"}},
		{"nested", intercept.Request, `{"cmds":["ls","rm -rf /"]}`, intercept.Verdict{Action: intercept.Deny, Reason: "argument at /cmds/1 matches deny_arguments[1]"}},
		{"a clean result", intercept.Response, `{"content":[{"type":"text","text":"fine"}]}`, intercept.Verdict{Action: intercept.Pass}},
		{"text redacted", intercept.Response, `{"content":[{"type":"text","text":"key AKIACANARY0123456789 is classified"}]}`,
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"text":"key [REDACTED] is [REDACTED]","type":"text"}]}`)}},
		{"structuredContent redacted", intercept.Response, `{"content":[{"type":"text","text":"{}"}],"structuredContent":{"keys":["AKIACANARY0123456789"],"n":2}}`,
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"text":"{}","type":"text"}],"structuredContent":{"keys":["[REDACTED]"],"n":2}}`)}},
	}
	for _, tt := range tests {
		c := &intercept.Call{Event: intercept.EventToolsCall, Server: "demo", Name: "mcp__demo__echo", Original: "echo", Args: json.RawMessage(`{}`), Payload: json.RawMessage(tt.payload)}
		v, err := e.Checker.Check(ctx, c, tt.phase)
		if err != nil || v.Action != tt.want.Action || v.Reason != tt.want.Reason || string(v.Payload) != string(tt.want.Payload) {
			t.Errorf("%s: %+v (%s) %v; want %+v (%s)", tt.name, v, v.Payload, err, tt.want, tt.want.Payload)
		}
	}
}

// TestInterceptorOfOtherPlugins: only a plugin locked as an interceptor
// is dispensed as one.
func TestInterceptorOfOtherPlugins(t *testing.T) {
	rt, _, _ := guardRuntime(t)
	ctx := context.Background()
	if _, err := rt.Interceptor(ctx, "transport-ws"); err == nil || !strings.Contains(err.Error(), "not locked as an interceptor") {
		t.Errorf("transport-ws as an interceptor: %v", err)
	}
	if _, err := rt.Interceptor(ctx, "nope"); !errors.Is(err, plugins.ErrUnknown) {
		t.Errorf("an unknown plugin: %v", err)
	}
}

// echoCall is a call of the demo server's echo tool as the engine sees
// it, payload being what the phase checks.
func echoCall(payload string) *intercept.Call {
	return &intercept.Call{Event: intercept.EventToolsCall, Server: "demo", Name: "mcp__demo__echo", Original: "echo",
		Args: json.RawMessage(`{"message":"x"}`), Payload: json.RawMessage(payload)}
}

// TestGuardRegexThroughTheEngine: through a plan of the engine, the
// plugin's deny refuses the call with its reason, its redaction replaces
// the result, and a block whose options the plugin refuses fails closed
// (or open, with fail_open).
func TestGuardRegexThroughTheEngine(t *testing.T) {
	rt, _, _ := guardRuntime(t)
	ctx := context.Background()
	plan := intercept.NewChain([]*intercept.Entry{guardEntry(t, rt, guardOptions)}).ForTool("mcp__demo__echo", "demo", nil)
	if plan == nil || !plan.Blocking() || !plan.HasRequest() || !plan.HasResponse() {
		t.Fatalf("plan %+v", plan)
	}
	_, recs, err := plan.Request(ctx, echoCall(`{"message":"please DROP TABLE users"}`))
	var re *intercept.RefusedError
	if !errors.As(err, &re) || re.By != "guard" || re.Kind != intercept.KindPlugin || re.Reason != "argument at /message matches deny_arguments[0]" || re.Code != 0 {
		t.Errorf("deny: %v", err)
	}
	if len(recs) != 1 || recs[0].Decision != "deny" || recs[0].Event != "tools/call/request" {
		t.Errorf("deny records %+v", recs)
	}
	args, _, err := plan.Request(ctx, echoCall(`{"message":"hello"}`))
	if err != nil || string(args) != `{"message":"hello"}` {
		t.Errorf("pass: %s %v", args, err)
	}
	res, changed, recs, err := plan.Response(ctx, echoCall(`{"content":[{"type":"text","text":"AKIACANARY0123456789"}],"structuredContent":{"k":"classified"}}`))
	if err != nil || !changed || string(res) != `{"content":[{"text":"[REDACTED]","type":"text"}],"structuredContent":{"k":"[REDACTED]"}}` {
		t.Errorf("redact: %s %v %v", res, changed, err)
	}
	if len(recs) != 1 || recs[0].Decision != "mutate" {
		t.Errorf("redact records %+v", recs)
	}

	bad := `{"redact_results":["(?i)key(?=:)"]}`
	for _, failOpen := range []bool{false, true} {
		e := guardBlock(t, rt, &config.Interceptor{Name: "bad", Plugin: "guard-regex", Options: json.RawMessage(bad), FailOpen: failOpen})
		plan := intercept.NewChain([]*intercept.Entry{e}).ForTool("mcp__demo__echo", "demo", nil)
		res, changed, recs, err := plan.Response(ctx, echoCall(`{"content":[{"type":"text","text":"key: 1"}]}`))
		if len(recs) != 1 || recs[0].Decision != "error" {
			t.Errorf("fail_open=%v: records %+v", failOpen, recs)
		}
		if failOpen {
			if err != nil || changed {
				t.Errorf("fail_open: %s %v %v, want the result unchanged", res, changed, err)
			}
			continue
		}
		if err != nil || !changed || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "fail closed") {
			t.Errorf("fail closed: %s %v %v, want an error result", res, changed, err)
		}
	}
}

// TestGuardRegexConfigured: an interceptor block naming guard-regex is
// checked against the schema the plugin declared in the lock (an unknown
// option, a wrong type are load errors), and its options reach the real
// plugin, which enforces them.
func TestGuardRegexConfigured(t *testing.T) {
	dir := t.TempDir()
	block := `
interceptor "guard" {
  plugin  = "guard-regex"
  options = {
    deny_arguments = ["(?i)drop\\s+table"]
    redact_results = ["AKIA[0-9A-Z]{16}"]
  }
}
`
	cfgPath := lockedConfig(t, dir, block)
	load := func(path string) (*config.Config, string) {
		cfg, diags := config.Load(&config.LoadOptions{Files: []string{path}, LookupEnv: func(k string) (string, bool) {
			if k == "HOME" {
				return dir, true
			}
			return "", false
		}})
		if !diags.HasErrors() {
			return cfg, ""
		}
		return cfg, diags.Error()
	}
	cfg, diags := load(cfgPath)
	if diags != "" || len(cfg.Interceptors) != 1 {
		t.Fatalf("load: %s", diags)
	}
	ic := cfg.Interceptors[0]
	if ic.Plugin != "guard-regex" || string(ic.Options) != `{"deny_arguments":["(?i)drop\\s+table"],"redact_results":["AKIA[0-9A-Z]{16}"]}` {
		t.Errorf("interceptor %+v options %s", ic, ic.Options)
	}
	rt, err := plugins.New(cfg, &plugins.Options{Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	e := guardBlock(t, rt, ic)
	v, err := e.Checker.Check(context.Background(), echoCall(`{"message":"drop table x"}`), intercept.Request)
	if err != nil || v.Action != intercept.Deny || v.Reason != "argument at /message matches deny_arguments[0]" {
		t.Errorf("deny: %+v %v", v, err)
	}

	src, _ := os.ReadFile(cfgPath)
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown option", "redact_results", "redact_result", `does not take "redact_result"`},
		{"wrong type", `redact_results = ["AKIA[0-9A-Z]{16}"]`, `redact_results = "AKIA"`, `"redact_results" of the guard-regex interceptor (plugin guard-regex) must be a list(string), got string`},
	} {
		bad := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".hcl")
		if err := os.WriteFile(bad, []byte(strings.Replace(string(src), tc.from, tc.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := load(bad)
		if !strings.Contains(diags, tc.want) {
			t.Errorf("%s: diagnostics %q, want them to say %q", tc.name, diags, tc.want)
		}
	}
}

// TestGuardRegexBadExpression: an expression RE2 does not take is a
// diagnostic naming it; every check of the block fails (the engine refuses
// the call unless the block fails open).
func TestGuardRegexBadExpression(t *testing.T) {
	rt, _, _ := guardRuntime(t)
	e := guardEntry(t, rt, `{"deny_arguments":["ok","(?<=x)y"]}`)
	for _, p := range []intercept.Phase{intercept.Request, intercept.Response} {
		_, err := e.Checker.Check(context.Background(), &intercept.Call{Event: intercept.EventToolsCall, Payload: json.RawMessage(`{"a":"b"}`)}, p)
		var de *iplugin.DiagnosticsError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "deny_arguments[1]") || !strings.Contains(err.Error(), "Invalid regular expression") {
			t.Errorf("phase %d: err = %v, want a diagnostic naming deny_arguments[1]", p, err)
		}
	}
}

// waitExited waits until the runtime sees that guard-regex's process
// died.
func waitExited(t *testing.T, rt *plugins.Runtime) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, st := range rt.Status() {
			if st.Name == "guard-regex" && !st.Running {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the runtime never saw guard-regex die")
}

// TestGuardRegexKilledMidRun: a killed plugin is restarted by the runtime
// and asked for its scope again; while it cannot be restarted (a second
// early death backs off) its checks fail, which the engine turns into a
// refusal (fail closed); after the backoff it serves again.
func TestGuardRegexKilledMidRun(t *testing.T) {
	rt, _, pids := guardRuntime(t)
	e := guardEntry(t, rt, guardOptions)
	ctx := context.Background()
	deny := &intercept.Call{Event: intercept.EventToolsCall, Payload: json.RawMessage(`{"sql":"drop table t"}`)}
	check := func() (intercept.Verdict, error) { return e.Checker.Check(ctx, deny, intercept.Request) }
	if v, err := check(); err != nil || v.Action != intercept.Deny {
		t.Fatalf("before the kill: %+v %v", v, err)
	}
	first := pids()
	if len(first) != 1 {
		t.Fatalf("pids %v", first)
	}
	// One client per process: its identity is the process's.
	c1, err1 := rt.Interceptor(ctx, "guard-regex")
	c2, err2 := rt.Interceptor(ctx, "guard-regex")
	if err1 != nil || err2 != nil || c1 != c2 {
		t.Fatalf("two clients of one process: %p %v, %p %v", c1, err1, c2, err2)
	}
	syscall.Kill(mustPID(t, first[0]), syscall.SIGKILL)
	waitExited(t, rt)
	// Restarted at once: the check is answered by a new process.
	if v, err := check(); err != nil || v.Action != intercept.Deny {
		t.Fatalf("after a restart: %+v %v", v, err)
	}
	second := pids()
	if len(second) != 2 || second[1] == first[0] {
		t.Fatalf("pids after a restart %v", second)
	}
	if c3, err := rt.Interceptor(ctx, "guard-regex"); err != nil || c3 == c1 {
		t.Errorf("the restarted process's client is the dead one's: %v", err)
	}

	// It dies again soon: the runtime backs off, and the checks in that
	// outage fail instead of passing.
	syscall.Kill(mustPID(t, second[1]), syscall.SIGKILL)
	waitExited(t, rt)
	_, err := check()
	if err == nil || !strings.Contains(err.Error(), "restarting in") {
		t.Fatalf("a check during the outage: %v, want an error", err)
	}
	// Through the engine: refused (fail closed), or let through with
	// fail_open; both recorded as an error.
	for _, failOpen := range []bool{false, true} {
		e := guardBlock(t, rt, &config.Interceptor{Name: "guard", Plugin: "guard-regex", Options: json.RawMessage(guardOptions), FailOpen: failOpen})
		plan := intercept.NewChain([]*intercept.Entry{e}).ForTool("mcp__demo__echo", "demo", nil)
		args, recs, err := plan.Request(ctx, echoCall(`{"message":"hello"}`))
		if len(recs) != 1 || recs[0].Decision != "error" {
			t.Errorf("fail_open=%v: records %+v", failOpen, recs)
		}
		var re *intercept.RefusedError
		switch {
		case failOpen && (err != nil || string(args) != `{"message":"hello"}`):
			t.Errorf("fail_open during the outage: %s %v, want the call to go on", args, err)
		case !failOpen && (!errors.As(err, &re) || !strings.Contains(re.Reason, "fail closed")):
			t.Errorf("during the outage: %v, want a refusal (fail closed)", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := check()
		if err == nil {
			if v.Action != intercept.Deny {
				t.Errorf("after the backoff: %+v", v)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never recovered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(pids()); n != 3 {
		t.Errorf("%d starts, want 3", n)
	}
}

// BenchmarkGuardRegexRPC is the host → plugin round trip of one check
// through the runtime, the real guard-regex process and back, per phase
// (options that match nothing: the plugin does its work and passes).
func BenchmarkGuardRegexRPC(b *testing.B) {
	rt, _, _ := guardRuntime(b)
	e := guardEntry(b, rt, guardOptions)
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		phase   intercept.Phase
		payload string
	}{
		{"request", intercept.Request, `{"message":"hello world","n":3}`},
		{"response", intercept.Response, `{"content":[{"type":"text","text":"hello world"}],"structuredContent":{"message":"hello world"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := &intercept.Call{Event: intercept.EventToolsCall, Server: "demo", Name: "mcp__demo__echo", Args: json.RawMessage(`{"message":"hello world"}`), Payload: json.RawMessage(bc.payload)}
			if v, err := e.Checker.Check(ctx, c, bc.phase); err != nil || v.Action != intercept.Pass {
				b.Fatalf("%+v %v", v, err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Checker.Check(ctx, c, bc.phase); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

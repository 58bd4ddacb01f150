package sep_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/intercept/sep"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// serverBin is the real interceptor server (internal/testing/interceptorserver),
// built once by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcphost-sep-test")
	if err != nil {
		panic(err)
	}
	os.Setenv(config.EnvManagedConfig, filepath.Join(dir, "none.hcl"))
	os.Setenv(config.EnvConfigDir, filepath.Join(dir, "config"))
	serverBin, err = testbin.BuildOne(dir, "./internal/testing/interceptorserver")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a host with the interceptor server "ic" (run with args, and
// -log into a file of the test's) and the entry of an interceptor block
// naming it.
type fixture struct {
	h     *host.Host
	entry *intercept.Entry
	log   string
}

func newFixture(t *testing.T, ic config.Interceptor, args ...string) *fixture {
	t.Helper()
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	srv := &config.Server{Name: "ic", Transport: config.TransportStdio, Command: serverBin,
		Args: append([]string{"-log", log}, args...), Approved: true, ConnectTimeout: 20 * time.Second, InterceptorOnly: true}
	h, err := host.New(&config.Config{Servers: []*config.Server{srv}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if ic.Name == "" {
		ic.Name = "sep"
	}
	ic.Server = "ic"
	do, gen := h.SEPDo()
	e, err := sep.New(&ic, do, gen)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != intercept.KindServer {
		t.Errorf("entry kind %q", e.Kind)
	}
	return &fixture{h: h, entry: e, log: log}
}

func (f *fixture) check(t *testing.T, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.entry.Checker.Check(ctx, c, p)
}

// requests are the server's logged requests.
type request struct {
	Method string `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Event     string          `json:"event"`
		Phase     string          `json:"phase"`
		Payload   json.RawMessage `json:"payload"`
		TimeoutMs int64           `json:"timeoutMs"`
		Config    json.RawMessage `json:"config"`
		Context   json.RawMessage `json:"context"`
	} `json:"params"`
}

func (f *fixture) requests(t *testing.T) []request {
	t.Helper()
	file, err := os.Open(f.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []request
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var r request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		out = append(out, r)
	}
	return out
}

func (f *fixture) invoked(t *testing.T) []string {
	var names []string
	for _, r := range f.requests(t) {
		if r.Method == sep.MethodInvoke {
			names = append(names, r.Params.Name+"/"+r.Params.Phase)
		}
	}
	return names
}

func toolCall(args string) *intercept.Call {
	return &intercept.Call{Event: intercept.EventToolsCall, Server: "demo", Name: "mcp__demo__echo", Original: "echo",
		Args: json.RawMessage(args), Payload: json.RawMessage(args)}
}

func toolResult(args, result string) *intercept.Call {
	c := toolCall(args)
	c.Payload = json.RawMessage(result)
	return c
}

func canon(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestServerInterceptors runs the real interceptor server's interceptors
// through an interceptor block: decisions, mutations, ordering, audit,
// failures and timeouts.
func TestServerInterceptors(t *testing.T) {
	t.Parallel()
	const hello = `{"note":"hello"}`
	const result = `{"content":[{"type":"text","text":"hello"}],"structuredContent":{"note":"hello"}}`
	type want struct {
		action  intercept.Action
		reason  string // Deny
		payload string // Mutate (canonical)
		err     func(error) bool
		invoked []string // in order; nil: not checked
	}
	isSEPError := func(err error) bool { var e *sep.Error; return errors.As(err, &e) }
	for _, tc := range []struct {
		name  string
		ic    config.Interceptor
		args  []string
		call  *intercept.Call
		phase intercept.Phase
		want  want
	}{
		{name: "allow", args: []string{"-i", "conf/allow-all=allow-all"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass, invoked: []string{"conf/allow-all/request"}}},
		{name: "deny with message", args: []string{"-i", "conf/deny-all=deny-all"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Deny, reason: "conf/deny-all: denied by policy"}},
		{name: "deny on the response", args: []string{"-i", "conf/deny-all=deny-all"}, call: toolResult(hello, result), phase: intercept.Response,
			want: want{action: intercept.Deny, reason: "conf/deny-all: denied by policy", invoked: []string{"conf/deny-all/response"}}},
		{name: "warn never blocks", args: []string{"-i", "conf/warn=warn"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass}},
		{name: "mutation applied", args: []string{"-i", "conf/upper=uppercase-note"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Mutate, payload: `{"note":"HELLO"}`}},
		{name: "mutation of a result", args: []string{"-i", "conf/upper=uppercase-note"}, call: toolResult(hello, result), phase: intercept.Response,
			want: want{action: intercept.Mutate, payload: `{"content":[{"text":"hello","type":"text"}],"structuredContent":{"note":"HELLO"}}`}},
		{name: "mutator without a change", args: []string{"-i", "conf/upper=uppercase-note"}, call: toolCall(`{"other":1}`), phase: intercept.Request,
			want: want{action: intercept.Pass}},
		{name: "audit-mode mutation not applied", args: []string{"-i", "conf/upper=uppercase-note,mode=audit"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass, invoked: []string{"conf/upper/request"}}},
		{name: "audit-mode validator never blocks", args: []string{"-i", "conf/deny-all=deny-all,mode=audit"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass, invoked: []string{"conf/deny-all/request"}}},
		{name: "request: mutate then validate", args: []string{"-i", "conf/require-upper=require-uppercase-note", "-i", "conf/upper=uppercase-note"},
			call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Mutate, payload: `{"note":"HELLO"}`, invoked: []string{"conf/upper/request", "conf/require-upper/request"}}},
		{name: "response: validate then mutate", args: []string{"-i", "conf/require-upper=require-uppercase-note", "-i", "conf/upper=uppercase-note"},
			call: toolResult(hello, result), phase: intercept.Response,
			want: want{action: intercept.Deny, reason: "conf/require-upper: note must be uppercase", invoked: []string{"conf/require-upper/response"}}},
		{name: "mutators by priorityHint, then name",
			args: []string{"-i", "b=uppercase-note,priority=1", "-i", "a=uppercase-note,priority=1", "-i", "z=uppercase-note,priority=-3:9", "-i", "y=uppercase-note,priority=0"},
			call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Mutate, payload: `{"note":"HELLO"}`, invoked: []string{"z/request", "y/request", "a/request", "b/request"}}},
		{name: "mutators by the response's priorityHint",
			args: []string{"-i", "b=uppercase-note,priority=1", "-i", "z=uppercase-note,priority=-3:9"},
			call: toolResult(hello, result), phase: intercept.Response,
			want: want{action: intercept.Mutate, invoked: []string{"b/response", "z/response"}}},
		{name: "crash fails closed", args: []string{"-i", "conf/crash=crash"}, call: toolCall(hello), phase: intercept.Request,
			want: want{err: isSEPError}},
		{name: "crash, server failOpen", args: []string{"-i", "conf/crash=crash,failOpen=true", "-i", "conf/upper=uppercase-note"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Mutate, payload: `{"note":"HELLO"}`}},
		{name: "crash, block fail_open", ic: config.Interceptor{FailOpen: true}, args: []string{"-i", "conf/crash=crash", "-i", "conf/deny-all=deny-all"},
			call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Deny, reason: "conf/deny-all: denied by policy"}},
		{name: "crash of an audit-mode interceptor", args: []string{"-i", "conf/crash=crash,mode=audit"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass}},
		{name: "process exits: fails closed", args: []string{"-i", "conf/exit=exit"}, call: toolCall(hello), phase: intercept.Request,
			want: want{err: isSEPError}},
		{name: "slow: timeout", ic: config.Interceptor{Timeout: 300 * time.Millisecond}, args: []string{"-i", "conf/slow=slow", "-slow", "20s"},
			call: toolCall(hello), phase: intercept.Request,
			want: want{err: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) && isSEPError(err) }}},
		{name: "unknown name: -32602", args: []string{"-i", "conf/ghost=ghost"}, call: toolCall(hello), phase: intercept.Request,
			want: want{err: func(err error) bool {
				var je *jsonrpc.Error
				return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && isSEPError(err)
			}}},
		{name: "names select", ic: config.Interceptor{Names: []string{"conf/allow-all"}}, args: []string{"-i", "conf/deny-all=deny-all", "-i", "conf/allow-all=allow-all"},
			call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass, invoked: []string{"conf/allow-all/request"}}},
		{name: "names an interceptor not listed", ic: config.Interceptor{Names: []string{"conf/nope"}}, args: []string{"-i", "conf/allow-all=allow-all"},
			call: toolCall(hello), phase: intercept.Request,
			want: want{err: func(err error) bool { return errors.Is(err, sep.ErrNotListed) }}},
		{name: "other event: not run", args: []string{"-i", "conf/deny-all=deny-all,events=prompts/get"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass, invoked: []string{}}},
		{name: "other phase: not run", args: []string{"-i", "conf/deny-all=deny-all,phases=response"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Pass, invoked: []string{}}},
		{name: "wildcard event", args: []string{"-i", "conf/deny-all=deny-all,events=*"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Deny, reason: "conf/deny-all: denied by policy"}},
		{name: "older shape: deny", args: []string{"-old-shape", "-i", "conf/deny-all=deny-all"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Deny, reason: "conf/deny-all: denied by policy"}},
		{name: "older shape: mutation", args: []string{"-old-shape", "-i", "conf/upper=uppercase-note"}, call: toolCall(hello), phase: intercept.Request,
			want: want{action: intercept.Mutate, payload: `{"note":"HELLO"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.ic, tc.args...)
			start := time.Now()
			v, err := f.check(t, tc.call, tc.phase)
			if tc.want.err != nil {
				if err == nil || !tc.want.err(err) {
					t.Fatalf("verdict %+v, err %v (%T)", v, err, err)
				}
				if time.Since(start) > 10*time.Second {
					t.Errorf("took %v", time.Since(start))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Action != tc.want.action {
				t.Fatalf("action %v, want %v (%+v)", v.Action, tc.want.action, v)
			}
			if v.Reason != tc.want.reason {
				t.Errorf("reason %q, want %q", v.Reason, tc.want.reason)
			}
			if tc.want.payload != "" && canon(t, v.Payload) != canon(t, []byte(tc.want.payload)) {
				t.Errorf("payload %s, want %s", v.Payload, tc.want.payload)
			}
			if tc.want.invoked != nil {
				if got := f.invoked(t); !slices.Equal(got, tc.want.invoked) && !(len(got) == 0 && len(tc.want.invoked) == 0) {
					t.Errorf("invoked %q, want %q", got, tc.want.invoked)
				}
			}
		})
	}
}

// TestInvokeShape: what the server is sent — the tools/call params as the
// payload (the upstream's own tool name), the block's timeout, the context
// with the principal, session, and a timestamp; the result as the response
// payload.
func TestInvokeShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.Interceptor{Timeout: 7 * time.Second, Options: json.RawMessage(`{"level":"high"}`)}, "-i", "conf/allow-all=allow-all")
	c := toolCall(`{"note":"hi"}`)
	c.Who = &inbound.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng"}}
	c.Session = "s-1234"
	if _, err := f.check(t, c, intercept.Request); err != nil {
		t.Fatal(err)
	}
	c = toolResult(`{"note":"hi"}`, `{"content":[{"type":"text","text":"ok"}]}`)
	if _, err := f.check(t, c, intercept.Response); err != nil {
		t.Fatal(err)
	}
	var inv []request
	for _, r := range f.requests(t) {
		if r.Method == sep.MethodInvoke {
			inv = append(inv, r)
		}
	}
	if len(inv) != 2 {
		t.Fatalf("invokes %+v", inv)
	}
	p := inv[0].Params
	if p.Name != "conf/allow-all" || p.Event != "tools/call" || p.Phase != "request" {
		t.Errorf("params %+v", p)
	}
	if got := canon(t, p.Payload); got != `{"arguments":{"note":"hi"},"name":"echo"}` {
		t.Errorf("payload %s", got)
	}
	if p.TimeoutMs <= 5000 || p.TimeoutMs > 7000 {
		t.Errorf("timeoutMs %d", p.TimeoutMs)
	}
	if got := canon(t, p.Config); got != `{"level":"high"}` {
		t.Errorf("config %s", got)
	}
	var ctx struct {
		Principal struct {
			Type, ID string
			Claims   map[string]any
		}
		SessionID string
		Timestamp string
	}
	if err := json.Unmarshal(p.Context, &ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Principal.Type != "user" || ctx.Principal.ID != "alice" || ctx.Principal.Claims["iss"] != "https://idp" ||
		fmt.Sprint(ctx.Principal.Claims["groups"]) != "[eng]" || ctx.SessionID != "s-1234" {
		t.Errorf("context %s", p.Context)
	}
	if _, err := time.Parse(time.RFC3339Nano, ctx.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", ctx.Timestamp, err)
	}
	p = inv[1].Params
	if p.Phase != "response" || canon(t, p.Payload) != `{"content":[{"text":"ok","type":"text"}]}` {
		t.Errorf("response params %+v", p)
	}
	if !strings.Contains(string(p.Context), `"type":"anonymous"`) {
		t.Errorf("context of the host's own user: %s", p.Context)
	}
}

// TestListedOncePerGeneration: the server's interceptors are listed once
// per session, and again on its next session.
func TestListedOncePerGeneration(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.Interceptor{}, "-i", "conf/allow-all=allow-all")
	lists := func() int {
		n := 0
		for _, r := range f.requests(t) {
			if r.Method == sep.MethodList {
				n++
			}
		}
		return n
	}
	for range 3 {
		if _, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil {
			t.Fatal(err)
		}
	}
	if n := lists(); n != 1 {
		t.Fatalf("listed %d times in one session", n)
	}
	f.h.Connections().Get("ic").Reset()
	if _, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil {
		t.Fatal(err)
	}
	if n := lists(); n != 2 {
		t.Fatalf("listed %d times in two sessions", n)
	}
}

// TestInterceptorServerNotServed: an interceptor server's own tools are
// neither listed nor callable, and it is not an active server; the same
// server as an ordinary one is.
func TestInterceptorServerNotServed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, only := range []bool{false, true} {
		srv := &config.Server{Name: "ic", Transport: config.TransportStdio, Command: serverBin,
			Args: []string{"-tool", "leak", "-i", "conf/allow-all=allow-all"}, Approved: true, ConnectTimeout: 20 * time.Second, InterceptorOnly: only}
		h, err := host.New(&config.Config{Servers: []*config.Server{srv}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		tools, problems := h.Tools(ctx)
		listed := slices.ContainsFunc(tools, func(tl *registry.Tool) bool { return tl.Name == "mcp__ic__leak" })
		_, callErr := h.CallTool(ctx, "mcp__ic__leak", map[string]any{}, nil)
		active := slices.Contains(h.ActiveServers(), "ic")
		if !only {
			if !listed || callErr != nil || !active || len(problems) > 0 {
				t.Fatalf("ordinary server: listed %v, call %v, active %v, problems %v", listed, callErr, active, problems)
			}
			continue
		}
		if listed || active || !h.InterceptorServer("ic") {
			t.Errorf("interceptor server: listed %v, active %v", listed, active)
		}
		if !errors.Is(callErr, registry.ErrNotFound) {
			t.Errorf("calling its tool: %v", callErr)
		}
		if _, err := h.ReadResourceResult(ctx, "ic", nil); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("reading its resource: %v", err)
		}
		// Its interceptors still run.
		do, gen := h.SEPDo()
		e, err := sep.New(&config.Interceptor{Name: "x", Server: "ic"}, do, gen)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Checker.Check(ctx, toolCall(`{}`), intercept.Request); err != nil {
			t.Errorf("check: %v", err)
		}
	}
}

// TestNewRefuses: a block of another SEP-2624 revision, or without a
// server, is refused, not run as something else.
func TestNewRefuses(t *testing.T) {
	do := func(context.Context, string, func(context.Context, *mcp.ClientSession) error) error { return nil }
	gen := func(context.Context, string) uint64 { return 0 }
	for _, tc := range []struct {
		ic      *config.Interceptor
		wantErr bool
		is      error
	}{
		{&config.Interceptor{Name: "x", Server: "s", Protocol: "sep-2624/2025-11"}, true, sep.ErrUnsupported},
		{&config.Interceptor{Name: "x"}, true, nil},
		{&config.Interceptor{Name: "x", Server: "s", Protocol: sep.Revision}, false, nil},
		{&config.Interceptor{Name: "x", Server: "s"}, false, nil},
	} {
		_, err := sep.New(tc.ic, do, gen)
		if (err != nil) != tc.wantErr || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%+v: %v", tc.ic, err)
		}
	}
}

package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

// scripted is an interceptor served over the SDK's real gRPC shims (in
// process: the real guard-regex binary is tested in
// test/plugins/guardregex_test.go); it answers by the call's name and
// counts its RPCs.
type scripted struct {
	scopes, intercepts atomic.Int32
	last               atomic.Pointer[sdk.InterceptRequest]
}

func (s *scripted) Intercept(_ context.Context, r *sdk.InterceptRequest) (*sdk.InterceptResponse, error) {
	s.intercepts.Add(1)
	s.last.Store(r)
	switch r.Name {
	case "deny":
		return &sdk.InterceptResponse{Action: sdk.ActionDeny, Reason: "argument at /q matches deny_arguments[0]"}, nil
	case "mutate":
		return &sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"[REDACTED]"}]}`)}, nil
	case "mutate-bad":
		return &sdk.InterceptResponse{Action: sdk.ActionMutate, Payload: json.RawMessage(`{"content":`)}, nil
	case "mutate-empty":
		return &sdk.InterceptResponse{Action: sdk.ActionMutate}, nil
	case "diag":
		return &sdk.InterceptResponse{Diagnostics: sdk.Diagnostics{sdk.Errorf("deny_arguments", "Invalid regular expression", "missing )")}}, nil
	case "warn":
		return &sdk.InterceptResponse{Action: sdk.ActionPass, Diagnostics: sdk.Diagnostics{{Severity: sdk.SeverityWarning, Summary: "slow"}}}, nil
	case "unknown":
		return &sdk.InterceptResponse{Action: sdk.InterceptAction(9)}, nil
	case "broken":
		return nil, errors.New("exploded with ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2")
	}
	return &sdk.InterceptResponse{Action: sdk.ActionPass}, nil
}

// scoping adds Scope: options {"only":"request"|"response"|"bad"}.
type scoping struct{ scripted }

func (s *scoping) Scope(_ context.Context, config json.RawMessage) (bool, bool, sdk.Diagnostics) {
	s.scopes.Add(1)
	var c struct{ Only string }
	json.Unmarshal(config, &c)
	switch c.Only {
	case "request":
		return true, false, nil
	case "response":
		return false, true, nil
	case "bad":
		return false, false, sdk.Diagnostics{sdk.Errorf("deny_arguments", "Invalid regular expression", "deny_arguments[0]: missing )")}
	}
	return true, true, nil
}

var info = sdk.Info{Name: "guard", Interceptor: &sdk.Component{Name: "guard"}}

func entry(t *testing.T, options string, get Getter) *intercept.Entry {
	t.Helper()
	e, err := New(&config.Interceptor{Name: "g", Plugin: "guard", Options: json.RawMessage(options)}, get)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != intercept.KindPlugin || e.Name != "g" || !e.Blocking {
		t.Errorf("entry %+v", e)
	}
	return e
}

func fixed(ic sdk.Interceptor) Getter {
	return func(context.Context) (sdk.Interceptor, error) { return ic, nil }
}

// TestVerdicts: each answer of the plugin becomes the engine's verdict or
// an error of its type (the engine fails such a check closed).
func TestVerdicts(t *testing.T) {
	t.Parallel()
	impl := &scripted{}
	e := entry(t, `{"deny_arguments":["x"]}`, fixed(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: impl})))
	ctx := context.Background()
	var diagErr *DiagnosticsError
	var protoErr *ProtocolError
	tests := []struct {
		name    string
		want    intercept.Verdict
		errType any
	}{
		{"pass", intercept.Verdict{Action: intercept.Pass}, nil},
		{"warn", intercept.Verdict{Action: intercept.Pass}, nil},
		{"deny", intercept.Verdict{Action: intercept.Deny, Reason: "argument at /q matches deny_arguments[0]"}, nil},
		{"mutate", intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"[REDACTED]"}]}`)}, nil},
		{"mutate-bad", intercept.Verdict{}, &protoErr},
		{"mutate-empty", intercept.Verdict{}, &protoErr},
		{"unknown", intercept.Verdict{}, &protoErr},
		{"diag", intercept.Verdict{}, &diagErr},
		{"broken", intercept.Verdict{}, nil},
	}
	for _, tt := range tests {
		v, err := e.Checker.Check(ctx, &intercept.Call{Event: intercept.EventToolsCall, Name: tt.name, Payload: json.RawMessage(`{}`)}, intercept.Request)
		if diff := cmp.Diff(tt.want, v); diff != "" {
			t.Errorf("%s: verdict (-want +got):\n%s", tt.name, diff)
		}
		switch {
		case tt.name == "broken":
			if err == nil {
				t.Errorf("broken: no error")
			}
		case tt.errType != nil:
			if !errors.As(err, tt.errType) {
				t.Errorf("%s: err = %v (%T), want %T", tt.name, err, err, tt.errType)
			}
		case err != nil:
			t.Errorf("%s: err = %v", tt.name, err)
		}
	}
}

// TestRequestFields: the plugin gets the block's options, the call's
// event, server, name and payload, the request payload with a response,
// and the principal without a token.
func TestRequestFields(t *testing.T) {
	t.Parallel()
	impl := &scripted{}
	e := entry(t, `{"redact_results":["k"]}`, fixed(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: impl})))
	who := &inbound.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp"}}
	c := &intercept.Call{Event: intercept.EventToolsCall, Server: "github", Name: "mcp__github__search", Original: "search", Who: who,
		Args: json.RawMessage(`{"q":"x"}`), Payload: json.RawMessage(`{"q":"x"}`)}
	for _, p := range []intercept.Phase{intercept.Request, intercept.Response} {
		want := &sdk.InterceptRequest{Interceptor: "g", Event: "tools/call", Phase: sdk.PhaseRequest, Payload: c.Payload,
			Config: json.RawMessage(`{"redact_results":["k"]}`), ServerName: "github", Name: "mcp__github__search",
			Principal: &sdk.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"eng"}}}
		if p == intercept.Response {
			c.Payload = json.RawMessage(`{"content":[]}`)
			want.Phase, want.Payload, want.Request = sdk.PhaseResponse, c.Payload, c.Args
		}
		if _, err := e.Checker.Check(context.Background(), c, p); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, impl.last.Load()); diff != "" {
			t.Errorf("phase %d (-want +got):\n%s", p, diff)
		}
	}
	// Without options the plugin gets an empty object.
	e = entry(t, ``, fixed(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: impl})))
	e.Checker.Check(context.Background(), &intercept.Call{Name: "x"}, intercept.Request)
	if got := string(impl.last.Load().Config); got != `{}` {
		t.Errorf("config without options = %q", got)
	}
}

// TestScope: Scope is asked once per plugin process, a phase out of scope
// costs no RPC, a restarted plugin (a new client) is asked again, a
// diagnostic fails every check, and a failed Scope RPC is not kept.
func TestScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	call := &intercept.Call{Event: intercept.EventToolsCall, Name: "pass"}

	impl := &scoping{}
	first := sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: impl})
	var current atomic.Value
	current.Store(first)
	e := entry(t, `{"only":"request"}`, func(context.Context) (sdk.Interceptor, error) { return current.Load().(sdk.InterceptorClient), nil })
	for range 3 {
		for _, p := range []intercept.Phase{intercept.Request, intercept.Response} {
			if v, err := e.Checker.Check(ctx, call, p); err != nil || v.Action != intercept.Pass {
				t.Fatalf("phase %d: %+v %v", p, v, err)
			}
		}
	}
	if s, i := impl.scopes.Load(), impl.intercepts.Load(); s != 1 || i != 3 {
		t.Errorf("scopes %d, intercepts %d; want 1 and 3 (request only)", s, i)
	}
	// A restart: a new client of a new process.
	current.Store(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: impl}))
	e.Checker.Check(ctx, call, intercept.Request)
	if s := impl.scopes.Load(); s != 2 {
		t.Errorf("after a restart: %d scopes, want 2", s)
	}

	// A diagnostic: every check fails, Scope is not asked again.
	bad := &scoping{}
	e = entry(t, `{"only":"bad"}`, fixed(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: bad})))
	for range 2 {
		_, err := e.Checker.Check(ctx, call, intercept.Response)
		var de *DiagnosticsError
		if !errors.As(err, &de) || de.Diagnostics[0].Attribute != "deny_arguments" {
			t.Errorf("bad options: err = %v", err)
		}
	}
	if s, i := bad.scopes.Load(), bad.intercepts.Load(); s != 1 || i != 0 {
		t.Errorf("bad options: scopes %d, intercepts %d; want 1 and 0", s, i)
	}

	// A Scope RPC that fails is an error and is asked again next time.
	again := &scoping{}
	e = entry(t, `{}`, fixed(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: again})))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Checker.Check(cctx, call, intercept.Request); err == nil {
		t.Error("a failed Scope RPC: no error")
	}
	if v, err := e.Checker.Check(ctx, call, intercept.Request); err != nil || v.Action != intercept.Pass {
		t.Errorf("after a failed Scope RPC: %+v %v", v, err)
	}

	// A plugin without Scope gets every phase.
	plain := &scripted{}
	e = entry(t, `{}`, fixed(sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: plain})))
	e.Checker.Check(ctx, call, intercept.Request)
	e.Checker.Check(ctx, call, intercept.Response)
	if i := plain.intercepts.Load(); i != 2 {
		t.Errorf("without Scope: %d intercepts, want 2", i)
	}
}

// TestUnreachable: a plugin that cannot be had (not running, restarting)
// is an error: the engine refuses the call unless the block fails open.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	down := errors.New("plugin guard exited unexpectedly (restarting in 1s)")
	e := entry(t, `{}`, func(context.Context) (sdk.Interceptor, error) { return nil, down })
	if _, err := e.Checker.Check(context.Background(), &intercept.Call{}, intercept.Request); !errors.Is(err, down) {
		t.Errorf("err = %v, want it to wrap %v", err, down)
	}
	e = entry(t, `{}`, fixed(nil))
	if _, err := e.Checker.Check(context.Background(), &intercept.Call{}, intercept.Request); err == nil {
		t.Error("a nil client: no error")
	}
	if _, err := New(&config.Interceptor{Name: "x"}, fixed(nil)); err == nil {
		t.Error("New without a plugin: no error")
	}
}

// lockedBuffer is a log sink that the plugin's gRPC goroutines cannot race on.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFailuresAreLogged: a diagnosis of the options is logged once per
// plugin process, a broken check every time, and both through the
// redactor.
func TestFailuresAreLogged(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Warn})
	ic := sdktest.Interceptor(t, &sdk.ServeOpts{Info: info, Interceptor: &scoping{}})
	e, err := New(&config.Interceptor{Name: "g", Plugin: "guard", Options: json.RawMessage(`{"only":"bad"}`)}, fixed(ic), WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.Checker.Check(context.Background(), &intercept.Call{Name: "pass"}, intercept.Request)
	}
	if n := strings.Count(out.String(), "deny_arguments[0]: missing )"); n != 1 {
		t.Errorf("the diagnosis was logged %d times, want once:\n%s", n, out.String())
	}
	e, _ = New(&config.Interceptor{Name: "g", Plugin: "guard", Options: json.RawMessage(`{}`)}, fixed(ic), WithLogger(log))
	for range 2 {
		e.Checker.Check(context.Background(), &intercept.Call{Name: "broken"}, intercept.Request)
	}
	if n := strings.Count(out.String(), "interceptor check failed"); n != 2 {
		t.Errorf("a broken check was logged %d times, want 2:\n%s", n, out.String())
	}
	if strings.Contains(out.String(), "ghp_CANARY") {
		t.Errorf("a secret reached the log:\n%s", out.String())
	}
}

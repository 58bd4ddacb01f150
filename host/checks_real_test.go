package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/llmtools"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

// Hooks and interceptors configured as a user would, run by the real
// kinds through the host: Claude Code hook scripts (python3, in
// testdata/hooks, written as for Claude Code) and the validate_input
// built-in, against the demo server.

// needPython3 fails the test when python3 is missing: the hook scripts are
// Claude Code's, in Python.
func needPython3(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to run the Claude Code hook scripts of these tests (make test-deps)")
	}
}

// hookBlock is a hook block of the user's file running the script of
// testdata/hooks for the tools matcher selects; its runs are logged to
// the file log ("" for none).
func hookBlock(t *testing.T, event, script, matcher, log string) *config.Hook {
	t.Helper()
	needPython3(t)
	abs, err := filepath.Abs(filepath.Join("testdata", "hooks", script))
	if err != nil {
		t.Fatal(err)
	}
	hk := &config.Hook{Event: event, Matcher: matcher, Command: "python3 " + abs, Timeout: 30 * time.Second,
		Dir: t.TempDir(), Approved: true, Origin: config.Origin{Scope: config.ScopeUser, File: "/test/config.hcl"}}
	if log != "" {
		hk.Env = map[string]string{"HOOK_LOG": log}
	}
	return hk
}

// hookRuns returns the lines of a hook's log.
func hookRuns(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
}

// echoCount returns how often the demo server "one" of h ran echo.
func echoCount(t *testing.T, h *host.Host) int {
	t.Helper()
	res, err := h.CallTool(context.Background(), "mcp__one__stats", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var st map[string]int
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("stats: %s: %v", b, err)
	}
	return st["echo"]
}

// TestHookScriptPreToolUse: a Claude Code PreToolUse hook script decides
// library calls (host.CallTool): deny (the server never sees the call;
// exit 2 too), ask forces the question, allow skips the default mode's
// question but not an ask rule's, updatedInput is what the server gets.
func TestHookScriptPreToolUse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, mode, message string
		askRule             bool
		asked, denied       bool
		reason, echo        string
	}{
		{name: "deny", mode: "allow_all", message: "forbidden", denied: true, reason: "forbidden words are not allowed"},
		{name: "exit 2", mode: "allow_all", message: "rm -rf /", denied: true, reason: "Blocked: rm -rf"},
		{name: "ask", mode: "allow_all", message: "ask me", asked: true, echo: "ask me"},
		{name: "allow skips the default ask", mode: "ask", message: "allow", echo: "allow"},
		{name: "allow keeps an ask rule", mode: "allow_all", message: "allow", askRule: true, asked: true, echo: "allow"},
		{name: "no decision", mode: "ask", message: "plain", asked: true, echo: "plain"},
		{name: "updatedInput", mode: "allow_all", message: "rewrite", echo: "rewritten by the hook"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "hook.log")
			cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: tc.mode,
				Hooks: []*config.Hook{hookBlock(t, "PreToolUse", "pre.py", "mcp__one__echo", log)}}
			cfg.Permissions = []config.PermissionRule{{Pattern: "mcp__one__stats", Behavior: permissions.Allow}}
			if tc.askRule {
				cfg.Permissions = append(cfg.Permissions, config.PermissionRule{Pattern: "mcp__one__echo", Behavior: permissions.Ask})
			}
			var asked atomic.Int32
			h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), Ask: func(context.Context, *registry.Tool, permissions.Decision) (bool, error) {
				asked.Add(1)
				return true, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			res, err := h.CallTool(context.Background(), "mcp__one__echo", map[string]any{"message": tc.message}, nil)
			if (asked.Load() > 0) != tc.asked {
				t.Errorf("asked %d times, want asked %v", asked.Load(), tc.asked)
			}
			if runs := hookRuns(t, log); len(runs) != 1 || runs[0] != "PreToolUse_mcp__one__echo" {
				t.Errorf("hook runs %v", runs)
			}
			if tc.denied {
				var r *intercept.RefusedError
				if !errors.Is(err, host.ErrDenied) || !errors.As(err, &r) || !strings.Contains(err.Error(), tc.reason) {
					t.Fatalf("err %v, want a refusal with %q", err, tc.reason)
				}
				if n := echoCount(t, h); n != 0 {
					t.Fatalf("the server ran echo %d times", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := host.TextOf(res.Content); got != tc.echo {
				t.Fatalf("echo %q, want %q", got, tc.echo)
			}
		})
	}
}

// TestHookScriptPostToolUse: a Claude Code PostToolUse hook script blocks
// or replaces a result (updatedMCPToolOutput), on the library's path
// (CallTool, the go-sdk client) and on the gateway's relay (RelayCall,
// raw bytes); a result it leaves alone is the server's.
func TestHookScriptPostToolUse(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all",
		Hooks: []*config.Hook{hookBlock(t, "PostToolUse", "post.py", "mcp__one__echo", "")}}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, tc := range []struct {
		message, want string
		isError       bool
	}{
		{"please block me", "the output was blocked by a hook", true},
		{"shout this", "SHOUT THIS", false},
		{"quiet", "quiet", false},
	} {
		res, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": tc.message}, nil)
		if got := host.TextOf(res.Content); !strings.Contains(got, tc.want) || res.IsError != tc.isError || (err != nil) != tc.isError {
			t.Errorf("CallTool %q: %q (isError %v), %v; want %q", tc.message, got, res.IsError, err, tc.want)
		}
		args, _ := json.Marshal(map[string]any{"message": tc.message})
		resp, handled, err := h.Serving().RelayCall(ctx, "mcp__one__echo", args, host.RelayOptions{ProtocolVersion: conn.NewProtocol})
		if !handled || err != nil {
			t.Fatalf("RelayCall %q: handled %v, %v", tc.message, handled, err)
		}
		var jr struct {
			Result mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(resp, &jr); err != nil {
			t.Fatalf("%s: %v", resp, err)
		}
		if got := host.TextOf(jr.Result.Content); !strings.Contains(got, tc.want) || jr.Result.IsError != tc.isError {
			t.Errorf("RelayCall %q: %s; want %q", tc.message, resp, tc.want)
		}
	}
}

// TestHookScriptElicitation: a Claude Code Elicitation hook script answers
// a server's question during a call without anyone being asked.
func TestHookScriptElicitation(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []*config.Server{demo("one", "-passthrough")}, DefaultMode: "allow_all",
		Hooks: []*config.Hook{hookBlock(t, "Elicitation", "elicit.py", "one", "")}}
	var asked atomic.Int32
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir(), OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	res, err := h.CallTool(context.Background(), "mcp__one__ask", map[string]any{"question": "?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := host.TextOf(res.Content); got != "answer: from the hook (one)" || asked.Load() != 0 {
		t.Fatalf("%q, asked %d times", got, asked.Load())
	}
}

// TestValidateInputRefuses: the validate_input built-in refuses arguments
// the tool's inputSchema does not allow with -32602 naming the path,
// before the server sees the call; good arguments pass.
func TestValidateInputRefuses(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all",
		Interceptors: []*config.Interceptor{{Name: "args", Builtin: "validate_input", Approved: true, Origin: config.Origin{Scope: config.ScopeUser}}}}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	_, err = h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": 5}, nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "/message") {
		t.Fatalf("err %v, want -32602 naming /message", err)
	}
	if n := echoCount(t, h); n != 0 {
		t.Fatalf("the server ran echo %d times", n)
	}
	// The relay leaves a refused call to the full path, which refuses it.
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	if _, handled, _ := h.Serving().RelayCall(ctx, "mcp__one__echo", json.RawMessage(`{"message":5}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol}); handled {
		t.Fatal("the relay took a call validate_input refuses")
	}
	if res, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "fine"}, nil); err != nil || host.TextOf(res.Content) != "fine" {
		t.Fatalf("good arguments: %v, %v", res, err)
	}
	if resp, handled, err := h.Serving().RelayCall(ctx, "mcp__one__echo", json.RawMessage(`{"message":"relayed"}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol}); !handled || err != nil || !strings.Contains(string(resp), "relayed") {
		t.Fatalf("good arguments, relayed: %s, %v, %v", resp, handled, err)
	}
}

// TestChecksKeepTheRelay: a call no hook or interceptor matches keeps the
// relay's fast path (RelayStart starts it on the read loop), and the
// hook for other tools never runs.
func TestChecksKeepTheRelay(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "hook.log")
	cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all",
		Hooks: []*config.Hook{hookBlock(t, "PreToolUse", "pre.py", "mcp__other__.*", log)}}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	var relayed atomic.Int32
	for range 5 {
		done := make(chan struct{})
		if !h.Serving().RelayStart(ctx, "mcp__one__echo", json.RawMessage(`{"message":"forbidden"}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol},
			func(resp []byte, handled bool, err error) {
				if handled && err == nil && strings.Contains(string(resp), "forbidden") {
					relayed.Add(1)
				}
				close(done)
			}) {
			t.Fatal("RelayStart did not take a call no check matches")
		}
		<-done
	}
	if relayed.Load() != 5 || len(hookRuns(t, log)) != 0 {
		t.Fatalf("relayed %d of 5; hook runs %v", relayed.Load(), hookRuns(t, log))
	}
}

// TestReloadHooks: a reload adds a hook (the next call is checked) and
// removes it (the next call is not), without a restart; a hook block of a
// kind that cannot run refuses the reload.
func TestReloadHooks(t *testing.T) {
	t.Parallel()
	base := func() *config.Config {
		return &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all"}
	}
	h, err := host.New(base(), &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	call := func() error {
		_, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "forbidden"}, nil)
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	with := base()
	with.Hooks = []*config.Hook{hookBlock(t, "PreToolUse", "pre.py", "mcp__one__echo", "")}
	r, err := h.Reload(ctx, with, time.Second)
	if err != nil || !r.Checks || len(r.Replaced)+len(r.Removed) != 0 {
		t.Fatalf("reload: %+v, %v", r, err)
	}
	if err := call(); !errors.Is(err, intercept.ErrRefused) {
		t.Fatalf("after adding the hook: %v", err)
	}
	r, err = h.Reload(ctx, base(), time.Second)
	if err != nil || !r.Checks {
		t.Fatalf("reload: %+v, %v", r, err)
	}
	if err := call(); err != nil {
		t.Fatalf("after removing the hook: %v", err)
	}
	bad := base()
	bad.Hooks = []*config.Hook{{Event: "SessionStart", Command: "true", Approved: true}}
	if _, err := h.Reload(ctx, bad, time.Second); !errors.Is(err, host.ErrReload) {
		t.Fatalf("a hook that cannot run: %v", err)
	}
	if err := call(); err != nil {
		t.Fatalf("after a refused reload: %v", err)
	}
}

// TestHookAuditMode: a hook in audit mode runs, is recorded as what it
// would do, and changes nothing.
func TestHookAuditMode(t *testing.T) {
	t.Parallel()
	hk := hookBlock(t, "PreToolUse", "pre.py", "mcp__one__echo", "")
	hk.Mode = "audit"
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all", Hooks: []*config.Hook{hk}}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	n := new(host.DecisionNote)
	res, err := h.CallTool(host.WithDecisionNote(context.Background(), n), "mcp__one__echo", map[string]any{"message": "forbidden"}, nil)
	if err != nil || host.TextOf(res.Content) != "forbidden" {
		t.Fatalf("%v, %v", res, err)
	}
	if recs := n.Checks(); len(recs) != 1 || recs[0].Decision != "would_deny" || recs[0].Kind != intercept.KindHook {
		t.Fatalf("records %+v", recs)
	}
}

// TestLLMToolsCallThroughHooks: the LLM export's call path (Export.ToolCall,
// then Host.CallTool) goes through the same gate: a hook denies there too.
func TestLLMToolsCallThroughHooks(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all",
		Hooks: []*config.Hook{hookBlock(t, "PreToolUse", "pre.py", "mcp__one__echo", "")}}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	e, _, err := llmtools.FromHost(ctx, h, llmtools.OpenAI)
	if err != nil {
		t.Fatal(err)
	}
	vendor, ok := e.Names.Vendor("mcp__one__echo")
	if !ok {
		t.Fatal("echo is not exported")
	}
	call, err := e.ToolCall(vendor, json.RawMessage(`{"message":"forbidden"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.CallTool(ctx, call.Name, call.Arguments, nil); !errors.Is(err, intercept.ErrRefused) || !strings.Contains(err.Error(), "forbidden words") {
		t.Fatalf("err %v, want the hook's refusal", err)
	}
}

// TestInterceptorServerThroughHost: an interceptor block naming a SEP-2624
// interceptor server (the real test server, a server block of its own)
// refuses a call it finds invalid before the upstream sees it — on the
// library's path and, through the relay's hand-over, the gateway's — and
// the server's own tools are not served.
func TestInterceptorServerThroughHost(t *testing.T) {
	t.Parallel()
	bin, err := testbin.BuildOne(t.TempDir(), "./internal/testing/interceptorserver")
	if err != nil {
		t.Fatal(err)
	}
	ic := &config.Server{Name: "ic", Transport: config.TransportStdio, Command: bin, Args: []string{"-i", "conf/require-note=require-note"},
		Approved: true, ConnectTimeout: 20 * time.Second, InterceptorOnly: true}
	cfg := &config.Config{Servers: []*config.Server{demo("one"), ic}, DefaultMode: "allow_all",
		Interceptors: []*config.Interceptor{{Name: "notes", Server: "ic", Approved: true, Timeout: 20 * time.Second,
			Match: &config.CheckMatch{Tools: []string{"mcp__one__echo"}}, Origin: config.Origin{Scope: config.ScopeUser}}}}
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	_, err = h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "hi"}, nil)
	var r *intercept.RefusedError
	if !errors.As(err, &r) || r.Kind != intercept.KindServer || !strings.Contains(err.Error(), "note is required") {
		t.Fatalf("err %v, want the interceptor server's refusal", err)
	}
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	if _, handled, _ := h.Serving().RelayCall(ctx, "mcp__one__echo", json.RawMessage(`{"message":"hi"}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol}); handled {
		t.Fatal("the relay took a call the interceptor server refuses")
	}
	if n := echoCount(t, h); n != 0 {
		t.Fatalf("the server ran echo %d times", n)
	}
	tools, _ := h.Tools(ctx)
	for _, tl := range tools {
		if tl.Server == "ic" {
			t.Fatalf("the interceptor server's tool %s is served", tl.Name)
		}
	}
}

package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

var update = flag.Bool("update", false, "rewrite the golden input files")

// The tests run real hook processes: the scripts in testdata, written the
// way Claude Code's hooks reference writes them, through sh and python3.
// Timeouts are real time (a real process cannot run in a synctest bubble),
// kept short.

// needShell fails (never skips) when the hooks' interpreters are missing:
// CI has them (see the Makefile's test-deps).
func needShell(t testing.TB, python bool) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the hook scripts are sh and python3 scripts run by sh -c")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatal("sh is not installed: the hook tests run real hook scripts")
	}
	if python {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Fatal("python3 is not installed: the hook tests run Claude Code–style python3 hook scripts (make test-deps)")
		}
	}
}

// testdata is the scripts' directory: the hooks' CLAUDE_PROJECT_DIR.
func testdata(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostEnv is the host environment the hooks see through LookupEnv: the
// real PATH and HOME (python3 may be a pyenv shim) and variables that must
// not leak.
func hostEnv(extra map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := extra[k]; ok {
			return v, true
		}
		switch k {
		case "PATH", "HOME", "PYENV_ROOT":
			return os.LookupEnv(k)
		case "LEAKY_SECRET":
			return "do-not-leak", true
		}
		return "", false
	}
}

type fixture struct {
	entry *intercept.Entry
	logs  *syncbuf.Buffer
}

func newHook(t testing.TB, h config.Hook, env map[string]string) fixture {
	t.Helper()
	if h.Dir == "" {
		h.Dir = testdata(t)
	}
	logs := &syncbuf.Buffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Trace})
	e, err := New(&h, Options{Log: log, LookupEnv: hostEnv(env)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return fixture{entry: e, logs: logs}
}

func (f fixture) check(t testing.TB, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	t.Helper()
	return f.entry.Checker.Check(context.Background(), c, p)
}

func toolCall(args string) *intercept.Call {
	return &intercept.Call{
		Event: intercept.EventToolsCall, Server: "db", Name: "mcp__db__query", Original: "query",
		Session: "s-4f2a", Front: "http", ID: "mcphost_00112233aabbccdd",
		Args: json.RawMessage(args), Payload: json.RawMessage(args),
	}
}

// result is c in the Response phase with res.
func result(c *intercept.Call, res string) *intercept.Call {
	r := *c
	r.Payload = json.RawMessage(res)
	r.Duration = 42 * time.Millisecond
	return &r
}

func textResult(s string) string {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
	return string(b)
}

func TestPreToolUse(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	tests := []struct {
		name    string
		command string
		args    string
		want    intercept.Verdict
	}{
		{"exit 2 blocks rm", `"$CLAUDE_PROJECT_DIR"/block_rm.sh`, `{"command":"rm -rf /tmp/build"}`,
			intercept.Verdict{Action: intercept.Deny, Reason: "Blocked: rm commands are not allowed"}},
		{"exit 0 lets ls pass", `"$CLAUDE_PROJECT_DIR"/block_rm.sh`, `{"command":"ls -la"}`, intercept.Verdict{}},
		{"python validator exit 2", `python3 "$CLAUDE_PROJECT_DIR"/validate_command.py`, `{"command":"grep -r TODO ."}`,
			intercept.Verdict{Action: intercept.Deny, Reason: "• Use 'rg' (ripgrep) instead of 'grep' for better performance"}},
		{"JSON deny with reason", `python3 "$CLAUDE_PROJECT_DIR"/deny.py`, `{"query":"DELETE FROM users"}`,
			intercept.Verdict{Action: intercept.Deny, Reason: "Database writes are not allowed"}},
		{"JSON deny passes reads", `python3 "$CLAUDE_PROJECT_DIR"/deny.py`, `{"query":"SELECT 1"}`, intercept.Verdict{}},
		{"allow with updatedInput", `python3 "$CLAUDE_PROJECT_DIR"/allow_update.py`, `{"query":"SELECT *","limit":500}`,
			intercept.Verdict{Action: intercept.Allow, Reason: "Read-only query, auto-approved",
				Payload: json.RawMessage(`{"query": "SELECT *", "limit": 10}`), Context: "Results are capped at 10 rows."}},
		{"ask", `python3 "$CLAUDE_PROJECT_DIR"/ask.py`, `{"query":"SELECT * FROM prod.users"}`,
			intercept.Verdict{Action: intercept.Ask, Reason: "This touches production"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newHook(t, config.Hook{Event: PreToolUse, Command: tt.command}, nil)
			got, err := f.check(t, toolCall(tt.args), intercept.Request)
			if err != nil {
				t.Fatalf("Check: %v\nlogs:\n%s", err, f.logs)
			}
			assertVerdict(t, got, tt.want)
		})
	}
}

func TestPostToolUse(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	tests := []struct {
		name    string
		command string
		res     string
		want    intercept.Verdict
	}{
		{"decision block", `python3 "$CLAUDE_PROJECT_DIR"/post_block.py`, textResult("-----BEGIN RSA PRIVATE KEY-----"),
			intercept.Verdict{Action: intercept.Deny, Reason: "The result contains a private key", Context: "Ask the user for a redacted export instead."}},
		{"no block", `python3 "$CLAUDE_PROJECT_DIR"/post_block.py`, textResult("fine"), intercept.Verdict{}},
		{"updatedMCPToolOutput string", `python3 "$CLAUDE_PROJECT_DIR"/post_output_string.py`, textResult("hello world"),
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"text":"HELLO WORLD","type":"text"}]}`)}},
		{"updatedMCPToolOutput object", `python3 "$CLAUDE_PROJECT_DIR"/post_output_object.py`, textResult("secret stuff"),
			intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"content":[{"type":"text","text":"redacted by policy"}],"structuredContent":{"redacted":true,"tool":"mcp__db__query"}}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newHook(t, config.Hook{Event: PostToolUse, Command: tt.command}, nil)
			got, err := f.check(t, result(toolCall(`{"query":"SELECT 1"}`), tt.res), intercept.Response)
			if err != nil {
				t.Fatalf("Check: %v\nlogs:\n%s", err, f.logs)
			}
			assertVerdict(t, got, tt.want)
		})
	}
}

func TestPostToolUseFailure(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	f := newHook(t, config.Hook{Event: PostToolUseFailure, Command: `python3 "$CLAUDE_PROJECT_DIR"/failure.py`}, nil)
	t.Run("error", func(t *testing.T) {
		c := result(toolCall(`{"query":"SELECT 1"}`), "")
		c.Err = errors.New("upstream db: connection refused")
		got, err := f.check(t, c, intercept.Response)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Context: "The tool failed with: upstream db: connection refused (interrupt: False)"})
	})
	t.Run("error result", func(t *testing.T) {
		c := result(toolCall(`{"query":"SELECT 1"}`), `{"content":[{"type":"text","text":"syntax error at 1"}],"isError":true}`)
		c.IsError = true
		got, err := f.check(t, c, intercept.Response)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Context: "The tool failed with: syntax error at 1 (interrupt: False)"})
	})
	t.Run("interrupt", func(t *testing.T) {
		c := result(toolCall(`{}`), "")
		c.Err = context.Canceled
		got, err := f.check(t, c, intercept.Response)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Context: "The tool failed with: context canceled (interrupt: True)"})
	})
}

// TestEventsRunOnlyWhereTheyApply: a PostToolUse hook does not run for a
// failed call, PostToolUseFailure not for a success, PreToolUse not in the
// response, and no hook for another event.
func TestEventsRunOnlyWhereTheyApply(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	failed := result(toolCall(`{}`), `{"content":[],"isError":true}`)
	failed.IsError = true
	ok := result(toolCall(`{}`), textResult("ok"))
	elicit := &intercept.Call{Event: intercept.EventElicit, Server: "db", Elicit: &mcp.ElicitParams{Message: "?"}}
	tests := []struct {
		event string
		c     *intercept.Call
		p     intercept.Phase
	}{
		{PostToolUse, failed, intercept.Response},
		{PostToolUseFailure, ok, intercept.Response},
		{PreToolUse, ok, intercept.Response},
		{PreToolUse, elicit, intercept.Request},
		{Elicitation, toolCall(`{}`), intercept.Request},
		{Elicitation, elicit, intercept.Response},
		{ElicitationResult, elicit, intercept.Request},
		{PostToolUse, &intercept.Call{Event: intercept.EventPromptsGet}, intercept.Response},
	}
	for _, tt := range tests {
		out := filepath.Join(t.TempDir(), "ran")
		f := newHook(t, config.Hook{Event: tt.event, Command: `python3 "$CLAUDE_PROJECT_DIR"/record.py`, Env: map[string]string{"OUT": out}}, nil)
		v, err := f.check(t, tt.c, tt.p)
		if err != nil || v.Action != intercept.Pass {
			t.Errorf("%s on %s: %v, %v", tt.event, tt.c.Event, v, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s ran for %s phase %d", tt.event, tt.c.Event, tt.p)
		}
	}
}

func TestElicitation(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	form := &intercept.Call{Event: intercept.EventElicit, Server: "my-mcp-server", Session: "s-1", Front: "stdio",
		Elicit: &mcp.ElicitParams{Message: "Please provide your credentials",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"username": map[string]any{"type": "string"}}}}}
	t.Run("auto-accept", func(t *testing.T) {
		f := newHook(t, config.Hook{Event: Elicitation, Command: `python3 "$CLAUDE_PROJECT_DIR"/elicit_accept.py`}, nil)
		got, err := f.check(t, form, intercept.Request)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"accept","content":{"username":"alice"}}`)})
		var res mcp.ElicitResult
		if err := json.Unmarshal(got.Payload, &res); err != nil || res.Action != "accept" || res.Content["username"] != "alice" {
			t.Errorf("payload is not the ElicitResult: %+v, %v", res, err)
		}
	})
	t.Run("exit 2 declines", func(t *testing.T) {
		f := newHook(t, config.Hook{Event: Elicitation, Command: `cat >/dev/null; echo "no credentials for bots" >&2; exit 2`}, nil)
		got, err := f.check(t, form, intercept.Request)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Action: intercept.Deny, Reason: "no credentials for bots", Payload: json.RawMessage(`{"action":"decline"}`)})
	})
	t.Run("result override", func(t *testing.T) {
		f := newHook(t, config.Hook{Event: ElicitationResult, Command: `python3 "$CLAUDE_PROJECT_DIR"/elicit_result.py`}, nil)
		c := *form
		c.Payload = json.RawMessage(`{"action":"accept","content":{"env":"prod"}}`)
		got, err := f.check(t, &c, intercept.Response)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"decline"}`)})
		c.Payload = json.RawMessage(`{"action":"accept","content":{"env":"dev"}}`)
		if got, err := f.check(t, &c, intercept.Response); err != nil || got.Action != intercept.Pass {
			t.Errorf("dev answer: %v, %v", got, err)
		}
	})
	t.Run("result action-only override keeps content", func(t *testing.T) {
		f := newHook(t, config.Hook{Event: ElicitationResult, Command: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"ElicitationResult","action":"accept"}}'`}, nil)
		c := *form
		c.Payload = json.RawMessage(`{"action":"accept","content":{"username":"bob"}}`)
		got, err := f.check(t, &c, intercept.Response)
		if err != nil {
			t.Fatal(err)
		}
		assertVerdict(t, got, intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"accept","content":{"username":"bob"}}`)})
	})
}

func TestNonBlockingExit(t *testing.T) {
	needShell(t, false)
	t.Parallel()
	f := newHook(t, config.Hook{Event: PreToolUse, Command: `"$CLAUDE_PROJECT_DIR"/exit1.sh`}, nil)
	got, err := f.check(t, toolCall(`{"command":"rm -rf /"}`), intercept.Request)
	if err != nil || got.Action != intercept.Pass {
		t.Fatalf("exit 1 = %v, %v; want a pass (non-blocking)", got, err)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "lint config missing") || !strings.Contains(logs, "[WARN]") {
		t.Errorf("the non-blocking error is not logged as a warning with its stderr:\n%s", logs)
	}
	// A secret in a hook's stderr is redacted in the logs.
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	f = newHook(t, config.Hook{Event: PreToolUse, Command: `cat >/dev/null; echo "auth failed for ` + token + `" >&2; exit 3`}, nil)
	if got, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil || got.Action != intercept.Pass {
		t.Fatalf("exit 3 = %v, %v", got, err)
	}
	if logs := f.logs.String(); strings.Contains(logs, token) || !strings.Contains(logs, "auth failed for") {
		t.Errorf("stderr not logged, or not redacted:\n%s", logs)
	}
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	needShell(t, false)
	t.Parallel()
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			h := config.Hook{Event: PreToolUse, Command: `"$CLAUDE_PROJECT_DIR"/sleep.sh`, Env: map[string]string{"PIDFILE": pidFile}}
			if how == "timeout" {
				h.Timeout = 700 * time.Millisecond
			}
			f := newHook(t, h, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "cancel" {
				go func() {
					waitFile(t, pidFile)
					cancel()
				}()
			}
			start := time.Now()
			_, err := f.entry.Checker.Check(ctx, toolCall(`{}`), intercept.Request)
			var he *Error
			want := context.DeadlineExceeded
			if how == "cancel" {
				want = context.Canceled
			}
			if !errors.As(err, &he) || !errors.Is(err, want) {
				t.Fatalf("err = %v, want a *hook.Error matching %v", err, want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("returned after %s", took)
			}
			pgid, child := waitFile(t, pidFile), waitFile(t, pidFile+".child")
			deadline := time.Now().Add(3 * time.Second)
			for processAlive(pgid) || processAlive(child) || groupAlive(pgid) {
				if time.Now().After(deadline) {
					t.Fatalf("the hook (%d) or its child (%d) is still alive: its process group was not killed", pgid, child)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// waitFile returns the pid written to path, waiting for it.
func waitFile(t testing.TB, path string) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no pid in %s", path)
			return -1
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStdoutOverTheCap(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	f := newHook(t, config.Hook{Event: PreToolUse, Command: `python3 "$CLAUDE_PROJECT_DIR"/big.py`}, nil)
	_, err := f.check(t, toolCall(`{}`), intercept.Request)
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("err = %v, want ErrOutputTooLarge", err)
	}
}

func TestSpawnFailureIsAnError(t *testing.T) {
	needShell(t, false)
	t.Parallel()
	f := newHook(t, config.Hook{Event: PreToolUse, Command: "true", Dir: filepath.Join(t.TempDir(), "gone")}, nil)
	if _, err := f.check(t, toolCall(`{}`), intercept.Request); err == nil {
		t.Fatal("a hook that cannot start passed")
	}
}

func TestEnvironmentIsTheMinimum(t *testing.T) {
	needShell(t, false)
	t.Parallel()
	out := filepath.Join(t.TempDir(), "env")
	f := newHook(t, config.Hook{
		Event: PreToolUse, Command: `"$CLAUDE_PROJECT_DIR"/env.sh`,
		Env:        map[string]string{"OUT": out, "POLICY": "strict"},
		InheritEnv: []string{"AWS_PROFILE"},
	}, map[string]string{"AWS_PROFILE": "audit", "GITHUB_TOKEN": "ghp_nope"})
	if _, err := f.check(t, toolCall(`{}`), intercept.Request); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	dir := testdata(t)
	for k, want := range map[string]string{"OUT": out, "POLICY": "strict", "AWS_PROFILE": "audit",
		"CLAUDE_PROJECT_DIR": dir, "MCPHOST_HOOK": "1", "PATH": os.Getenv("PATH")} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	// What the shell itself sets is allowed; nothing else of the host.
	allowed := map[string]bool{"OUT": true, "POLICY": true, "AWS_PROFILE": true, "CLAUDE_PROJECT_DIR": true,
		"MCPHOST_HOOK": true, "PATH": true, "HOME": true, "PYENV_ROOT": false, "PWD": true, "SHLVL": true, "OLDPWD": true, "_": true}
	for k := range env {
		if !allowed[k] {
			t.Errorf("%s leaked into the hook's environment", k)
		}
	}
	if cwd, _ := os.ReadFile(out + ".cwd"); strings.TrimSpace(string(cwd)) != dir {
		t.Errorf("cwd = %q, want %q", cwd, dir)
	}
}

// TestInputGolden checks the input of each event, key for key, against
// testdata/golden/EVENT.json (go test -update rewrites them).
func TestInputGolden(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	who := &inbound.Principal{Issuer: "https://idp.example", Subject: "alice", Groups: []string{"eng"}, Scopes: []string{"mcp"}}
	pre := toolCall(`{"query":"SELECT 1"}`)
	pre.Who, pre.Endpoint = who, "team"
	failed := result(pre, `{"content":[{"type":"text","text":"boom"}],"isError":true}`)
	failed.IsError = true
	elicit := &intercept.Call{Event: intercept.EventElicit, Server: "my-mcp-server", Original: "login", Session: "s-4f2a", Front: "stdio",
		Elicit: &mcp.ElicitParams{Message: "Please provide your credentials",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"username": map[string]any{"type": "string", "title": "Username"}}}}}
	urlElicit := &intercept.Call{Event: intercept.EventElicit, Server: "my-mcp-server", Session: "s-4f2a", Front: "library",
		Elicit: &mcp.ElicitParams{Mode: "url", Message: "Please authenticate", URL: "https://auth.example.com/login", ElicitationID: "elicit-123"}}
	answered := *urlElicit
	answered.Payload = json.RawMessage(`{"action":"accept","content":{"username":"alice"}}`)
	tests := []struct {
		golden, event string
		c             *intercept.Call
		p             intercept.Phase
	}{
		{"PreToolUse", PreToolUse, pre, intercept.Request},
		{"PostToolUse", PostToolUse, result(pre, textResult("1")), intercept.Response},
		{"PostToolUseFailure", PostToolUseFailure, failed, intercept.Response},
		{"Elicitation", Elicitation, elicit, intercept.Request},
		{"Elicitation-url", Elicitation, urlElicit, intercept.Request},
		{"ElicitationResult", ElicitationResult, &answered, intercept.Response},
	}
	dir := testdata(t)
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "input")
			f := newHook(t, config.Hook{Event: tt.event, Command: `python3 "$CLAUDE_PROJECT_DIR"/record.py`, Env: map[string]string{"OUT": out}}, nil)
			if v, err := f.check(t, tt.c, tt.p); err != nil || v.Action != intercept.Pass {
				t.Fatalf("Check = %v, %v\n%s", v, err, f.logs)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, raw, "", "  "); err != nil {
				t.Fatal(err)
			}
			gotText := strings.ReplaceAll(got.String(), dir, "$DIR") + "\n"
			path := filepath.Join("testdata", "golden", tt.golden+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(gotText), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if gotText != string(want) {
				t.Errorf("input differs from %s:\n%s", path, gotText)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, h := range []config.Hook{
		{Event: "Stop", Command: "true"},
		{Event: PreToolUse},
		{Event: PreToolUse, Command: "true", URL: "http://127.0.0.1/"},
		{Event: PreToolUse, Command: "true", Shell: "zsh"},
		{Event: PreToolUse, URL: "ftp://example.com/"},
	} {
		_, err := New(&h, Options{})
		if err == nil {
			t.Errorf("New(%+v) accepted", h)
		}
		if unsupported := h.Event == "Stop" || h.Shell == "zsh"; unsupported != errors.Is(err, intercept.ErrUnsupported) {
			t.Errorf("New(%+v) = %v: not yet supported must be ErrUnsupported (only)", h, err)
		}
	}
}

func assertVerdict(t *testing.T, got, want intercept.Verdict) {
	t.Helper()
	if got.Action != want.Action || got.Reason != want.Reason || got.Context != want.Context || got.Code != want.Code {
		t.Errorf("verdict = %s %q ctx %q, want %s %q ctx %q", got.Action, got.Reason, got.Context, want.Action, want.Reason, want.Context)
	}
	if !sameJSON(got.Payload, want.Payload) {
		t.Errorf("payload = %s, want %s", got.Payload, want.Payload)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// errDeadline is what a timed-out hook's error matches.
var errDeadline = context.DeadlineExceeded

// TestInputTheHookDoesNotRead: a hook that exits without reading a large
// input still decides (stdin is written then closed; the broken pipe is
// not an error).
func TestInputTheHookDoesNotRead(t *testing.T) {
	needShell(t, false)
	t.Parallel()
	big := `{"blob":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, tt := range []struct {
		command string
		want    intercept.Verdict
	}{
		{"exit 0", intercept.Verdict{}},
		{"echo no >&2; exit 2", intercept.Verdict{Action: intercept.Deny, Reason: "no"}},
	} {
		f := newHook(t, config.Hook{Event: PreToolUse, Command: tt.command}, nil)
		got, err := f.check(t, toolCall(big), intercept.Request)
		if err != nil {
			t.Fatalf("%s: %v", tt.command, err)
		}
		assertVerdict(t, got, tt.want)
	}
}

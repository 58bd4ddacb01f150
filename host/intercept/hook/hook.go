// Package hook runs Claude Code–compatible hooks: the hook blocks of the
// configuration, each a command (run by a shell, the input JSON on stdin) or
// an HTTP endpoint (the input JSON POSTed), for the events PreToolUse,
// PostToolUse, PostToolUseFailure, Elicitation and ElicitationResult.
//
// Input and output follow Claude Code's hooks reference
// (https://code.claude.com/docs/en/hooks), so hook scripts written for Claude
// Code run unchanged: the common input keys, each event's keys, plus an
// "mcphost" object of gateway extras; exit 0 with optional JSON output, exit
// 2 to block with stderr as the reason, any other exit a non-blocking error.
// Unlike Claude Code, a hook that times out, writes more than MaxStdout or
// cannot be run (or reached) is an error, which the engine turns into a
// refusal unless the block says fail_open.
package hook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/redact"
)

// The Claude Code events a hook block can name.
const (
	PreToolUse         = intercept.HookPreToolUse
	PostToolUse        = intercept.HookPostToolUse
	PostToolUseFailure = intercept.HookPostToolUseFailure
	Elicitation        = intercept.HookElicitation
	ElicitationResult  = intercept.HookElicitationResult
)

// Limits and defaults of one run.
const (
	// DefaultTimeout bounds a run when the block sets no timeout (Claude
	// Code: 600 s; a gateway call waits on it).
	DefaultTimeout = intercept.DefaultHookTimeout
	// MaxStdout caps a command's stdout and an HTTP hook's response body:
	// more is an error.
	MaxStdout = 1 << 20
	// MaxStderr is how much of a command's stderr is kept.
	MaxStderr = 64 << 10
	// MaxText caps a reason or an additional context (Claude Code's cap on
	// injected hook output).
	MaxText = 10000
)

// Options are what a hook needs from the host.
type Options struct {
	// Log receives the hook's logs; its output goes through host/redact.
	// OPTIONAL.
	Log hclog.Logger
	// LookupEnv reads the host's environment (os.LookupEnv when nil): the
	// minimum a command gets, inherit_env, allowed_env_vars.
	LookupEnv func(string) (string, bool)
	// Client sends HTTP hooks' requests (a plain client when nil).
	Client *http.Client
	// PermissionMode is the input's permission_mode ("" is "default").
	PermissionMode string
}

// ErrOutputTooLarge is matched by the error of a hook that wrote more than
// MaxStdout bytes (an HTTP hook: a body over MaxStdout).
var ErrOutputTooLarge = errors.New("hook output too large")

// Error is a hook run that failed: it could not start, timed out (Err
// matches context.DeadlineExceeded), was cancelled (context.Canceled),
// wrote too much (ErrOutputTooLarge), or its endpoint could not be reached.
// It holds no hook output.
type Error struct {
	// Hook names the hook: its event and command or URL.
	Hook string
	Err  error
}

func (e *Error) Error() string { return "hook " + e.Hook + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns the entry of the hook block h.
func New(h *config.Hook, o Options) (*intercept.Entry, error) {
	r, err := newRunner(h, o)
	if err != nil {
		return nil, err
	}
	return intercept.HookEntry(h, r)
}

// runner is the intercept.Checker of one hook block.
type runner struct {
	event string
	// name is how logs and errors name the hook (no secrets: env values
	// and headers are left out).
	name    string
	timeout time.Duration
	// dir is the working directory and CLAUDE_PROJECT_DIR, also the input's
	// cwd.
	dir            string
	permissionMode string
	log            hclog.Logger
	// cmd is set for a command hook, web for an HTTP hook.
	cmd *command
	web *webhook
}

func newRunner(h *config.Hook, o Options) (*runner, error) {
	switch h.Event {
	case PreToolUse, PostToolUse, PostToolUseFailure, Elicitation, ElicitationResult:
	default:
		return nil, fmt.Errorf("hook %q: %w (events: PreToolUse, PostToolUse, PostToolUseFailure, Elicitation, ElicitationResult)", h.Event, intercept.ErrUnsupported)
	}
	if (h.Command == "") == (h.URL == "") {
		return nil, fmt.Errorf("hook %q: exactly one of command and url must be set", h.Event)
	}
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	log := o.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	r := &runner{
		event:          h.Event,
		timeout:        h.Timeout,
		dir:            h.Dir,
		permissionMode: o.PermissionMode,
		log:            redact.Logger(log).Named("hook"),
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	if r.permissionMode == "" {
		r.permissionMode = "default"
	}
	if r.dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("hook %q: no directory to run in: %w", h.Event, err)
		}
		r.dir = wd
	}
	// The name goes into logs and errors (which may reach a client):
	// scrubbed of what looks like a secret (a token in a URL or a command).
	var err error
	if h.Command != "" {
		r.name = redact.String(h.Event + " command " + strings.TrimSpace(h.Command))
		r.cmd, err = newCommand(h, r.dir, lookup)
	} else {
		r.name = redact.String(h.Event + " url " + h.URL)
		r.web, err = newWebhook(h, lookup, o.Client)
	}
	if err != nil {
		return nil, fmt.Errorf("hook %q: %w", h.Event, err)
	}
	r.log = r.log.With("event", h.Event)
	return r, nil
}

// applies says whether the hook runs for phase p of c: its event's
// operation and phase, and for the tool result events, success or failure.
func (r *runner) applies(c *intercept.Call, p intercept.Phase) bool {
	switch r.event {
	case PreToolUse:
		return c.Event == intercept.EventToolsCall && p == intercept.Request
	case PostToolUse:
		return c.Event == intercept.EventToolsCall && p == intercept.Response && c.Err == nil && !c.IsError
	case PostToolUseFailure:
		return c.Event == intercept.EventToolsCall && p == intercept.Response && (c.Err != nil || c.IsError)
	case Elicitation:
		return c.Event == intercept.EventElicit && p == intercept.Request && c.Elicit != nil
	case ElicitationResult:
		return c.Event == intercept.EventElicit && p == intercept.Response
	}
	return false
}

// Check runs the hook for phase p of c. A call the hook's event does not
// cover passes without a run. A run that fails (see Error) returns an
// error; a non-blocking hook error (an exit other than 0 and 2, output that
// is not valid hook output, an HTTP status other than 2xx) is logged and
// passes.
func (r *runner) Check(ctx context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	if !r.applies(c, p) {
		return intercept.Verdict{}, nil
	}
	in, err := encodeInput(r.event, c, inputEnv{cwd: r.dir, permissionMode: r.permissionMode})
	if err != nil {
		return intercept.Verdict{}, &Error{Hook: r.name, Err: fmt.Errorf("encoding the input: %w", err)}
	}
	runCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	start := time.Now()
	var out output
	if r.cmd != nil {
		out, err = r.cmd.run(runCtx, cancel, in)
	} else {
		out, err = r.web.post(runCtx, in)
	}
	took := time.Since(start)
	if err != nil {
		switch {
		case errors.Is(err, ErrOutputTooLarge):
		case errors.Is(runCtx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("did not finish in time (timeout %s): %w", r.timeout, context.DeadlineExceeded)
		case ctx.Err() != nil:
			err = fmt.Errorf("the call ended: %w", ctx.Err())
		}
		r.log.Warn("hook failed", "hook", r.name, "tool", c.Name, "error", err, "stderr", tail(out.stderr), "ms", took.Milliseconds())
		return intercept.Verdict{}, &Error{Hook: r.name, Err: err}
	}
	v, extra, derr := decode(r.event, out)
	switch {
	case derr != nil:
		r.log.Warn("hook error (non-blocking: the call goes on)", "hook", r.name, "tool", c.Name, "error", derr, "stderr", tail(out.stderr))
	case extra.plain != "":
		r.log.Debug("hook wrote plain text", "hook", r.name, "stdout", cut(extra.plain, 2048))
	}
	if extra.systemMessage != "" {
		r.log.Info("hook message", "hook", r.name, "tool", c.Name, "message", cut(extra.systemMessage, MaxText))
	}
	if r.event == ElicitationResult && v.Action == intercept.Mutate {
		v.Payload = keepContent(v.Payload, c.Payload)
	}
	r.log.Debug("hook ran", "hook", r.name, "tool", c.Name, "server", c.Server, "exit", out.exit, "status", out.status,
		"decision", v.Action.String(), "ms", took.Milliseconds())
	return v, nil
}

// tail is the kept stderr for a log line, trimmed.
func tail(b []byte) string { return cut(strings.TrimSpace(string(b)), 4096) }

// cut caps s at n characters.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

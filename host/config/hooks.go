package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/permissions"
)

// Hook is one hook block: a Claude Code–compatible hook run for the tool
// calls (or elicitations) its matcher selects.
type Hook struct {
	// Event is the block's label: PreToolUse, PostToolUse,
	// PostToolUseFailure, Elicitation or ElicitationResult.
	Event string `json:"event"`
	// Matcher is Claude Code's matcher over the canonical tool name (the
	// server name for the Elicitation events); "" or "*" matches all.
	Matcher string `json:"matcher,omitempty"`
	// Command (run by Shell: "" is bash, as Claude Code runs hooks, or sh
	// where bash is absent, cmd on Windows) or URL (an HTTP hook: the input is POSTed);
	// exactly one is set.
	Command string `json:"command,omitempty"`
	Shell   string `json:"shell,omitempty"`
	URL     string `json:"url,omitempty"`
	// Env is added to a command hook's minimum environment, with the host
	// variables named by InheritEnv.
	Env        map[string]string `json:"env,omitempty"`
	InheritEnv []string          `json:"inherit_env,omitempty"`
	// Headers are an HTTP hook's request headers; their values interpolate
	// $VAR and ${VAR} for the names in AllowedEnvVars only.
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowed_env_vars,omitempty"`
	// Timeout bounds one run (0: the default, 60 s).
	Timeout time.Duration `json:"timeout,omitempty"`
	// FailOpen lets the call go on when the hook times out or cannot run.
	FailOpen bool `json:"fail_open,omitempty"`
	// Mode is "enforce" ("" too) or "audit".
	Mode  string      `json:"mode,omitempty"`
	Match *CheckMatch `json:"match,omitempty"`
	// Dir is the hook's CLAUDE_PROJECT_DIR and working directory: the
	// project root for project and local scope, else the declaring file's
	// directory.
	Dir    string `json:"dir,omitempty"`
	Origin Origin `json:"origin"`
	// Approved is false for a project file's hook not approved yet (it
	// does not run).
	Approved bool `json:"approved"`
}

// Interceptor is one interceptor block: a plugin, a SEP-2624 interceptor
// server or a built-in check, run in declared order.
type Interceptor struct {
	// Name is the block's label, unique.
	Name string `json:"name"`
	// Exactly one of Plugin, Server and Builtin is set.
	Plugin  string `json:"plugin,omitempty"`
	Server  string `json:"server,omitempty"`
	Builtin string `json:"builtin,omitempty"`
	// Action is the secrets built-in's: "block" ("" too) or "redact".
	Action string `json:"action,omitempty"`
	// Protocol is a server's SEP-2624 revision ("": the one implemented).
	Protocol string `json:"protocol,omitempty"`
	// Names selects a server's interceptors (nil: all).
	Names []string `json:"names,omitempty"`
	// Options is a plugin's configuration, checked against the schema it
	// declares.
	Options json.RawMessage `json:"options,omitempty"`
	// Events and Phases are what it checks (nil: the kind's default).
	Events []string `json:"events,omitempty"`
	Phases []string `json:"phases,omitempty"`
	// Mode is "enforce" ("" too) or "audit".
	Mode     string        `json:"mode,omitempty"`
	FailOpen bool          `json:"fail_open,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	Match    *CheckMatch   `json:"match,omitempty"`
	Origin   Origin        `json:"origin"`
	// Approved is false for a project file's interceptor not approved yet.
	Approved bool `json:"approved"`
}

// CheckMatch is a hook's or interceptor's match block.
type CheckMatch struct {
	Servers    []string                `json:"servers,omitempty"`
	Tools      []string                `json:"tools,omitempty"`
	Principals *permissions.Principals `json:"principals,omitempty"`
}

// HookEvents are the events a hook block may name (Claude Code's MCP
// events).
var HookEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "Elicitation", "ElicitationResult"}

// Built-in interceptors (interceptor { builtin = "…" }).
const (
	BuiltinValidateInput  = "validate_input"
	BuiltinValidateOutput = "validate_output"
	BuiltinSecrets        = "secrets"
)

// Builtins lists the built-in interceptors.
var Builtins = []string{BuiltinValidateInput, BuiltinValidateOutput, BuiltinSecrets}

// InterceptorEvents are the events a plugin or server interceptor may
// check (the built-ins check tools/call only).
var InterceptorEvents = []string{"tools/call", "prompts/get", "resources/read", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}

// SEPRevision is the SEP-2624 (MCP interceptors) revision implemented: the
// only value of an interceptor's protocol attribute.
const SEPRevision = "sep-2624/2026-09"

// Phases of an interceptor, and modes of a hook or interceptor.
const (
	PhaseRequest  = "request"
	PhaseResponse = "response"
	ModeEnforce   = "enforce"
	ModeAudit     = "audit"
)

// Default timeouts: a hook's run (Claude Code's is 600 s; a gateway call
// waits on it) and an interceptor's check.
const (
	DefaultHookTimeout        = 60 * time.Second
	DefaultInterceptorTimeout = 5 * time.Second
)

// ApprovalKeyChecks is the key under which the approval of a project's hook
// and interceptor blocks is stored in approved_project_servers ('@' cannot
// start a server name).
const ApprovalKeyChecks = "@checks"

// exactMatcherRE is a Claude Code matcher that is an exact name or a
// '|'-list of exact names.
var exactMatcherRE = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// CompileMatcher compiles a Claude Code matcher: "", "*" match every name;
// letters, digits, '_' and '|' only are an exact name or a '|'-list of
// exact names ("mcp__memory" matches no tool); anything else is a regular
// expression matched unanchored (Go's RE2: no lookaround, no
// backreferences).
func CompileMatcher(m string) (func(string) bool, error) {
	switch {
	case m == "" || m == "*":
		return func(string) bool { return true }, nil
	case exactMatcherRE.MatchString(m):
		names := strings.Split(m, "|")
		return func(s string) bool { return slices.Contains(names, s) }, nil
	}
	if why := unsupportedRegexp(m); why != "" {
		return nil, errors.New(why)
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, fmt.Errorf("not a regular expression: %w", err)
	}
	return re.MatchString, nil
}

// unsupportedRegexp names a JavaScript regular expression feature Go's
// RE2 lacks that m uses, "" if none.
func unsupportedRegexp(m string) string {
	for _, la := range []string{"(?=", "(?!", "(?<=", "(?<!"} {
		if strings.Contains(m, la) {
			return "Go's RE2 has no lookaround (" + la + "…); rewrite the matcher or use match { tools = [...] }"
		}
	}
	for i := 0; i+1 < len(m); i++ {
		if m[i] == '\\' {
			if m[i+1] >= '1' && m[i+1] <= '9' {
				return "Go's RE2 has no backreferences (\\" + string(m[i+1]) + "); rewrite the matcher or use match { tools = [...] }"
			}
			i++
		}
	}
	return ""
}

// ChecksApprovalHash is the approval hash of the project files' hook and
// interceptor blocks as written (env() calls unevaluated), "" when they
// have none. It is stored under the key "@checks" (ApprovalKeyChecks) of
// the approved project servers; any edit of those blocks changes it.
func (c *Config) ChecksApprovalHash() string { return c.checksHash }

// ProjectChecks returns the project files' hook and interceptor blocks as
// written (env() calls shown as the call), what `mcphost config approve
// @checks` shows and approves.
func (c *Config) ProjectChecks() ([]*Hook, []*Interceptor) {
	return c.writtenHooks, c.writtenInterceptors
}

// checksHash hashes the as-written hooks and interceptors of the project
// files: every field but where they are and whether they are approved.
func checksHash(hooks []*Hook, ics []*Interceptor) string {
	if len(hooks)+len(ics) == 0 {
		return ""
	}
	type entry struct {
		Hook        *Hook        `json:"hook,omitempty"`
		Interceptor *Interceptor `json:"interceptor,omitempty"`
	}
	var v []entry
	for _, h := range hooks {
		c := *h
		c.Origin, c.Dir, c.Approved = Origin{}, "", false
		v = append(v, entry{Hook: &c})
	}
	for _, ic := range ics {
		c := *ic
		c.Origin, c.Approved = Origin{}, false
		v = append(v, entry{Interceptor: &c})
	}
	return "sha256:" + hashJSON(v)
}

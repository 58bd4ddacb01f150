package config

import (
	"encoding/json"
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
	// Command (run by Shell) or URL (an HTTP hook: the input is POSTed);
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

// CompileMatcher compiles a Claude Code matcher: "", "*" match every name;
// letters, digits, '_' and '|' only are an exact name or a '|'-list of
// exact names; anything else is a regular expression matched unanchored.
func CompileMatcher(m string) (func(string) bool, error) {
	return func(string) bool { return true }, nil // TODO(WP1)
}

// ChecksApprovalHash is the approval hash of the project file's hook and
// interceptor blocks as written, "" when it has none. It is stored under
// the key "@checks" of the approved project servers.
func (c *Config) ChecksApprovalHash() string {
	return "" // TODO(WP1)
}

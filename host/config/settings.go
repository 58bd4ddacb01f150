package config

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zclconf/go-cty/cty"
)

// Settings are host-wide settings merged from every scope (higher scope wins
// per setting). A project file's settings block is ignored, with a warning
// per setting: a repository configures its own servers, never the host.
type Settings struct {
	ConnectTimeout time.Duration `json:"connect_timeout"`
	ToolTimeout    time.Duration `json:"tool_timeout,omitempty"`
	// MaxToolDuration caps a tool call whatever progress it reports (0: DefaultMaxToolDuration).
	MaxToolDuration   time.Duration `json:"max_tool_duration,omitempty"`
	ConcurrencyLocal  int           `json:"connect_concurrency_local"`
	ConcurrencyRemote int           `json:"connect_concurrency_remote"`
	OutputDir         string        `json:"output_dir,omitempty"`
	// MaxConcurrentCalls caps the requests in flight to one server (0: the default, 64).
	MaxConcurrentCalls int `json:"max_concurrent_calls,omitempty"`
	// MaxMessageBytes caps one message from a server (0: the default, 4 MiB).
	MaxMessageBytes int `json:"max_message_bytes,omitempty"`
	// PluginDir is where plugins are discovered (every executable file in it).
	PluginDir string `json:"plugin_dir,omitempty"`
	// PluginLock is the lock file pinning each plugin binary's sha256.
	PluginLock string `json:"plugin_lock,omitempty"`
	// ApproveAllProjectServers approves every project-scope server. It is only
	// honoured in the user, local, cli and managed scopes: a project cannot
	// approve itself.
	ApproveAllProjectServers bool `json:"approve_all_project_servers"`
	// ApprovedProjectServers maps a project server's name to the ApprovalHash
	// the user approved (user and local scopes only).
	ApprovedProjectServers map[string]string `json:"approved_project_servers,omitempty"`
	// SessionIdleTimeout ends a gateway HTTP session idle for this long.
	SessionIdleTimeout time.Duration `json:"session_idle_timeout"`
	// MaxSessions caps the gateway's concurrent HTTP sessions; a new session
	// over the cap is refused with a clear error.
	MaxSessions int `json:"max_sessions"`
	// DrainTimeout bounds graceful shutdown: calls still in flight after it
	// are answered with an error, then the process exits.
	DrainTimeout time.Duration `json:"drain_timeout"`
	// Naming is how the gateway names what it exposes: NamingPrefixed,
	// NamingConditional, NamingBare or NamingServer. Permission rules, pins and logs always
	// use the canonical mcp__SERVER__TOOL names.
	Naming string `json:"naming"`
	// ProtocolVersion (protocol_version) is the protocol version server
	// sessions are opened at: a gateway whose clients are all of one era
	// (2025-11-25, say) opens its upstream sessions in it, where servers
	// serve those clients as they would directly and every call is relayed
	// in its own version. "" (the default): the newest version both sides
	// speak — except on `serve` stdio, where it is the one client's.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// ReadyWhen (ready_when) is when the gateway reports itself ready
	// (/readyz): ReadyAll, ReadyAny (the default) or ReadyNone. Servers
	// that are disabled, not approved, blocked, or connected per user do
	// not count.
	ReadyWhen string `json:"ready_when"`
	// Roots (roots) are the roots the host answers a server's roots/list
	// with when no client's call is in flight to tie it to (a server that
	// asks at session start, or in the background): file:// URIs with
	// optional names. Servers are sent notifications/roots/list_changed
	// when a reload changes them.
	Roots []*mcp.Root `json:"roots,omitempty"`
	// ManagedHooksOnly (managed_hooks_only, honoured in the managed scope
	// only) drops every hook and interceptor block of the other scopes.
	ManagedHooksOnly bool `json:"managed_hooks_only,omitempty"`
}

// Naming modes of the gateway (settings { naming = "…" }, serve --naming).
const (
	// NamingPrefixed exposes every tool and prompt as mcp__SERVER__NAME.
	NamingPrefixed = "prefixed"
	// NamingConditional drops the prefix while exactly one server is
	// configured, and is NamingPrefixed otherwise.
	NamingConditional = "conditional"
	// NamingBare always exposes the servers' own names; a name offered by
	// more than one server is refused (reported), never last-wins.
	NamingBare = "bare"
	// NamingServer exposes every tool and prompt as SERVER__NAME: the
	// registry name without its mcp__ prefix, for clients that prefix
	// names themselves (mcp__CLIENTSIDE__SERVER__NAME).
	NamingServer = "server"
)

// NamingModes returns the valid naming modes.
func NamingModes() []string {
	return []string{NamingPrefixed, NamingConditional, NamingBare, NamingServer}
}

// Readiness modes of the gateway (settings { ready_when = "…" }).
const (
	// ReadyAll: ready when every server that counts is connected.
	ReadyAll = "all"
	// ReadyAny: ready when at least one server that counts is connected,
	// or none counts. The default.
	ReadyAny = "any"
	// ReadyNone: ready as soon as the gateway serves; servers do not count.
	ReadyNone = "none"
)

// ReadyWhenModes returns the valid values of ready_when.
func ReadyWhenModes() []string { return []string{ReadyAll, ReadyAny, ReadyNone} }

// RestartNeeded returns the names (as written in a settings block) of the
// settings that differ between s and o and that a running process cannot
// apply: the connection limits and message caps every connection was made
// with, the gateway's session limits and naming, the protocol version
// sessions were opened at, and where results are written and plugins are
// found. The others (timeouts, drain_timeout, ready_when, approvals) apply
// to a running process. nil when none differs.
func (s *Settings) RestartNeeded(o *Settings) []string {
	if o == nil {
		o = &Settings{}
	}
	var out []string
	for _, r := range restartOnly {
		if !r.same(s, o) {
			out = append(out, r.name)
		}
	}
	return out
}

// KeepRestartOnly returns s with the settings RestartNeeded names taken
// from old, the values a running process keeps until it restarts.
func (s *Settings) KeepRestartOnly(old *Settings) Settings {
	c := *s
	if old == nil {
		return c
	}
	for _, r := range restartOnly {
		r.keep(&c, old)
	}
	return c
}

// restartSetting is a setting a running process cannot change.
type restartSetting struct {
	name string
	same func(a, b *Settings) bool
	keep func(dst, src *Settings)
}

func restartAt[T comparable](name string, field func(*Settings) *T) restartSetting {
	return restartSetting{
		name: name,
		same: func(a, b *Settings) bool { return *field(a) == *field(b) },
		keep: func(dst, src *Settings) { *field(dst) = *field(src) },
	}
}

// restartOnly lists the settings RestartNeeded compares, in the order it
// names them.
var restartOnly = []restartSetting{
	restartAt("connect_concurrency_local", func(s *Settings) *int { return &s.ConcurrencyLocal }),
	restartAt("connect_concurrency_remote", func(s *Settings) *int { return &s.ConcurrencyRemote }),
	restartAt("max_message_bytes", func(s *Settings) *int { return &s.MaxMessageBytes }),
	restartAt("max_concurrent_calls", func(s *Settings) *int { return &s.MaxConcurrentCalls }),
	restartAt("session_idle_timeout", func(s *Settings) *time.Duration { return &s.SessionIdleTimeout }),
	restartAt("max_sessions", func(s *Settings) *int { return &s.MaxSessions }),
	restartAt("naming", func(s *Settings) *string { return &s.Naming }),
	restartAt("protocol_version", func(s *Settings) *string { return &s.ProtocolVersion }),
	restartAt("output_dir", func(s *Settings) *string { return &s.OutputDir }),
	restartAt("plugin_dir", func(s *Settings) *string { return &s.PluginDir }),
}

// settingsSchema lists the attributes of a settings block.
var settingsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "connect_timeout"},
		{Name: "tool_timeout"},
		{Name: "max_tool_duration"},
		{Name: "connect_concurrency_local"},
		{Name: "connect_concurrency_remote"},
		{Name: "output_dir"},
		{Name: "max_concurrent_calls"},
		{Name: "max_message_bytes"},
		{Name: "approve_all_project_servers"},
		{Name: "approved_project_servers"},
		{Name: "plugin_dir"},
		{Name: "plugin_lock"},
		{Name: "session_idle_timeout"},
		{Name: "max_sessions"},
		{Name: "drain_timeout"},
		{Name: "naming"},
		{Name: "protocol_version"},
		{Name: "ready_when"},
		{Name: "roots"},
		{Name: "managed_hooks_only"},
	},
}

// partialSettings holds the settings one file sets (nil = not set there).
type partialSettings struct {
	connectTimeout, toolTimeout         *time.Duration
	maxToolDuration                     *time.Duration
	concurrencyLocal, concurrencyRemote *int
	maxCalls, maxMessage                *int
	outputDir                           *string
	pluginDir, pluginLock               *string
	approveAll                          *bool
	defRange                            hcl.Range
	approved                            map[string]string
	sessionIdle, drain                  *time.Duration
	maxSessions                         *int
	naming                              *string
	protocolVersion                     *string
	readyWhen                           *string
	roots                               []*mcp.Root // nil: not set
	managedHooksOnly                    *bool
	managedHooksOnlyRange               hcl.Range
	// set lists the attributes the block sets, in source order, for the
	// warnings of a project-scope settings block (which is ignored).
	set []*hcl.Attribute
}

// decodeSettings decodes a settings block, each setting checked at its own
// range.
func decodeSettings(b *hcl.Block, ctx *hcl.EvalContext) (*partialSettings, hcl.Diagnostics) {
	content, diags := b.Body.Content(settingsSchema)
	diags = explainUnsupported(diags, settingsSchema)
	attrs := content.Attributes
	p := &partialSettings{defRange: b.DefRange}
	for _, a := range attrs {
		p.set = append(p.set, a)
	}
	sort.Slice(p.set, func(i, j int) bool { return p.set[i].NameRange.Start.Byte < p.set[j].NameRange.Start.Byte })
	for name, dst := range map[string]**time.Duration{"session_idle_timeout": &p.sessionIdle, "drain_timeout": &p.drain} {
		if a := attrs[name]; a != nil {
			v := decodeDuration(a, ctx, &diags)
			*dst = &v
		}
	}
	if a := attrs["connect_timeout"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.connectTimeout = &v
	}
	if a := attrs["tool_timeout"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.toolTimeout = &v
	}
	if a := attrs["max_tool_duration"]; a != nil {
		v := decodeDuration(a, ctx, &diags)
		p.maxToolDuration = &v
		if p.toolTimeout != nil {
			checkToolDurations(attrs, *p.toolTimeout, v, &diags)
		}
	}
	for _, lim := range []struct {
		name     string
		dst      **int
		min, max int
	}{
		{"connect_concurrency_local", &p.concurrencyLocal, 1, 1000},
		{"connect_concurrency_remote", &p.concurrencyRemote, 1, 1000},
		{"max_concurrent_calls", &p.maxCalls, 1, 10000},
		{"max_message_bytes", &p.maxMessage, 1024, 1 << 30},
		{"max_sessions", &p.maxSessions, 1, 1000000},
	} {
		a := attrs[lim.name]
		if a == nil {
			continue
		}
		var v int
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if v < lim.min || v > lim.max {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Value out of range", "%s must be between %d and %d, got %d.", lim.name, lim.min, lim.max, v))
			continue
		}
		*lim.dst = &v
	}
	if a := attrs["output_dir"]; a != nil {
		var v string
		diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
		p.outputDir = &v
	}
	for name, dst := range map[string]**string{"plugin_dir": &p.pluginDir, "plugin_lock": &p.pluginLock} {
		if a := attrs[name]; a != nil {
			var v string
			diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
			v = resolvePath(a.Expr.Range().Filename, v)
			*dst = &v
		}
	}
	if a := attrs["naming"]; a != nil {
		var v string
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
		} else if !slices.Contains(NamingModes(), v) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid naming",
				"naming must be one of %s, got %q: prefixed exposes mcp__SERVER__TOOL, conditional drops the prefix while exactly one server is configured, bare always drops it (and refuses collisions), server exposes SERVER__TOOL (no mcp__ prefix).",
				strings.Join(NamingModes(), ", "), v))
		} else {
			p.naming = &v
		}
	}
	if a := attrs["protocol_version"]; a != nil {
		var v string
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
		} else if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid protocol_version",
				"protocol_version must be one of %s, got %q: the protocol version server sessions are opened at (leave it out for the newest both sides speak).",
				strings.Join(mcp.SupportedProtocolVersions(), ", "), v))
		} else {
			p.protocolVersion = &v
		}
	}
	if a := attrs["ready_when"]; a != nil {
		var v string
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
		} else if !slices.Contains(ReadyWhenModes(), v) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid ready_when",
				"ready_when must be one of %s, got %q: the gateway is ready (/readyz) when all its servers are connected, any one of them (the default), or as soon as it serves (none).",
				strings.Join(ReadyWhenModes(), ", "), v))
		} else {
			p.readyWhen = &v
		}
	}
	if a := attrs["roots"]; a != nil {
		p.roots = decodeRoots(a, ctx, &diags)
	}
	if a := attrs["managed_hooks_only"]; a != nil {
		var v bool
		if d := decodeExpr(a.Expr, ctx, &v); d.HasErrors() {
			diags = append(diags, d...)
		} else {
			p.managedHooksOnly, p.managedHooksOnlyRange = &v, a.NameRange
		}
	}
	if a := attrs["approve_all_project_servers"]; a != nil {
		var v bool
		diags = append(diags, decodeExpr(a.Expr, ctx, &v)...)
		p.approveAll = &v
	}
	if a := attrs["approved_project_servers"]; a != nil {
		diags = append(diags, decodeExpr(a.Expr, ctx, &p.approved)...)
		for name, h := range p.approved {
			if !validApprovalHash(h) {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid approval",
					"The approval for %q must be the \"sha256:<64 hex digits>\" hash that `mcphost config approve %s` writes, got %q.", name, name, h))
			}
		}
	}
	return p, diags
}

func decodeDuration(a *hcl.Attribute, ctx *hcl.EvalContext, diags *hcl.Diagnostics) time.Duration {
	if a == nil {
		return 0
	}
	var s string
	if d := decodeExpr(a.Expr, ctx, &s); d.HasErrors() {
		*diags = append(*diags, d...)
		return 0
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		*diags = append(*diags, errorf(a.Expr.Range().Ptr(), "Invalid duration",
			"%q is not a positive duration; write a number with a unit, e.g. \"30s\", \"2m\", \"1h30m\".", s))
		return 0
	}
	return v
}

// mergeSettings applies each file's settings in precedence order.
func mergeSettings(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	s := Settings{
		ConnectTimeout:     DefaultConnectTimeout,
		ConcurrencyLocal:   DefaultConcurrencyLocal,
		ConcurrencyRemote:  DefaultConcurrencyRemote,
		SessionIdleTimeout: DefaultSessionIdleTimeout,
		MaxSessions:        DefaultMaxSessions,
		DrainTimeout:       DefaultDrainTimeout,
		Naming:             NamingPrefixed,
		ReadyWhen:          ReadyAny,
	}
	for _, f := range files {
		p := f.settings
		if p == nil {
			continue
		}
		if f.scope == ScopeProject {
			// Settings are host-wide: they govern the user's own servers, where
			// plugins come from, where results are written and every limit. A
			// repository configures its own servers (each server block has its
			// own timeouts), never the host.
			for _, a := range p.set {
				rng := a.NameRange
				diags = append(diags, warnf(&rng, "Ignored in project scope", "%s", projectSettingReason(a.Name)))
			}
			continue
		}
		if d := checkManagedHooksOnly(f.scope, p); d != nil {
			diags = append(diags, d...)
		} else if p.managedHooksOnly != nil {
			s.ManagedHooksOnly = *p.managedHooksOnly
		}
		if p.sessionIdle != nil && *p.sessionIdle > 0 {
			s.SessionIdleTimeout = *p.sessionIdle
		}
		if p.drain != nil && *p.drain > 0 {
			s.DrainTimeout = *p.drain
		}
		if p.maxSessions != nil {
			s.MaxSessions = *p.maxSessions
		}
		if p.naming != nil {
			s.Naming = *p.naming
		}
		if p.protocolVersion != nil {
			s.ProtocolVersion = *p.protocolVersion
		}
		if p.readyWhen != nil {
			s.ReadyWhen = *p.readyWhen
		}
		if p.roots != nil {
			s.Roots = p.roots
		}
		if p.connectTimeout != nil && *p.connectTimeout > 0 {
			s.ConnectTimeout = *p.connectTimeout
		}
		if p.toolTimeout != nil && *p.toolTimeout > 0 {
			s.ToolTimeout = *p.toolTimeout
		}
		if p.maxToolDuration != nil && *p.maxToolDuration > 0 {
			s.MaxToolDuration = *p.maxToolDuration
		}
		if p.concurrencyLocal != nil {
			s.ConcurrencyLocal = *p.concurrencyLocal
		}
		if p.concurrencyRemote != nil {
			s.ConcurrencyRemote = *p.concurrencyRemote
		}
		if p.maxCalls != nil {
			s.MaxConcurrentCalls = *p.maxCalls
		}
		if p.maxMessage != nil {
			s.MaxMessageBytes = *p.maxMessage
		}
		if p.pluginDir != nil {
			s.PluginDir = *p.pluginDir
		}
		if p.pluginLock != nil {
			s.PluginLock = *p.pluginLock
		}
		if p.outputDir != nil {
			s.OutputDir = *p.outputDir
		}
		if p.approveAll != nil {
			s.ApproveAllProjectServers = *p.approveAll
		}
		for name, h := range p.approved {
			if s.ApprovedProjectServers == nil {
				s.ApprovedProjectServers = map[string]string{}
			}
			s.ApprovedProjectServers[name] = h
		}
	}
	cfg.Settings = s
	return diags
}

// projectSettingReason says why a setting in a project file is ignored.
func projectSettingReason(name string) string {
	why := map[string]string{
		"plugin_dir":                  "it would make mcphost run the repository's own programs as plugins",
		"plugin_lock":                 "it would make mcphost trust the repository's own pins for plugins",
		"output_dir":                  "it would send large tool results, which may hold secrets, into a directory the repository chooses",
		"approve_all_project_servers": "a project cannot approve its own servers",
		"approved_project_servers":    "a project cannot approve its own servers",
		"max_message_bytes":           "it is a host-wide limit on every server's messages",
		"max_concurrent_calls":        "it is a host-wide limit on every server",
		"connect_concurrency_local":   "it is a host-wide limit",
		"connect_concurrency_remote":  "it is a host-wide limit",
		"connect_timeout":             "it is the default for every server; set connect_timeout in the project's own server blocks",
		"tool_timeout":                "it is the default for every server; set tool_timeout in the project's own server blocks",
		"max_tool_duration":           "it is the default for every server; set max_tool_duration in the project's own server blocks",
		"session_idle_timeout":        "it is a limit of the gateway",
		"max_sessions":                "it is a limit of the gateway",
		"drain_timeout":               "it governs the gateway's shutdown",
		"naming":                      "it decides the names the gateway exposes for every server",
		"protocol_version":            "it decides how the host speaks to every server, the user's own included",
		"ready_when":                  "it decides when the gateway reports itself ready",
		"roots":                       "it decides which directories every server is told of",
		"managed_hooks_only":          "it is honoured in the managed file only",
	}[name]
	if why == "" {
		why = "settings are host-wide"
	}
	return fmt.Sprintf("%s is only honoured in the user, local, cli and managed scopes: %s.", name, why)
}

// decodeRoots decodes roots = [...]: each element a file:// URI string, or
// an object { uri = "file:///…", name = "…" }. Each bad element is
// reported at its own range. It returns a non-nil slice (empty when
// written empty).
func decodeRoots(a *hcl.Attribute, ctx *hcl.EvalContext, diags *hcl.Diagnostics) []*mcp.Root {
	roots := []*mcp.Root{}
	v, d := a.Expr.Value(ctx)
	if d.HasErrors() {
		*diags = append(*diags, d...)
		return roots
	}
	rng := a.Expr.Range()
	var elems []hcl.Expression
	if tc, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		for _, e := range tc.Exprs {
			elems = append(elems, e)
		}
	}
	if v.IsNull() || !v.IsKnown() || !(v.Type().IsTupleType() || v.Type().IsListType()) {
		*diags = append(*diags, errorf(&rng, "Invalid roots",
			`roots must be a list of file:// URIs, each a string or an object { uri = "file:///…", name = "…" }, e.g. roots = ["file:///home/me/src"].`))
		return roots
	}
	seen := map[string]bool{}
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		erng := rng
		if i < len(elems) {
			erng = elems[i].Range()
		}
		r, why := rootOf(ev)
		if why == "" && seen[r.URI] {
			why = fmt.Sprintf("%s is listed twice", r.URI)
		}
		if why != "" {
			*diags = append(*diags, errorf(&erng, "Invalid root", "%s; a root is a file:// URI with an absolute path, as a string or { uri = \"file:///…\", name = \"…\" }.", why))
			continue
		}
		seen[r.URI] = true
		roots = append(roots, r)
	}
	return roots
}

// rootOf is one element of roots, or why it is not a root.
func rootOf(v cty.Value) (*mcp.Root, string) {
	if v.IsNull() || !v.IsKnown() {
		return nil, "a root must be a string or an object"
	}
	r := &mcp.Root{}
	switch t := v.Type(); {
	case t == cty.String:
		r.URI = v.AsString()
	case t.IsObjectType() || t.IsMapType():
		for name, f := range v.AsValueMap() {
			if f.IsNull() || !f.IsKnown() || f.Type() != cty.String {
				return nil, fmt.Sprintf("%s must be a string", name)
			}
			switch name {
			case "uri":
				r.URI = f.AsString()
			case "name":
				r.Name = f.AsString()
			default:
				return nil, fmt.Sprintf("unknown member %q (a root has uri and name)", name)
			}
		}
		if r.URI == "" {
			return nil, "the root has no uri"
		}
	default:
		return nil, "a root must be a string or an object, got " + t.FriendlyName()
	}
	u, err := url.Parse(r.URI)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%q is not a URI: %v", r.URI, err)
	case u.Scheme != "file":
		return nil, fmt.Sprintf("%q is not a file:// URI", r.URI)
	case u.Host != "" && u.Host != "localhost", !strings.HasPrefix(u.Path, "/"), u.RawQuery != "", u.Fragment != "":
		return nil, fmt.Sprintf("%q is not a file:// URI of an absolute local path (file:///path)", r.URI)
	}
	return r, ""
}

package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/mcphost/mcphost/host/permissions"
)

// hookBlock is the body of a hook "EVENT" block as written. The order of
// its fields is the order diagnostics list what is allowed in.
type hookBlock struct {
	Matcher        string            `hcl:"matcher,optional"`
	Command        string            `hcl:"command,optional"`
	Shell          string            `hcl:"shell,optional"`
	Env            map[string]string `hcl:"env,optional"`
	InheritEnv     []string          `hcl:"inherit_env,optional"`
	URL            string            `hcl:"url,optional"`
	Headers        map[string]string `hcl:"headers,optional"`
	AllowedEnvVars []string          `hcl:"allowed_env_vars,optional"`
	Timeout        string            `hcl:"timeout,optional"`
	FailOpen       bool              `hcl:"fail_open,optional"`
	Mode           string            `hcl:"mode,optional"`
	Match          []*rawBlock       `hcl:"match,block"`
}

// interceptorBlock is the body of an interceptor "NAME" block as written.
type interceptorBlock struct {
	Plugin   string      `hcl:"plugin,optional"`
	Server   string      `hcl:"server,optional"`
	Builtin  string      `hcl:"builtin,optional"`
	Options  cty.Value   `hcl:"options,optional"`
	Names    []string    `hcl:"names,optional"`
	Protocol string      `hcl:"protocol,optional"`
	Action   string      `hcl:"action,optional"`
	Events   []string    `hcl:"events,optional"`
	Phases   []string    `hcl:"phases,optional"`
	Mode     string      `hcl:"mode,optional"`
	FailOpen bool        `hcl:"fail_open,optional"`
	Timeout  string      `hcl:"timeout,optional"`
	Match    []*rawBlock `hcl:"match,block"`
}

// rawBlock is a nested block whose body is decoded by a decoder of its own
// (a match block, its principals block).
type rawBlock struct {
	Body     hcl.Body  `hcl:",remain"`
	DefRange hcl.Range `hcl:",def_range"`
}

// matchBlock is the body of a match block.
type matchBlock struct {
	Servers    []string    `hcl:"servers,optional"`
	Tools      []string    `hcl:"tools,optional"`
	Principals []*rawBlock `hcl:"principals,block"`
}

// principalsBlock is the body of a match block's principals block.
type principalsBlock struct {
	Groups   []string `hcl:"groups,optional"`
	Subjects []string `hcl:"subjects,optional"`
}

// hookShells are the values of a hook's shell attribute.
var hookShells = []string{"sh", "bash", "powershell"}

// decodeHook decodes a hook "EVENT" block declared in path (scope); dir is
// its working directory and CLAUDE_PROJECT_DIR. written says ctx is
// writtenContext (a project block before approval): a url from env() is not
// checked yet. nil when the block has errors.
func decodeHook(b *hcl.Block, path string, scope Scope, dir string, ctx *hcl.EvalContext, written bool) (*Hook, hcl.Diagnostics) {
	event := b.Labels[0]
	var diags hcl.Diagnostics
	if !slices.Contains(HookEvents, event) {
		detail := fmt.Sprintf("%q is not a hook event. Events: %s.", event, strings.Join(HookEvents, ", "))
		if s := suggestFold(event, HookEvents); s != "" {
			detail += fmt.Sprintf(" Did you mean %q?", s)
		}
		diags = append(diags, errorf(&b.LabelRanges[0], "Unknown hook event", "%s", detail))
	}
	var hb hookBlock
	attrs, d := decodeBody(b.Body, ctx, &hb)
	diags = append(diags, d...)
	h := &Hook{
		Event: event, Matcher: hb.Matcher, Command: hb.Command, Shell: hb.Shell, URL: hb.URL,
		Env: hb.Env, InheritEnv: hb.InheritEnv, Headers: hb.Headers, AllowedEnvVars: hb.AllowedEnvVars,
		FailOpen: hb.FailOpen, Mode: hb.Mode, Dir: dir,
		Origin: Origin{Scope: scope, File: path, Range: b.DefRange},
	}
	if a := attrs["matcher"]; a != nil {
		if _, err := CompileMatcher(hb.Matcher); err != nil {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid matcher",
				"matcher %q: %v. A matcher is \"*\" (every name), a name or names joined by '|' (\"mcp__github__create_issue|mcp__github__get_issue\"), or a regular expression (\"mcp__github__.*\").", hb.Matcher, err))
		}
	}
	h.Timeout = parseDuration(attrs["timeout"], hb.Timeout, &diags)
	diags = append(diags, checkMode(attrs["mode"], hb.Mode)...)
	m, d := decodeMatch(hb.Match, ctx)
	diags = append(diags, d...)
	h.Match = m
	if m != nil && len(m.Tools) > 0 && strings.HasPrefix(event, "Elicitation") {
		diags = append(diags, errorf(&hb.Match[0].DefRange, "match.tools not valid for this hook",
			"An %s hook is about a server's question, not a tool call: its matcher and match.servers select the server; leave tools out.", event))
	}
	if diags.HasErrors() {
		return nil, diags
	}

	cmd, web := attrs["command"], attrs["url"]
	notFor := func(name, kind, use string) {
		if a := attrs[name]; a != nil {
			diags = append(diags, errorf(&a.NameRange, "Argument not valid for this hook",
				"%q is not used by %s hook; %s.", name, kind, use))
		}
	}
	switch {
	case cmd != nil && web != nil:
		diags = append(diags, errorf(&web.NameRange, "Both command and url",
			"A hook runs a command or POSTs its input to a url, not both (command is at %s).", cmd.NameRange))
	case cmd == nil && web == nil:
		diags = append(diags, errorf(&b.DefRange, "Missing command or url",
			"A hook needs a command, e.g. command = \"python3 /opt/hooks/check.py\" (its input is JSON on stdin), or a url, e.g. url = \"https://hooks.example.com/pre\" (its input is POSTed)."))
	case cmd != nil:
		if strings.TrimSpace(h.Command) == "" {
			diags = append(diags, errorf(cmd.Expr.Range().Ptr(), "Missing command", "command must not be empty."))
		}
		notFor("headers", "a command", "it applies to HTTP hooks (url = …)")
		notFor("allowed_env_vars", "a command", "it applies to HTTP hooks (url = …); a command hook gets env and inherit_env")
		if a := attrs["shell"]; a != nil && !slices.Contains(hookShells, h.Shell) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid shell",
				"shell must be one of %s, got %q (leave it out for bash, as Claude Code runs hooks: sh where bash is absent, cmd on Windows).", strings.Join(hookShells, ", "), h.Shell))
		}
		for k := range h.Env {
			if !envNameRE.MatchString(k) {
				diags = append(diags, errorf(attrs["env"].Expr.Range().Ptr(), "Invalid environment variable name",
					"%q is not a valid environment variable name (letters, digits and '_', not starting with a digit).", k))
			}
		}
		diags = append(diags, checkEnvNames(attrs["inherit_env"], h.InheritEnv)...)
	default:
		notFor("command", "an HTTP", "")
		notFor("shell", "an HTTP", "it applies to command hooks")
		notFor("env", "an HTTP", "it applies to command hooks; an HTTP hook's headers interpolate the variables allowed_env_vars names")
		notFor("inherit_env", "an HTTP", "it applies to command hooks; an HTTP hook's headers interpolate the variables allowed_env_vars names")
		if msg := checkHookURL(h.URL); msg != "" && !(written && FromEnv(h.URL)) {
			diags = append(diags, errorf(web.Expr.Range().Ptr(), "Invalid url", "%s", msg))
		}
		for k := range h.Headers {
			if !headerNameRE.MatchString(k) {
				diags = append(diags, errorf(attrs["headers"].Expr.Range().Ptr(), "Invalid header name", "%q is not a valid HTTP header name.", k))
			}
		}
		diags = append(diags, checkEnvNames(attrs["allowed_env_vars"], h.AllowedEnvVars)...)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return h, diags
}

// decodeInterceptor decodes an interceptor "NAME" block declared in path
// (scope) and checks what it names against cfg: a locked plugin that
// provides an interceptor (and its options against the plugin's schema),
// or a server. nil when the block has errors.
func decodeInterceptor(b *hcl.Block, path string, scope Scope, ctx *hcl.EvalContext, cfg *Config, unlocked []string) (*Interceptor, hcl.Diagnostics) {
	name := b.Labels[0]
	var diags hcl.Diagnostics
	if !serverNameRE.MatchString(name) {
		diags = append(diags, errorf(&b.LabelRanges[0], "Invalid interceptor name",
			"Interceptor name %q is not allowed: use letters and digits, optionally joined by single '-' or '_' (e.g. \"guard\", \"pii-check\").", name))
	}
	var ib interceptorBlock
	attrs, d := decodeBody(b.Body, ctx, &ib)
	diags = append(diags, d...)
	ic := &Interceptor{
		Name: name, Plugin: ib.Plugin, Server: ib.Server, Builtin: ib.Builtin, Action: ib.Action,
		Protocol: ib.Protocol, Names: ib.Names, Events: ib.Events, Phases: ib.Phases,
		Mode: ib.Mode, FailOpen: ib.FailOpen,
		Origin: Origin{Scope: scope, File: path, Range: b.DefRange},
	}
	ic.Timeout = parseDuration(attrs["timeout"], ib.Timeout, &diags)
	diags = append(diags, checkMode(attrs["mode"], ib.Mode)...)
	m, d := decodeMatch(ib.Match, ctx)
	diags = append(diags, d...)
	ic.Match = m
	if diags.HasErrors() {
		return nil, diags
	}

	var kinds []*hcl.Attribute
	for _, k := range []string{"plugin", "server", "builtin"} {
		if a := attrs[k]; a != nil {
			kinds = append(kinds, a)
		}
	}
	switch len(kinds) {
	case 0:
		return nil, append(diags, errorf(&b.DefRange, "Missing interceptor kind",
			"An interceptor names exactly one of plugin (an interceptor plugin, e.g. plugin = \"guard-regex\"), server (a SEP-2624 interceptor server block) or builtin (%s).", strings.Join(Builtins, ", ")))
	case 1:
	default:
		return nil, append(diags, errorf(&kinds[1].NameRange, "Two interceptor kinds",
			"An interceptor names exactly one of plugin, server or builtin; %s is set at %s too.", kinds[0].Name, kinds[0].NameRange))
	}
	kind := kinds[0].Name
	if v := map[string]string{"plugin": ic.Plugin, "server": ic.Server, "builtin": ic.Builtin}[kind]; strings.TrimSpace(v) == "" {
		return nil, append(diags, errorf(kinds[0].Expr.Range().Ptr(), "Empty "+kind, "%s must name a%s.", kind,
			map[string]string{"plugin": " plugin", "server": " server block", "builtin": " built-in: " + strings.Join(Builtins, ", ")}[kind]))
	}
	onlyWith := func(attr, with string) {
		if a := attrs[attr]; a != nil {
			diags = append(diags, errorf(&a.NameRange, "Argument not valid for this interceptor", "%q applies only to an interceptor with %s.", attr, with))
		}
	}
	if kind != "builtin" || ic.Builtin != BuiltinSecrets {
		onlyWith("action", "builtin = \"secrets\"")
	}
	if kind != "server" {
		onlyWith("names", "server (it selects the server's interceptors)")
		onlyWith("protocol", "server")
	}
	if kind != "plugin" {
		onlyWith("options", "plugin (a plugin's options)")
	}

	// What it checks: the allowed and default events and phases per kind.
	events, phases := InterceptorEvents, []string{PhaseRequest, PhaseResponse}
	defPhases := phases
	switch kind {
	case "builtin":
		a := attrs["builtin"]
		if !slices.Contains(Builtins, ic.Builtin) {
			detail := fmt.Sprintf("%q is not a built-in interceptor. Built-ins: %s.", ic.Builtin, strings.Join(Builtins, ", "))
			if s := suggest(ic.Builtin, Builtins); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			return nil, append(diags, errorf(a.Expr.Range().Ptr(), "Unknown builtin", "%s", detail))
		}
		events = []string{"tools/call"}
		switch ic.Builtin {
		case BuiltinValidateInput:
			phases = []string{PhaseRequest}
		case BuiltinValidateOutput:
			phases = []string{PhaseResponse}
		}
		defPhases = phases
		if a := attrs["action"]; a != nil && ic.Action != "block" && ic.Action != "redact" {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid action",
				"action must be \"block\" (refuse a call whose arguments or result hold a secret; the default) or \"redact\" (replace each with [REDACTED]), got %q.", ic.Action))
		}
	case "server":
		if a := attrs["protocol"]; a != nil && ic.Protocol != SEPRevision {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Unsupported protocol",
				"protocol %q is not implemented; the one revision of SEP-2624 (MCP interceptors) implemented is %q (leave protocol out for it).", ic.Protocol, SEPRevision))
		}
		if a := attrs["names"]; a != nil && (len(ic.Names) == 0 || slices.Contains(ic.Names, "")) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid names", "names lists the server's interceptors to run (as its interceptors/list names them); leave it out for all of them."))
		}
		diags = append(diags, checkInterceptorServer(cfg, ic, attrs["server"])...)
	default:
		diags = append(diags, checkInterceptorPlugin(cfg, ic, attrs["plugin"], attrs["options"], ib.Options, ctx, unlocked)...)
	}
	if ic.Events == nil {
		ic.Events = []string{"tools/call"}
	} else {
		diags = append(diags, checkListed(attrs["events"], ic.Events, events, "event", interceptorKind(ic))...)
	}
	if ic.Phases == nil {
		ic.Phases = slices.Clone(defPhases)
	} else {
		diags = append(diags, checkListed(attrs["phases"], ic.Phases, phases, "phase", interceptorKind(ic))...)
	}
	if a := attrs["phases"]; a != nil && !diags.HasErrors() && slices.Equal(ic.Phases, []string{PhaseRequest}) &&
		!slices.ContainsFunc(ic.Events, func(e string) bool { return !strings.HasSuffix(e, "/list") }) {
		diags = append(diags, errorf(a.Expr.Range().Ptr(), "Nothing to check",
			"A list (%s) is checked in its response only (filtered), so an interceptor of list events with phases = [\"request\"] would check nothing; use phases = [\"response\"].", strings.Join(ic.Events, ", ")))
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return ic, diags
}

// interceptorKind describes an interceptor's kind for diagnostics.
func interceptorKind(ic *Interceptor) string {
	switch {
	case ic.Builtin != "":
		return fmt.Sprintf("the %s built-in", ic.Builtin)
	case ic.Server != "":
		return "a server interceptor"
	}
	return "a plugin interceptor"
}

// checkListed checks a list attribute (events, phases): not empty, each
// value allowed, none twice.
func checkListed(a *hcl.Attribute, got, allowed []string, what, kind string) hcl.Diagnostics {
	if len(got) == 0 {
		return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "Empty "+what+"s", "%ss must list at least one of %s (leave it out for the default).", what, strings.Join(allowed, ", "))}
	}
	var diags hcl.Diagnostics
	for i, v := range got {
		switch {
		case !slices.Contains(allowed, v):
			diags = append(diags, errorf(elemRange(a, i), "Invalid "+what,
				"%q is not one of the %ss %s can check. Allowed: %s.", v, what, kind, strings.Join(allowed, ", ")))
		case slices.Index(got, v) < i:
			diags = append(diags, errorf(elemRange(a, i), "Duplicate "+what, "%q is listed twice.", v))
		}
	}
	return diags
}

// elemRange is the range of element i of a list attribute as written,
// or the whole value's.
func elemRange(a *hcl.Attribute, i int) *hcl.Range {
	if elems, d := hcl.ExprList(a.Expr); !d.HasErrors() && i < len(elems) {
		return elems[i].Range().Ptr()
	}
	return a.Expr.Range().Ptr()
}

// checkInterceptorServer checks that an interceptor's server names a
// configured server block.
func checkInterceptorServer(cfg *Config, ic *Interceptor, a *hcl.Attribute) hcl.Diagnostics {
	if s := cfg.Server(ic.Server); s != nil {
		why := ""
		switch {
		case s.Disabled:
			why = "is disabled"
		case s.BlockedBy != "":
			why = "is blocked by the managed policy (" + s.BlockedBy + ")"
		case !s.Approved:
			why = "is a project server not approved yet"
		}
		if why == "" {
			return nil
		}
		return hcl.Diagnostics{warnf(a.Expr.Range().Ptr(), "Interceptor server not connected",
			"Server %q %s, so it is not connected: every call interceptor %q checks fails (closed, unless fail_open = true).", s.Name, why, ic.Name)}
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	detail := fmt.Sprintf("No server named %q is configured; an interceptor's server names a server block (a SEP-2624 interceptor server).", ic.Server)
	if s := suggest(ic.Server, names); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "Unknown server", "%s", detail)}
}

// interceptorComponent is the configuration schema of a locked plugin's
// interceptor, nil if it reported none.
func interceptorComponent(l *LockedPlugin) *LockedComponent {
	for _, c := range l.Components {
		if c.Kind == "interceptor" {
			return c
		}
	}
	return nil
}

// checkInterceptorPlugin checks an interceptor's plugin: a locked plugin
// that provides an interceptor; its options an object that fits the
// schema the plugin reported. It sets ic.Options.
func checkInterceptorPlugin(cfg *Config, ic *Interceptor, a, optsAttr *hcl.Attribute, opts cty.Value, ctx *hcl.EvalContext, unlocked []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if optsAttr != nil {
		if !opts.Type().IsObjectType() && !opts.Type().IsMapType() {
			return hcl.Diagnostics{errorf(optsAttr.Expr.Range().Ptr(), "Invalid options", "options must be an object, e.g. { deny_arguments = [\"(?i)drop\\\\s+table\"] }.")}
		}
		b, err := ctyjson.Marshal(opts, opts.Type())
		if err != nil {
			return hcl.Diagnostics{errorf(optsAttr.Expr.Range().Ptr(), "Invalid options", "%v", err)}
		}
		ic.Options = b
	}
	p := cfg.Plugin(ic.Plugin)
	var comp *LockedComponent
	if p != nil && p.Locked != nil {
		comp = interceptorComponent(p.Locked)
	}
	if p == nil || p.Locked == nil || (!p.Locked.Interceptor && comp == nil) {
		var available []string
		for _, pl := range cfg.Plugins {
			if pl.Locked != nil && (pl.Locked.Interceptor || interceptorComponent(pl.Locked) != nil) {
				available = append(available, pl.Name)
			}
		}
		var detail string
		switch {
		case p == nil:
			detail = fmt.Sprintf("No plugin named %q is configured or discovered.", ic.Plugin)
		case p.Locked == nil:
			detail = fmt.Sprintf("Plugin %q is not in the lock file, so what it provides is not known; run `mcphost plugins lock`.", ic.Plugin)
		default:
			detail = fmt.Sprintf("Plugin %q provides no interceptor (it provides %s).", ic.Plugin, strings.Join(providedBy(p.Locked), ", "))
		}
		if len(available) > 0 {
			detail += " Plugins that provide an interceptor: " + strings.Join(available, ", ") + "."
		} else {
			detail += " No plugin provides an interceptor."
		}
		if len(unlocked) > 0 && (p == nil || p.Locked != nil) {
			detail += fmt.Sprintf(" Plugins whose components are not known yet: %s; run `mcphost plugins lock`.", strings.Join(unlocked, ", "))
		}
		return append(diags, errorf(a.Expr.Range().Ptr(), "Unknown interceptor plugin", "%s", detail))
	}
	if comp == nil {
		return diags
	}
	what := fmt.Sprintf("%s interceptor (plugin %s)", comp.Name, p.Name)
	if optsAttr != nil {
		return append(diags, checkOptions(optsAttr, ctx, comp, what)...)
	}
	for _, at := range comp.Attributes {
		if at.Required {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Missing option", "The %s requires option %q (options = { %s = … }).", what, at.Name, at.Name))
		}
	}
	return diags
}

// providedBy lists what a locked plugin provides, for diagnostics.
func providedBy(l *LockedPlugin) []string {
	var out []string
	for _, t := range l.Transports {
		out = append(out, "transport "+t)
	}
	for _, s := range l.AuthSchemes {
		out = append(out, "auth scheme "+s)
	}
	if l.Headers {
		out = append(out, "a headers helper")
	}
	if len(out) == 0 {
		out = []string{"nothing"}
	}
	return out
}

// checkMode checks a mode attribute: enforce or audit.
func checkMode(a *hcl.Attribute, mode string) hcl.Diagnostics {
	if a == nil || mode == ModeEnforce || mode == ModeAudit {
		return nil
	}
	return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "Invalid mode",
		"mode must be \"enforce\" (the default) or \"audit\" (run, log what it would do, change nothing), got %q.", mode)}
}

// checkEnvNames checks a list of environment variable names.
func checkEnvNames(a *hcl.Attribute, names []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for i, k := range names {
		if !envNameRE.MatchString(k) {
			diags = append(diags, errorf(elemRange(a, i), "Invalid environment variable name",
				"%q is not a valid environment variable name (letters, digits and '_', not starting with a digit).", k))
		}
	}
	return diags
}

// checkHookURL validates an HTTP hook's url; "" means valid.
func checkHookURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL: %v.", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q has scheme %q; an HTTP hook's url is http or https.", raw, u.Scheme)
	case u.Host == "":
		return fmt.Sprintf("%q has no host.", raw)
	case u.User != nil:
		return "credentials in the url are not allowed; use headers (with allowed_env_vars)."
	}
	return ""
}

// decodeMatch decodes a hook's or interceptor's match blocks (at most
// one): server names, permission patterns, principals.
func decodeMatch(blocks []*rawBlock, ctx *hcl.EvalContext) (*CheckMatch, hcl.Diagnostics) {
	if len(blocks) == 0 {
		return nil, nil
	}
	var diags hcl.Diagnostics
	for _, extra := range blocks[1:] {
		diags = append(diags, errorf(&extra.DefRange, "Duplicate match block", "A hook or interceptor has at most one match block; the first is at %s.", blocks[0].DefRange))
	}
	var mb matchBlock
	attrs, d := decodeBody(blocks[0].Body, ctx, &mb)
	diags = append(diags, d...)
	m := &CheckMatch{Servers: mb.Servers, Tools: mb.Tools}
	for i, s := range mb.Servers {
		if !ValidServerName(s) {
			diags = append(diags, errorf(elemRange(attrs["servers"], i), "Invalid server name", "%q is not a server name; servers lists server names as written in server blocks.", s))
		}
	}
	for i, p := range mb.Tools {
		if err := permissions.ValidatePattern(permissions.Deny, p); err != nil {
			diags = append(diags, errorf(elemRange(attrs["tools"], i), "Invalid tool pattern", "%s.", err))
		}
	}
	for i, pb := range mb.Principals {
		if i > 0 {
			diags = append(diags, errorf(&pb.DefRange, "Duplicate principals block", "A match block has at most one principals block; the first is at %s.", mb.Principals[0].DefRange))
			continue
		}
		var pr principalsBlock
		pattrs, d := decodeBody(pb.Body, ctx, &pr)
		diags = append(diags, d...)
		for name, list := range map[string][]string{"groups": pr.Groups, "subjects": pr.Subjects} {
			if slices.Contains(list, "") {
				diags = append(diags, errorf(pattrs[name].Expr.Range().Ptr(), "Empty "+name[:len(name)-1], "%s may not contain an empty string.", name))
			}
		}
		if len(pr.Groups) == 0 && len(pr.Subjects) == 0 && !d.HasErrors() {
			diags = append(diags, errorf(&pb.DefRange, "Empty principals",
				"principals names whom the check applies to: set groups = [\"eng\"] (the token's groups claim) or subjects = [\"…\"] (its sub claim)."))
		}
		m.Principals = &permissions.Principals{Groups: pr.Groups, Subjects: pr.Subjects}
	}
	return m, diags
}

// suggestFold is suggest that also finds a name written in another case.
func suggestFold(given string, allowed []string) string {
	for _, a := range allowed {
		if strings.EqualFold(a, given) {
			return a
		}
	}
	return suggest(given, allowed)
}

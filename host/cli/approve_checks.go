package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// describeChecksForApproval prints everything an approval of a project's
// hooks and interceptors (@checks) covers: each block, where it is, what it
// runs or where it posts, and what it checks. Values come as written: an
// env() call is shown as the call.
func describeChecksForApproval(w io.Writer, hooks []*config.Hook, ics []*config.Interceptor) {
	fmt.Fprintln(w, "Hooks and interceptors of the project (they run on every call they match):")
	for _, h := range hooks {
		fmt.Fprintf(w, "hook %q at %s:%d:\n", h.Event, h.Origin.File, h.Origin.Range.Start.Line)
		if h.Matcher != "" {
			fmt.Fprintf(w, "  matcher: %q\n", h.Matcher)
		}
		if h.Command != "" {
			shell := h.Shell
			if shell == "" {
				shell = "bash (sh without bash; on Windows cmd without bash)"
			}
			fmt.Fprintf(w, "  command: %s (run by %s in %s)\n", describeValue(h.Command), shell, h.Dir)
			printMap(w, "env", h.Env)
			if len(h.InheritEnv) > 0 {
				fmt.Fprintf(w, "  inherit_env: %q\n", h.InheritEnv)
			}
		} else {
			fmt.Fprintf(w, "  url: %s (the call's input is POSTed there)\n", describeValue(h.URL))
			printMap(w, "header", h.Headers)
			if len(h.AllowedEnvVars) > 0 {
				fmt.Fprintf(w, "  allowed_env_vars: %q (read into the headers)\n", h.AllowedEnvVars)
			}
		}
		describeCheckCommon(w, h.Mode, h.FailOpen, h.Match)
		describeTimeout(w, h.Timeout, config.DefaultHookTimeout)
	}
	for _, ic := range ics {
		fmt.Fprintf(w, "interceptor %q at %s:%d:\n", ic.Name, ic.Origin.File, ic.Origin.Range.Start.Line)
		switch {
		case ic.Plugin != "":
			fmt.Fprintf(w, "  plugin: %s\n", ic.Plugin)
			if len(ic.Options) > 0 {
				var m map[string]any
				json.Unmarshal(ic.Options, &m)
				fmt.Fprintln(w, "  options:")
				printAny(w, "   ", m)
			}
		case ic.Server != "":
			fmt.Fprintf(w, "  server: %s (a SEP-2624 interceptor server)\n", ic.Server)
			if len(ic.Names) > 0 {
				fmt.Fprintf(w, "  names: %q\n", ic.Names)
			}
		default:
			fmt.Fprintf(w, "  builtin: %s\n", ic.Builtin)
			if ic.Action != "" {
				fmt.Fprintf(w, "  action: %s\n", ic.Action)
			}
		}
		fmt.Fprintf(w, "  checks: %s (%s)\n", strings.Join(ic.Events, ", "), strings.Join(ic.Phases, ", "))
		describeCheckCommon(w, ic.Mode, ic.FailOpen, ic.Match)
		if ic.Builtin == "" { // a built-in runs in process, without one
			describeTimeout(w, ic.Timeout, config.DefaultInterceptorTimeout)
		}
	}
}

// describeTimeout prints a block's timeout: the approval covers it, so it
// is shown (0, not written, is the default def).
func describeTimeout(w io.Writer, d, def time.Duration) {
	if d <= 0 {
		fmt.Fprintf(w, "  timeout: %s (the default)\n", def)
		return
	}
	fmt.Fprintf(w, "  timeout: %s\n", d)
}

func describeCheckCommon(w io.Writer, mode string, failOpen bool, m *config.CheckMatch) {
	if mode == config.ModeAudit {
		fmt.Fprintln(w, "  mode: audit (logs what it would do, changes nothing)")
	}
	if failOpen {
		fmt.Fprintln(w, "  fail_open: true (a call goes on when it fails)")
	}
	if m == nil {
		return
	}
	if len(m.Servers) > 0 {
		fmt.Fprintf(w, "  match servers: %q\n", m.Servers)
	}
	if len(m.Tools) > 0 {
		fmt.Fprintf(w, "  match tools: %q\n", m.Tools)
	}
	if m.Principals != nil {
		fmt.Fprintf(w, "  match principals: %s\n", m.Principals)
	}
}

// redactChecks returns cfg's hooks and interceptors for showing: every
// hook's env and headers values, and the interceptor options the plugin
// marks sensitive (all of them without a recorded schema), "<redacted>".
func redactChecks(cfg *config.Config) ([]*config.Hook, []*config.Interceptor) {
	var hooks []*config.Hook
	for _, h := range cfg.Hooks {
		r := *h
		r.Env, r.Headers = redactValues(h.Env), redactValues(h.Headers)
		hooks = append(hooks, &r)
	}
	var ics []*config.Interceptor
	for _, ic := range cfg.Interceptors {
		r := *ic
		if len(ic.Options) > 0 {
			r.Options = redactOptions(cfg, ic)
		}
		ics = append(ics, &r)
	}
	return hooks, ics
}

func redactValues(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = redacted
	}
	return out
}

// redactOptions redacts the options of a plugin interceptor that its
// plugin marked sensitive; without a recorded schema, every value.
func redactOptions(cfg *config.Config, ic *config.Interceptor) json.RawMessage {
	var comp *config.LockedComponent
	if p := cfg.Plugin(ic.Plugin); p != nil && p.Locked != nil {
		for _, c := range p.Locked.Components {
			if c.Kind == "interceptor" {
				comp = c
			}
		}
	}
	return redactByComponent(ic.Options, comp, func(string) bool { return true })
}

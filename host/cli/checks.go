package cli

import (
	"fmt"
	"slices"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// checksFor lists the approved hooks and interceptors that a call of the
// tool name (canonical mcp__SERVER__TOOL) goes through, in the order they
// run, as `permissions check` shows them: "hook PreToolUse (user scope,
// file:line)", "interceptor args (builtin validate_input)". A check that
// applies to some principals only says so.
func checksFor(cfg *config.Config, name string) []string {
	server, _, _ := registry.ParseName(name)
	matches := func(m *config.CheckMatch) (bool, string) {
		if m == nil {
			return true, ""
		}
		if len(m.Servers) > 0 && !slices.Contains(m.Servers, server) {
			return false, ""
		}
		if len(m.Tools) > 0 && !slices.ContainsFunc(m.Tools, func(p string) bool { return permissions.Match(p, name) }) {
			return false, ""
		}
		if m.Principals != nil {
			return true, ", for " + m.Principals.String()
		}
		return true, ""
	}
	var out []string
	for _, h := range cfg.Hooks {
		if !h.Approved || (h.Event != "PreToolUse" && h.Event != "PostToolUse" && h.Event != "PostToolUseFailure") {
			continue
		}
		if f, err := config.CompileMatcher(h.Matcher); err != nil || !f(name) {
			continue
		}
		if ok, who := matches(h.Match); ok {
			out = append(out, fmt.Sprintf("hook %s (%s%s)", h.Event, h.Origin.Source(), who))
		}
	}
	for _, ic := range cfg.Interceptors {
		if !ic.Approved || !slices.Contains(ic.Events, "tools/call") {
			continue
		}
		if ok, who := matches(ic.Match); ok {
			kind := "plugin " + ic.Plugin
			switch {
			case ic.Builtin != "":
				kind = "builtin " + ic.Builtin
			case ic.Server != "":
				kind = "server " + ic.Server
			}
			out = append(out, fmt.Sprintf("interceptor %s (%s%s)", ic.Name, kind, who))
		}
	}
	return out
}

package gateway

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// The names the gateway exposes (serve --naming, settings { naming }):
//   - prefixed: the registry's canonical names, mcp__SERVER__NAME;
//   - conditional: the server's own names while exactly one server is
//     active (configured and not disabled), prefixed otherwise;
//   - bare: always the server's own names;
//   - server: SERVER__NAME, the canonical name without its mcp__ prefix,
//     for clients that prefix names themselves (Claude Code shows
//     mcp__gateway__github__create_issue rather than
//     mcp__gateway__mcp__github__create_issue).
//
// A name that several servers offer under bare (or conditional) naming is
// served by none of them and reported: never last-wins. Under server naming
// two tools cannot share a served name (the canonical names are distinct,
// and each loses the same prefix). Permission rules, pins and logs keep
// using the canonical names whatever is exposed: a served name maps back to
// its canonical name through what is served (exposure), never by parsing.

// nameStyle is how the names of tools and prompts are served.
type nameStyle int

const (
	// namesRegistry: the canonical names, mcp__SERVER__NAME.
	namesRegistry nameStyle = iota
	// namesOwn: the servers' own names.
	namesOwn
	// namesServer: SERVER__NAME.
	namesServer
)

// styleOf is the name style of a naming mode with activeServers servers
// active.
func styleOf(mode string, activeServers int) nameStyle {
	switch mode {
	case config.NamingBare:
		return namesOwn
	case config.NamingConditional:
		if activeServers == 1 {
			return namesOwn
		}
	case config.NamingServer:
		return namesServer
	}
	return namesRegistry
}

// servedName is the name a tool or prompt of registry name canonical and
// the server's own name original is served under in style.
func servedName(style nameStyle, canonical, original string) string {
	switch style {
	case namesOwn:
		return original
	case namesServer:
		return strings.TrimPrefix(canonical, registry.Prefix)
	}
	return canonical
}

// exposeNames maps each item to its exposed name: servedName of its
// registry name and own name, or, for an item renamed (a tool override's
// name: renamed returns it, "" if none), of the registry name and own
// name it would have under that name. An item whose served name reads as
// a registry name that is not its own is left out and reported: under the
// servers' own names or server naming one that parses as mcp__SERVER__NAME
// (served, a server's own "mcp__bank__transfer", or server "mcp"'s tool
// "bank__transfer" under server naming, would answer a direct call by that
// string, while everything else that speaks registry names — permission
// rules, logs, search_tools and call_tool — means the bank server's
// transfer by it), in any style one equal to another item's registry name
// (a tool renamed to another tool's name). A served name that several
// items are left with (under the servers' own names, the same name on
// several servers; else two tools renamed alike) is served for none of
// them and reported: never last-wins.
func exposeNames[T any](style nameStyle, what string, items []T, canonical, original, server, renamed func(T) string) (map[string]T, []registry.Problem) {
	out := make(map[string]T, len(items))
	anyRenamed := false
	for _, it := range items {
		if renamed(it) != "" {
			anyRenamed = true
			break
		}
	}
	if style == namesRegistry && !anyRenamed {
		for _, it := range items {
			out[canonical(it)] = it
		}
		return out, nil
	}
	registryNames := make(map[string]bool, len(items))
	for _, it := range items {
		registryNames[canonical(it)] = true
	}
	served := func(it T) string {
		if r := renamed(it); r != "" {
			return servedName(style, registry.ToolName(server(it), r), r)
		}
		return servedName(style, canonical(it), original(it))
	}
	groups := map[string][]T{}
	for _, it := range items {
		n := served(it)
		groups[n] = append(groups[n], it)
	}
	var problems []registry.Problem
	for name, g := range groups {
		var kept []T
		for _, it := range g {
			_, _, parses := registry.ParseName(name)
			if !(style != namesRegistry && parses) && !(registryNames[name] && name != canonical(it)) {
				kept = append(kept, it)
				continue
			}
			how := "its own name"
			if style != namesOwn || renamed(it) != "" {
				how = fmt.Sprintf("%q", name)
			}
			problems = append(problems, registry.Problem{Server: server(it), Detail: fmt.Sprintf(
				"the %s %q is not served under %s, which reads as a registry name (mcp__SERVER__NAME) and could be taken for another %s; it is %s with naming = \"prefixed\" and no override name",
				what, original(it), how, what, canonical(it))})
		}
		if len(kept) == 1 {
			out[name] = kept[0]
			continue
		}
		if len(kept) == 0 {
			continue
		}
		var servers, names []string
		for _, it := range kept {
			servers = append(servers, server(it))
			names = append(names, canonical(it))
		}
		sort.Strings(servers)
		sort.Strings(names)
		if style == namesOwn && !anyRenamed {
			for _, s := range servers {
				problems = append(problems, registry.Problem{Server: s, Detail: fmt.Sprintf(
					"the %s %q is offered by servers %s; with bare names none of them is served (use naming = \"prefixed\")",
					what, name, strings.Join(servers, ", "))})
			}
			continue
		}
		for _, it := range kept {
			problems = append(problems, registry.Problem{Server: server(it), Detail: fmt.Sprintf(
				"the %ss %s would all be served as %q; none of them is (check the tools' override names, or the naming)",
				what, strings.Join(names, ", "), name)})
		}
	}
	return out, problems
}

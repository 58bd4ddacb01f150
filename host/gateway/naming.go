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
//   - bare: always the server's own names.
//
// A name that several servers offer under bare (or conditional) naming is
// served by none of them and reported: never last-wins. Permission rules,
// pins and logs keep using the canonical names whatever is exposed.

// prefixFree reports whether names drop the mcp__SERVER__ prefix.
func prefixFree(mode string, activeServers int) bool {
	switch mode {
	case config.NamingBare:
		return true
	case config.NamingConditional:
		return activeServers == 1
	}
	return false
}

// exposeNames maps each item to its exposed name: canonical(item), or
// original(item) when bare. A bare name offered by more than one server is
// left out and reported. So is a bare name that reads as a registry name
// (mcp__SERVER__NAME, or equal to any item's registry name): served, a
// server's own "mcp__bank__transfer" would answer a direct call by that
// string, while everything else that speaks registry names (permission
// rules, logs, search_tools and call_tool) means the bank server's
// transfer by it.
func exposeNames[T any](bare bool, what string, items []T, canonical, original, server func(T) string) (map[string]T, []registry.Problem) {
	out := make(map[string]T, len(items))
	if !bare {
		for _, it := range items {
			out[canonical(it)] = it
		}
		return out, nil
	}
	registryNames := make(map[string]bool, len(items))
	for _, it := range items {
		registryNames[canonical(it)] = true
	}
	groups := map[string][]T{}
	for _, it := range items {
		groups[original(it)] = append(groups[original(it)], it)
	}
	var problems []registry.Problem
	for name, g := range groups {
		if _, _, ok := registry.ParseName(name); ok || registryNames[name] {
			for _, it := range g {
				problems = append(problems, registry.Problem{Server: server(it), Detail: fmt.Sprintf(
					"the %s %q is not served under its own name, which reads as a registry name (mcp__SERVER__NAME) and could be taken for another server's; it is %s with naming = \"prefixed\"",
					what, name, canonical(it))})
			}
			continue
		}
		if len(g) == 1 {
			out[name] = g[0]
			continue
		}
		var servers []string
		for _, it := range g {
			servers = append(servers, server(it))
		}
		sort.Strings(servers)
		for _, s := range servers {
			problems = append(problems, registry.Problem{Server: s, Detail: fmt.Sprintf(
				"the %s %q is offered by servers %s; with bare names none of them is served (use naming = \"prefixed\")",
				what, name, strings.Join(servers, ", "))})
		}
	}
	return out, problems
}

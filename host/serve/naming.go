package serve

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
// left out and reported.
func exposeNames[T any](bare bool, what string, items []T, canonical, original, server func(T) string) (map[string]T, []registry.Problem) {
	out := make(map[string]T, len(items))
	if !bare {
		for _, it := range items {
			out[canonical(it)] = it
		}
		return out, nil
	}
	groups := map[string][]T{}
	for _, it := range items {
		groups[original(it)] = append(groups[original(it)], it)
	}
	var problems []registry.Problem
	for name, g := range groups {
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

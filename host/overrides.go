package host

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/registry"
)

// OverrideProblems reports the tool overrides (a server's tools { override
// "TOOL" { … } } blocks) of servers that name no tool the server lists, as
// problems: tools are dynamic, so this is not a configuration error, but an
// override that matches nothing is most often a typo. tools are the tools
// listed of servers; a server with a problem among problems (it failed to
// list) is not judged. An override matches a tool by its own name or its
// name as served (registry.Normalize), as the gateway looks it up.
func OverrideProblems(cfg *config.Config, servers []string, tools []*registry.Tool, problems []registry.Problem) []registry.Problem {
	if cfg == nil {
		return nil
	}
	var out []registry.Problem
	for _, name := range servers {
		s := cfg.Server(name)
		if s == nil || s.Tools == nil || len(s.Tools.Overrides) == 0 {
			continue
		}
		if slices.ContainsFunc(problems, func(p registry.Problem) bool { return p.Server == name }) {
			continue
		}
		own := map[string]bool{}
		for _, t := range tools {
			if t.Server == name {
				own[t.Original], own[registry.Normalize(t.Original)] = true, true
			}
		}
		var missing []string
		for tool := range s.Tools.Overrides {
			if !own[tool] {
				missing = append(missing, tool)
			}
		}
		sort.Strings(missing)
		for _, tool := range missing {
			out = append(out, registry.Problem{Server: name, Detail: fmt.Sprintf(
				"tools { override %q } names no tool the server lists (or its tools block leaves it out): it changes nothing", tool)})
		}
	}
	return out
}

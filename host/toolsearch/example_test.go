package toolsearch_test

import (
	"fmt"

	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/toolsearch"
)

func Example() {
	// What host.Host.Tools returns; rebuild the index when the registry
	// changes (registry.Registry.OnChange).
	tools := []*registry.Tool{
		{Name: "mcp__forge__create_pull_request", Server: "forge", Original: "create_pull_request", DisplayName: "Create pull request",
			Description: "Open a pull request to merge a head branch into a base branch.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"head": map[string]any{"type": "string", "description": "Branch with the changes."}}}},
		{Name: "mcp__forge__delete_branch", Server: "forge", Original: "delete_branch", DisplayName: "delete_branch",
			Description: "Delete a branch."},
		{Name: "mcp__calendar__list_events", Server: "calendar", Original: "list_events", DisplayName: "list_events",
			Description: "List calendar events (meetings, appointments) between two times."},
	}
	ix := toolsearch.New(tools, nil)
	for _, q := range []string{"open a pull request for my branch", "what meetings do I have tomorrow"} {
		results, err := ix.Search(q, &toolsearch.SearchOptions{
			Limit: 2,
			// Leave out what the caller may not use, e.g. by the
			// permission rules: host.Host.Decide(t.Name).
			Filter: func(t *registry.Tool) bool { return t.Name != "mcp__forge__delete_branch" },
		})
		if err != nil {
			fmt.Println(err)
			continue
		}
		for _, r := range results {
			fmt.Printf("%s: %s\n", q, r.Tool.Name)
		}
	}
	// Output:
	// open a pull request for my branch: mcp__forge__create_pull_request
	// what meetings do I have tomorrow: mcp__calendar__list_events
}

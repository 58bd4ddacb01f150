package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

func (a *app) permissionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "permissions", Short: "Explain permission decisions"}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check TOOL_NAME...",
		Short: "Show the decision (allow, ask, deny) for tools, and the rule that made it",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(*cobra.Command, []string) error { return nil },
	}
	check.RunE = func(_ *cobra.Command, names []string) error {
		cfg, err := a.loadConfig()
		if err != nil {
			return err
		}
		policy, err := cfg.Policy()
		if err != nil {
			return err
		}
		type row struct {
			Tool string `json:"tool"`
			permissions.Decision
			Explanation string `json:"explanation"`
		}
		var rows []row
		for _, n := range names {
			d := policy.Decide(n)
			rows = append(rows, row{Tool: n, Decision: d, Explanation: d.Explain()})
		}
		if asJSON {
			return a.writeJSON(rows)
		}
		for _, r := range rows {
			fmt.Fprintf(a.stdout, "%s: %s\n", r.Tool, r.Explanation)
		}
		return nil
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(check)
	return cmd
}

// askOnTerminal asks the person at the terminal about a call whose decision
// is ask: yes, no, or always (for the rest of this process). It is only used
// when stdin and stderr are terminals.
func (a *app) askOnTerminal(_ context.Context, t *registry.Tool, d permissions.Decision) (bool, error) {
	a.askMu.Lock()
	defer a.askMu.Unlock()
	if a.alwaysAllowed[t.Name] {
		return true, nil
	}
	fmt.Fprintf(a.stderr, "%s (%s) wants to run.\n  %s\nAllow? [y]es / [N]o / [a]lways this session: ", t.Name, t.DisplayName, d.Explain())
	if a.stdinReader == nil {
		a.stdinReader = bufio.NewReader(a.stdin)
	}
	line, err := a.stdinReader.ReadString('\n')
	if err != nil && line == "" {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	case "a", "always":
		if a.alwaysAllowed == nil {
			a.alwaysAllowed = map[string]bool{}
		}
		a.alwaysAllowed[t.Name] = true
		return true, nil
	}
	return false, nil
}

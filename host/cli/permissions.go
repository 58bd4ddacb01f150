package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/registry"
)

func (a *app) permissionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "permissions", Short: "Explain permission decisions"}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check TOOL_NAME...",
		Short: "Show the decision (allow, ask, deny) for tools, the rule that made it, and the hooks and interceptors its calls go through",
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
			// Checks are the hooks and interceptors its calls go through.
			Checks []string `json:"checks,omitempty"`
		}
		var rows []row
		for _, n := range names {
			d := policy.Decide(n)
			rows = append(rows, row{Tool: n, Decision: d, Explanation: d.Explain(), Checks: checksFor(cfg, n)})
		}
		if asJSON {
			return a.writeJSON(rows)
		}
		for _, r := range rows {
			fmt.Fprintf(a.stdout, "%s: %s\n", r.Tool, r.Explanation)
			if len(r.Checks) > 0 {
				fmt.Fprintf(a.stdout, "  checked by: %s\n", strings.Join(r.Checks, "; "))
			}
		}
		return nil
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(check)
	return cmd
}

// askOnTerminal asks the person at the terminal about a call whose decision
// is ask: yes, no, or always (for the rest of this process). It is only used
// when stdin and stderr are terminals. It takes its turn with the other
// terminal prompts and gives up (false, ctx's error) when ctx ends.
func (a *app) askOnTerminal(ctx context.Context, t *registry.Tool, d permissions.Decision) (bool, error) {
	return a.askCall(ctx, t, d, host.AskArguments(ctx))
}

// askCall is askOnTerminal about a call with the arguments args (JSON),
// which the prompt shows (redact.Arguments).
func (a *app) askCall(ctx context.Context, t *registry.Tool, d permissions.Decision, args json.RawMessage) (bool, error) {
	release, err := a.takeTurn(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	if a.alwaysAllowed[t.Name] {
		return true, nil
	}
	fmt.Fprintf(a.stderr, "%s (%s) wants to run.\n  %s\n  arguments:\n%s\nAllow? [y]es / [N]o / [a]lways this session: ",
		t.Name, t.DisplayName, d.Explain(), redact.Arguments(args, "    "))
	line, err := a.readLine(ctx)
	if err != nil {
		if ctx.Err() != nil {
			a.abandoned(err)
		}
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

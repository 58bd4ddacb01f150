package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
)

func (a *app) serversCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "Connect to every configured server and show its status",
		Long: `Connects to every enabled server (3 stdio and 20 remote at a time by default)
and prints each server's name, scope, origin file, transport, state, tool count
and error. Servers that are configured but not used (overridden, duplicates,
excluded by a managed configuration) are listed after them.

Exit status: 0 when every server that should be connected is; 3 when one is
not (it failed, or needs a login); 2 for a configuration error; 1 for any
other failure. Disabled, unapproved and policy-blocked servers, and servers
connected per gateway user (oauth { grant = "token_exchange" }), are not
expected to be connected.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			a.connectAll(cmd.Context(), h)
			statuses := h.Servers(cmd.Context())
			if asJSON {
				if err := a.writeJSON(struct {
					Servers []host.ServerStatus `json:"servers"`
					Skipped []*config.Skipped   `json:"skipped,omitempty"`
				}{statuses, h.Config().Skipped}); err != nil {
					return err
				}
				return notConnected(h.Config(), statuses)
			}
			a.printServers(statuses, h.Config().Skipped)
			return notConnected(h.Config(), statuses)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// notConnected is the exit status of `servers`: exitNotConnected when a
// server that should be connected is not.
func notConnected(cfg *config.Config, statuses []host.ServerStatus) error {
	for _, st := range statuses {
		if st.State == conn.StateConnected || st.State == conn.StateDisabled {
			continue
		}
		if s := cfg.Server(st.Name); s != nil && s.OAuth != nil && s.OAuth.Grant == config.GrantTokenExchange {
			continue // connected for each gateway user
		}
		return exitErr{exitNotConnected}
	}
	return nil
}

// connectAll connects every server, showing progress on a terminal.
func (a *app) connectAll(ctx context.Context, h *host.Host) {
	h.ConnectAll(ctx, a.connectProgress(h))
}

// connectProgress shows, on a terminal, the servers of h connecting and
// each as it settles (the progress function of host.Host.ConnectAll).
func (a *app) connectProgress(h *host.Host) func(name string, st conn.Status) {
	total := 0 // (the servers ConnectAll connects: interceptor servers too)
	for _, st := range h.Connections().Status() {
		if st.State != conn.StateDisabled {
			total++
		}
	}
	show := a.isTerminal(a.stderr) && total > 0
	var mu sync.Mutex
	done := 0
	if show {
		fmt.Fprintf(a.stderr, "Connecting to %d server(s)…\n", total)
	}
	return func(name string, st conn.Status) {
		if !show {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		fmt.Fprintf(a.stderr, "  [%d/%d] %s: %s\n", done, total, name, st.State)
	}
}

func (a *app) printServers(statuses []host.ServerStatus, skipped []*config.Skipped) {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tFILE\tTRANSPORT\tSTATE\tTOOLS\tERROR")
	for _, s := range statuses {
		tools := "-"
		if s.State == conn.StateConnected && s.Error == "" {
			tools = fmt.Sprint(s.Tools)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Scope, s.File, s.Transport, s.State, tools, firstLine(s.Error))
	}
	tw.Flush()
	for _, s := range statuses {
		if s.Hint != "" {
			fmt.Fprintf(a.stdout, "\n%s: %s\n%s\n", s.Name, firstLine(s.Error), indentLines(s.Hint))
		}
	}
	for _, s := range statuses {
		if s.State != conn.StateConnected && s.Stderr != "" {
			fmt.Fprintf(a.stdout, "\n%s stderr (last lines):\n%s\n", s.Name, indentLines(lastLines(s.Stderr, 10)))
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintln(a.stdout, "\nNot used:")
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		for _, s := range skipped {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Server.Name, s.Server.Origin.Scope, s.Server.Origin.File, s.Reason)
		}
		tw.Flush()
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indentLines(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

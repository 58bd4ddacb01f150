package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/llmtools"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/registry"
)

func (a *app) toolsCmd() *cobra.Command {
	var asJSON bool
	var servers []string
	var format string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the unified tool registry, or export it as LLM tool definitions",
		Long: `Lists the tools of every active server, or only of the servers named with
--server (repeatable).

With --format, prints them instead as the tool definitions an LLM API takes,
as JSON on stdout:
  ` + formatNames() + `
What had to change for the vendor (a schema construct it does not accept, a
name it refuses) is reported on stderr, one "note:" line each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f llmtools.Format
			if format != "" {
				var err error
				if f, err = llmtools.ParseFormat(format); err != nil {
					fmt.Fprintf(a.stderr, "Error: --format: %v\n", err)
					return exitErr{exitConfig}
				}
			}
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			ctx := cmd.Context()
			var tools []*registry.Tool
			var problems []registry.Problem
			if len(servers) > 0 {
				selected := slices.Compact(slices.Sorted(slices.Values(servers)))
				for _, s := range selected {
					if h.Connections().Get(s) == nil {
						return fmt.Errorf("no server named %q is configured", s)
					}
				}
				tools, problems = h.ToolsOf(ctx, selected)
			} else {
				a.connectAll(ctx, h)
				tools, problems = h.Tools(ctx)
			}
			listed := h.ActiveServers()
			if len(servers) > 0 {
				listed = slices.Compact(slices.Sorted(slices.Values(servers)))
			}
			problems = append(problems, host.OverrideProblems(h.Config(), listed, tools, problems)...)
			if f != "" {
				tools, denied := llmtools.Callable(h, tools)
				return a.exportTools(tools, append(problems, denied...), f)
			}
			type toolRow struct {
				*registry.Tool
				Permission permissions.Decision `json:"permission"`
			}
			rows := make([]toolRow, 0, len(tools))
			for _, t := range tools {
				rows = append(rows, toolRow{Tool: t, Permission: h.Decide(t.Name)})
			}
			return listOutput(a, asJSON, "tools", rows, problems, "NAME\tSERVER\tPERMISSION\tPROPERTIES\tDESCRIPTION", func(t toolRow) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", t.Name, t.Server, t.Permission.Behavior, properties(t.Tool), clip(firstLine(t.Description), 60))
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (implied by --format)")
	cmd.Flags().StringArrayVar(&servers, "server", nil, "only this server's tools (repeatable)")
	cmd.Flags().StringVar(&format, "format", "", "print the tools as an LLM API's tool definitions: "+formatNames())
	cmd.AddCommand(&cobra.Command{
		Use:   "approve TOOL_NAME...",
		Short: "Approve the current definition of tools that changed since first seen",
		Long: `mcphost pins the definition of every tool it sees (name, title, description,
input schema, annotations). A tool whose definition later changes is blocked,
since a server could change what a tool claims to do after it was trusted.
Review the new definition (mcphost tools --server SERVER --json), then approve it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			for _, n := range names {
				if err := h.ApproveTool(cmd.Context(), n); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Approved the current definition of %s\n", n)
			}
			return nil
		},
	})
	return cmd
}

// exportTools prints tools as format f's tool definitions, and the
// registry's problems and the export's notes on stderr, one a line.
func (a *app) exportTools(tools []*registry.Tool, problems []registry.Problem, f llmtools.Format) error {
	e, err := llmtools.Convert(tools, f)
	if err != nil {
		return err
	}
	if err := a.writeJSON(e.Tools); err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "warning: %s\n", p)
	}
	for _, n := range e.Notes {
		fmt.Fprintf(a.stderr, "note: %s\n", n)
	}
	return nil
}

// formatNames lists the formats of tools --format.
func formatNames() string {
	var names []string
	for _, f := range llmtools.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

func properties(t *registry.Tool) string {
	var p []string
	if t.ReadOnly {
		p = append(p, "read-only")
	}
	if t.Destructive {
		p = append(p, "destructive")
	}
	if t.OpenWorld {
		p = append(p, "open-world")
	}
	if len(p) == 0 {
		return "-"
	}
	return strings.Join(p, ",")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (a *app) callCmd() *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "call TOOL_NAME [JSON_ARGS]",
		Short: "Call a tool by its registry name",
		Long: `Calls a tool by its registry name (mcp__SERVER__TOOL) with a JSON object of
arguments ("-" reads them from standard input) and prints the result as text,
or the whole result with --json. The exit status is 1 if the call fails or
the tool reports an error (isError).

A server may ask for input during the call (elicitation). When stdin and
stderr are terminals, its form is asked there field by field, or, for a web
page, its URL is shown and opened only if you agree; at any prompt :decline
refuses and :cancel or Ctrl-D dismisses. Otherwise servers are not offered
elicitation. A server's request for an LLM completion (sampling) is declined:
the CLI has no LLM.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var callArgs json.RawMessage
			if len(args) == 2 {
				raw := []byte(args[1])
				if args[1] == "-" {
					b, err := readAllLimited(a.stdin, 16<<20)
					if err != nil {
						return fmt.Errorf("reading arguments from stdin: %w", err)
					}
					raw = b
				}
				var obj map[string]any
				if err := json.Unmarshal(raw, &obj); err != nil {
					fmt.Fprintf(a.stderr, "Error: arguments must be a JSON object, e.g. '{\"message\": \"hi\"}': %v\n", err)
					return exitErr{exitConfig}
				}
				callArgs = raw
			}
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			opts := &host.CallOptions{Timeout: timeout}
			if a.isTerminal(a.stderr) {
				opts.OnProgress = func(p *mcp.ProgressNotificationParams) {
					if p.Total > 0 {
						fmt.Fprintf(a.stderr, "progress: %.0f/%.0f %s\n", p.Progress, p.Total, redact.String(p.Message))
					} else {
						fmt.Fprintf(a.stderr, "progress: %.0f %s\n", p.Progress, redact.String(p.Message))
					}
				}
			}
			var argsAny any
			if callArgs != nil {
				argsAny = callArgs
			}
			// (Hooks and interceptors are told the call came by the CLI.)
			ctx := host.WithCallInfo(cmd.Context(), host.CallInfo{Front: host.FrontCLI})
			res, err := h.CallTool(ctx, args[0], argsAny, opts)
			var te *host.ToolError
			if err != nil && !errors.As(err, &te) {
				return err
			}
			if asJSON {
				if err := a.writeJSON(res); err != nil {
					return err
				}
			} else {
				out := host.TextOf(res.Content)
				if out == "" && res.StructuredContent != nil {
					b, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
					out = string(b)
				}
				if te != nil {
					fmt.Fprintf(a.stderr, "Error: %s reported an error:\n%s\n", args[0], out)
					return errSilent
				}
				fmt.Fprintln(a.stdout, out)
			}
			if te != nil {
				return errSilent
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole result as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "fail the call after this long without a result or progress (default: the server's tool_timeout, else 10m); max_tool_duration still caps the whole call")
	return cmd
}

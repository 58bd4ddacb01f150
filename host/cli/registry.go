package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/mcpregistry"
)

// `mcphost registry search|show`: the official MCP Registry (or a mirror:
// --registry URL, $MCPHOST_REGISTRY_URL). What a registry answers is
// shown through registryText: no control characters reach the
// terminal.

// registryCmd is `mcphost registry search|show`.
func (a *app) registryCmd() *cobra.Command {
	var registryURL string
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Search the MCP Registry for servers, and show what one needs",
		Long: `Finds servers in the official MCP Registry (` + mcpregistry.DefaultURL + `),
or the registry --registry URL or $` + mcpregistry.EnvURL + ` names (a mirror, an
internal registry serving the same API, v0.1). Install one with
mcphost server add [NAME] --from-registry IDENTIFIER[@VERSION].`,
		Example: `  mcphost registry search filesystem
  mcphost registry show io.github.modelcontextprotocol/filesystem
  mcphost server add --from-registry io.github.modelcontextprotocol/filesystem`,
	}
	cmd.PersistentFlags().StringVar(&registryURL, "registry", "", "the registry's `URL` (default $"+mcpregistry.EnvURL+", else "+mcpregistry.DefaultURL+")")
	cmd.AddCommand(a.registrySearchCmd(&registryURL), a.registryShowCmd(&registryURL))
	return cmd
}

// registryClient is a client of the registry flag names, else of
// $MCPHOST_REGISTRY_URL, else of the official registry.
func (a *app) registryClient(flag string) (*mcpregistry.Client, error) {
	u := flag
	if u == "" {
		u, _ = a.lookupEnv(mcpregistry.EnvURL)
	}
	c, err := mcpregistry.New(u)
	if err != nil && flag == "" && u != "" {
		return nil, fmt.Errorf("$%s: %w", mcpregistry.EnvURL, err)
	}
	return c, err
}

func (a *app) registrySearchCmd(registryURL *string) *cobra.Command {
	var (
		limit  int
		cursor string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "List the servers whose name contains QUERY (their latest versions)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.registryClient(*registryURL)
			if err != nil {
				return err
			}
			query := ""
			if len(args) == 1 {
				query = args[0]
			}
			if limit < 1 || limit > mcpregistry.MaxLimit {
				return fmt.Errorf("--limit %d: allowed: 1 to %d", limit, mcpregistry.MaxLimit)
			}
			list, err := c.Search(cmd.Context(), query, mcpregistry.SearchOptions{Limit: limit, Cursor: cursor})
			if err != nil {
				return err
			}
			if asJSON {
				return a.writeJSON(list)
			}
			if len(list.Servers) == 0 {
				fmt.Fprintf(a.stdout, "No server in %s matches %q.\n", c.URL(), query)
				return nil
			}
			writeServerTable(a.stdout, list.Servers)
			if next := list.Metadata.NextCursor; next != "" {
				fmt.Fprintf(a.stdout, "\nMore: %s --cursor %s\n", cmd.CommandPath()+" "+shellQuote(query), shellQuote(registryText(next, 200)))
			}
			fmt.Fprintf(a.stdout, "\nDetails: mcphost registry show NAME   Install: mcphost server add --from-registry NAME\n")
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 30, "at most `N` servers (1 to 100)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "the next page, as the previous one printed")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON (the members mcphost reads)")
	return cmd
}

// writeServerTable lists servers: name, version, how it runs, description.
func writeServerTable(w io.Writer, servers []mcpregistry.ServerResponse) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tTRANSPORTS\tDESCRIPTION")
	for _, s := range servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", registryText(s.Server.Name, 200), registryText(s.Server.Version, 40),
			strings.Join(ways(&s.Server), ", "), registryText(s.Server.Description, 70))
	}
	tw.Flush()
}

// ways lists how a server can be installed: its package types, then its
// remotes' transports.
func ways(s *mcpregistry.ServerJSON) []string {
	var out []string
	seen := map[string]bool{}
	add := func(k string) {
		k = registryText(k, 20)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, p := range s.Packages {
		add(p.RegistryType)
	}
	for _, r := range s.Remotes {
		add(r.Type)
	}
	if len(out) == 0 {
		return []string{"-"}
	}
	return out
}

func (a *app) registryShowCmd(registryURL *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME[@VERSION]",
		Short: "Show a server's packages and remotes, and the inputs each needs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := config.ParseRegistryRef(args[0], false)
			if err != nil {
				return err
			}
			c, err := a.registryClient(*registryURL)
			if err != nil {
				return err
			}
			s, err := c.Server(cmd.Context(), name, version)
			if err != nil {
				return err
			}
			if asJSON {
				return a.writeJSON(s)
			}
			describeRegistryServer(a.stdout, s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON (the members mcphost reads)")
	return cmd
}

// describeRegistryServer prints a server version: what it is, each
// package and remote with the command or URL it becomes and the inputs it
// takes, and the command that installs it.
func describeRegistryServer(w io.Writer, r *mcpregistry.ServerResponse) {
	s := &r.Server
	p := registryText
	status := ""
	if o := r.Meta.Official; o != nil {
		if o.IsLatest {
			status = " (latest)"
		}
		if o.Status != "" && o.Status != mcpregistry.StatusActive {
			status += " [" + p(string(o.Status), 20) + "]"
		}
	}
	fmt.Fprintf(w, "%s %s%s\n", p(s.Name, 200), p(s.Version, 40), status)
	if s.Title != "" {
		fmt.Fprintf(w, "  %s\n", p(s.Title, 100))
	}
	fmt.Fprintf(w, "  %s\n", p(s.Description, 300))
	if s.Repository != nil && s.Repository.URL != "" {
		fmt.Fprintf(w, "  Repository: %s\n", p(s.Repository.URL, 300))
	}
	if s.WebsiteURL != "" {
		fmt.Fprintf(w, "  Website: %s\n", p(s.WebsiteURL, 300))
	}
	for i := range s.Packages {
		pkg := &s.Packages[i]
		fmt.Fprintf(w, "\nPackage %d: %s %s\n", i+1, p(pkg.RegistryType, 20), p(pkg.Identifier+versionOf(pkg.Version), 300))
		needs, plan, err := preview(func(res mcpregistry.Resolver) (*mcpregistry.Plan, error) { return mcpregistry.PlanPackage(s, pkg, res) })
		if err != nil {
			fmt.Fprintf(w, "  (mcphost cannot install it: %v)\n", err)
		} else {
			fmt.Fprintf(w, "  runs: %s\n", p(plan.Command+" "+previewArgs(plan.Args), 500))
		}
		writeNeeds(w, needs)
	}
	for i := range s.Remotes {
		rem := &s.Remotes[i]
		fmt.Fprintf(w, "\nRemote %d: %s %s\n", i+1, p(rem.Type, 20), p(rem.URL, 300))
		needs, _, err := preview(func(res mcpregistry.Resolver) (*mcpregistry.Plan, error) { return mcpregistry.PlanRemote(s, rem, res) })
		if err != nil {
			fmt.Fprintf(w, "  (mcphost cannot install it: %v)\n", err)
		}
		writeNeeds(w, needs)
	}
	if len(s.Packages)+len(s.Remotes) == 0 {
		fmt.Fprintln(w, "\nNo package and no remote: nothing mcphost can install.")
		return
	}
	fmt.Fprintf(w, "\nInstall: mcphost server add %s --from-registry %s@%s", registryBlockName(s.Name), p(s.Name, 200), p(s.Version, 40))
	if len(s.Packages)+len(s.Remotes) > 1 {
		fmt.Fprint(w, " [--package N | --remote N]")
	}
	fmt.Fprintln(w)
}

func versionOf(v string) string {
	if v == "" {
		return ""
	}
	return "@" + v
}

// preview plans with placeholders: every input is recorded and left to
// its default; a required one without a default shows as <KEY>.
func preview(plan func(mcpregistry.Resolver) (*mcpregistry.Plan, error)) ([]mcpregistry.Need, *mcpregistry.Plan, error) {
	var needs []mcpregistry.Need
	pl, err := plan(func(n mcpregistry.Need) (mcpregistry.Answer, bool, error) {
		needs = append(needs, n)
		if n.Input.IsRequired && n.Input.Default == "" {
			return mcpregistry.Answer{Value: "<" + n.Key + ">"}, true, nil
		}
		return mcpregistry.Answer{}, false, nil
	})
	return needs, pl, err
}

func previewArgs(args []mcpregistry.Value) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = a.Text
	}
	return strings.Join(s, " ")
}

// writeNeeds lists inputs: how to give each, whether required or secret,
// the default, the choices and the description.
func writeNeeds(w io.Writer, needs []mcpregistry.Need) {
	if len(needs) == 0 {
		return
	}
	p := registryText
	fmt.Fprintln(w, "  inputs:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range needs {
		flag := "-e " + p(n.Key, 100) + "=…"
		if n.Kind == mcpregistry.KindHeader {
			flag = "-H \"" + p(n.Key, 100) + ": …\""
		}
		var notes []string
		if n.Input.IsRequired {
			notes = append(notes, "required")
		}
		if n.Input.IsSecret {
			notes = append(notes, "secret")
		}
		if n.Input.Default != "" {
			notes = append(notes, "default "+shellQuote(p(n.Input.Default, 100)))
		}
		if len(n.Input.Choices) > 0 {
			c := make([]string, len(n.Input.Choices))
			for i, v := range n.Input.Choices {
				c[i] = p(v, 40)
			}
			notes = append(notes, "one of "+strings.Join(c, "|"))
		}
		what := n.Kind
		if n.In != "" {
			what += " in " + p(n.In, 100)
		}
		desc := p(n.Input.Description, 120)
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", flag, what, strings.Join(notes, ", "), desc)
	}
	tw.Flush()
}

// shellQuote quotes s for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./@:=,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// registryBlockName derives a server block's name from a registry server
// name: its last segment, with what a block name cannot hold replaced by
// '-' ("io.github.user/weather.mcp" → "weather-mcp").
func registryBlockName(name string) string {
	last := name[strings.LastIndex(name, "/")+1:]
	var b strings.Builder
	sep := false
	for _, r := range last {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('-')
			}
			sep = false
			b.WriteRune(r)
			continue
		}
		sep = true
	}
	out := b.String()
	if len(out) > config.MaxServerNameLen {
		out = strings.TrimRight(out[:config.MaxServerNameLen], "-")
	}
	return out
}

// errNoRegistryName is a registry name without a usable block name.
var errNoRegistryName = errors.New("cannot derive a server name from the registry name: give NAME")

// registryText makes a string of a registry's answer safe to print:
// escape sequences removed whole (cleanText), then every other control
// character, at most n runes.
func registryText(s string, n int) string {
	return mcpregistry.Printable(ansiSeq.ReplaceAllString(s, ""), n)
}

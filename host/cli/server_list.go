package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
)

// serverInfo is one configured server as `server list` and `server get`
// show it: where it is declared, what it runs or reaches, and its state.
// Values that may be secret (env values, header values, client secrets)
// are never shown; their names are.
type serverInfo struct {
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	File      string   `json:"file,omitempty"`
	Line      int      `json:"line,omitempty"`
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	Env       []string `json:"env,omitempty"`     // names only
	Headers   []string `json:"headers,omitempty"` // names only
	// HeadersHelper is the helper's argv.
	HeadersHelper []string `json:"headers_helper,omitempty"`
	OAuthClientID string   `json:"oauth_client_id,omitempty"`
	OAuth         bool     `json:"oauth,omitempty"`
	AuthScheme    string   `json:"auth_scheme,omitempty"`
	// State is enabled, disabled, needs-approval, blocked or not-used;
	// Reason says why for the last two.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Connection is the live status (server get only).
	Connection *host.ServerStatus `json:"connection,omitempty"`
}

// errNoServer is returned by server get for a name no scope declares.
var errNoServer = errors.New("no such server")

// Configuration states of serverInfo.State.
const (
	stateEnabled       = "enabled"
	stateDisabled      = "disabled"
	stateNeedsApproval = "needs-approval"
	stateBlocked       = "blocked"
	stateNotUsed       = "not-used"
)

// infoOf describes s, its values shown as w, the same server decoded as
// written (env() and secret() calls shown, never evaluated).
func infoOf(s, w *config.Server) serverInfo {
	in := serverInfo{
		Name: s.Name, Scope: s.Origin.Scope.String(), File: s.Origin.File, Line: s.Origin.Range.Start.Line,
		Transport: s.Transport, Command: w.Command, Args: redactAll(w.Args), URL: redact.String(w.URL),
		Env: sortedKeys(w.Env), Headers: sortedKeys(w.Headers), HeadersHelper: redactAll(w.HeadersHelper),
		AuthScheme: s.AuthScheme, OAuth: s.OAuth != nil,
	}
	if s.OAuth != nil {
		in.OAuthClientID = s.OAuth.ClientID
	}
	switch {
	case s.BlockedBy != "":
		in.State, in.Reason = stateBlocked, s.BlockedBy
	case s.Disabled:
		in.State = stateDisabled
	case !s.Approved:
		in.State, in.Reason = stateNeedsApproval, "run: mcphost config approve "+s.Name
	default:
		in.State = stateEnabled
	}
	return in
}

// redactAll scrubs what looks like a credential from each argument.
func redactAll(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redact.String(a)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

// configuredServers lists every server of cfg: those in use, then those not
// used (overridden, duplicates, excluded by the managed scope). Values are
// shown from shown, the same configuration loaded as written
// (LoadOptions.AsWritten): an env() or secret() call appears as the call, so
// no secret is printed, whatever the scope.
func configuredServers(cfg, shown *config.Config) []serverInfo {
	written := func(s *config.Server) *config.Server {
		for _, w := range shown.Servers {
			if w.Name == s.Name && w.Origin.File == s.Origin.File && w.Origin.Range == s.Origin.Range {
				return w
			}
		}
		for _, sk := range shown.Skipped {
			if w := sk.Server; w.Name == s.Name && w.Origin.File == s.Origin.File && w.Origin.Range == s.Origin.Range {
				return w
			}
		}
		// Not found (the files changed between the two loads): show names only.
		return &config.Server{Name: s.Name, Transport: s.Transport}
	}
	var out []serverInfo
	for _, s := range cfg.Servers {
		out = append(out, infoOf(s, written(s).Written()))
	}
	for _, sk := range cfg.Skipped {
		in := infoOf(sk.Server, written(sk.Server).Written())
		in.State, in.Reason = stateNotUsed, sk.Reason
		out = append(out, in)
	}
	return out
}

// loadShown loads the configuration as written, for showing it. Its
// diagnostics are not reported: the configuration was loaded (and its
// problems reported) for real already, and a value checked as written (a
// URL from env(), say) may fail checks its evaluated value passes; such a
// server is shown by name only.
func (a *app) loadShown() (*config.Config, error) {
	cfg, _ := config.Load(&config.LoadOptions{
		LookupEnv: a.lookupEnv,
		WorkDir:   a.workDir,
		Files:     a.configs,
		AsWritten: true,
	})
	return cfg, nil
}

func (a *app) serverListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured servers, with where each is declared",
		Long: `Lists every configured server with its scope, file and line, transport, what
it runs or reaches, and its configuration state: enabled, disabled,
needs-approval (a project server), blocked (by the managed policy) or not-used
(overridden by a higher scope, a duplicate, or excluded by the managed
configuration). Nothing is started; mcphost servers connects them all, and
mcphost server get NAME connects one.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			shown, err := a.loadShown()
			if err != nil {
				return err
			}
			list := configuredServers(cfg, shown)
			if asJSON {
				if list == nil {
					list = []serverInfo{}
				}
				return a.writeJSON(map[string]any{"servers": list})
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSCOPE\tFILE\tTRANSPORT\tTARGET\tSTATE")
			for _, in := range list {
				state := in.State
				if in.Reason != "" && in.State != stateNeedsApproval {
					state += " (" + in.Reason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, in.Scope, fileLine(in), in.Transport, targetOf(in), state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) serverGetCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one server's configuration and connect to it",
		Long: `Shows where the server is declared and what it runs or reaches (secret values
hidden), then, if it is enabled, connects to it and shows its state (connected,
failed, needs-auth), server info and tool count.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			shown, err := a.loadShown()
			if err != nil {
				return err
			}
			var in *serverInfo
			for _, s := range configuredServers(cfg, shown) {
				if s.Name == args[0] {
					in = &s
					break // in use before not used
				}
			}
			if in == nil {
				return fmt.Errorf("%w %q (see mcphost server list)", errNoServer, args[0])
			}
			if in.State == stateEnabled {
				h, err := a.hostOn(cfg, true)
				if err != nil {
					return err
				}
				defer h.Close()
				h.ToolsOf(cmd.Context(), []string{in.Name})
				for _, st := range h.Servers(cmd.Context()) {
					if st.Name == in.Name {
						st := st
						in.Connection = &st
					}
				}
			}
			if asJSON {
				return a.writeJSON(in)
			}
			a.printServerInfo(in)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) printServerInfo(in *serverInfo) {
	w := a.stdout
	fmt.Fprintf(w, "%s\n", in.Name)
	fmt.Fprintf(w, "  scope:     %s\n  file:      %s\n  transport: %s\n", in.Scope, fileLine(*in), in.Transport)
	if in.Command != "" {
		fmt.Fprintf(w, "  command:   %s\n", strings.Join(append([]string{in.Command}, in.Args...), " "))
	}
	if in.URL != "" {
		fmt.Fprintf(w, "  url:       %s\n", in.URL)
	}
	if len(in.Env) > 0 {
		fmt.Fprintf(w, "  env:       %s (values hidden)\n", strings.Join(in.Env, ", "))
	}
	if len(in.Headers) > 0 {
		fmt.Fprintf(w, "  headers:   %s (values hidden)\n", strings.Join(in.Headers, ", "))
	}
	if len(in.HeadersHelper) > 0 {
		fmt.Fprintf(w, "  headers helper: %s\n", strings.Join(in.HeadersHelper, " "))
	}
	if in.OAuth {
		id := in.OAuthClientID
		if id == "" {
			id = "registered on first login"
		}
		fmt.Fprintf(w, "  oauth:     client %s\n", id)
	}
	if in.AuthScheme != "" {
		fmt.Fprintf(w, "  auth:      %s\n", in.AuthScheme)
	}
	state := in.State
	if in.Reason != "" {
		state += " (" + in.Reason + ")"
	}
	fmt.Fprintf(w, "  config:    %s\n", state)
	if c := in.Connection; c != nil {
		fmt.Fprintf(w, "  state:     %s\n", c.State)
		if c.Server != nil {
			fmt.Fprintf(w, "  server:    %s %s\n", c.Server.Name, c.Server.Version)
		}
		fmt.Fprintf(w, "  tools:     %d\n", c.Tools)
		if c.Error != "" {
			fmt.Fprintf(w, "  error:     %s\n", firstLine(c.Error))
		}
	}
}

func fileLine(in serverInfo) string {
	if in.File == "" {
		return "-"
	}
	if in.Line > 0 {
		return fmt.Sprintf("%s:%d", in.File, in.Line)
	}
	return in.File
}

func targetOf(in serverInfo) string {
	if in.URL != "" {
		return in.URL
	}
	return strings.Join(append([]string{in.Command}, in.Args...), " ")
}

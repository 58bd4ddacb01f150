package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/clientconf"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
)

// clientIDs lists the clients for help texts.
func clientIDs() string {
	var ids []string
	for _, c := range clientconf.Clients() {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ", ")
}

// clientCmd is `mcphost client connect|disconnect|list`.
func (a *app) clientCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Connect MCP clients (Claude Code, Cursor, VS Code, ...) to the gateway",
		Long: `Write the gateway into an MCP client's own configuration file, remove it again,
or list where it is connected. Clients: ` + clientIDs() + `.`,
	}
	cmd.AddCommand(a.clientConnectCmd(), a.clientDisconnectCmd(), a.clientListCmd())
	return cmd
}

// clientEnv is where the clients' files are looked for.
func (a *app) clientEnv() clientconf.Env {
	loc := config.Locate(a.lookupEnv, a.workDir)
	return clientconf.Env{LookupEnv: a.lookupEnv, WorkDir: a.workDir, ProjectDir: loc.ProjectRoot, GOOS: runtime.GOOS}
}

// clientBackupDir is where the clients' files are backed up: mcphost's
// own directory (beside its tool pins and tokens).
func (a *app) clientBackupDir() (string, error) {
	dir := config.Locate(a.lookupEnv, a.workDir).ConfigDir
	if dir == "" {
		return "", fmt.Errorf("no directory for the backups of the clients' files: %w (or set %s)", &clientconf.EnvError{Var: "HOME"}, config.EnvConfigDir)
	}
	return filepath.Join(dir, "client-backups"), nil
}

// clientScope parses -s for client c (its default scope when empty).
func clientScope(c clientconf.Client, s string) (clientconf.Scope, error) {
	if s == "" {
		return c.Scopes[0], nil
	}
	scope := clientconf.Scope(s)
	if !c.HasScope(scope) {
		return "", &usageError{&clientconf.ScopeError{Client: c, Scope: scope}}
	}
	return scope, nil
}

func lookupClient(id string) (clientconf.Client, error) {
	c, err := clientconf.Lookup(id)
	if err != nil {
		return c, &usageError{fmt.Errorf("%w (clients: %s)", err, clientIDs())}
	}
	return c, nil
}

func (a *app) clientConnectCmd() *cobra.Command {
	var scope, name, httpURL, tokenEnv string
	var yes bool
	cmd := &cobra.Command{
		Use:   "connect CLIENT",
		Short: "Write the gateway into a client's MCP configuration",
		Long: `Write the gateway into CLIENT's own MCP configuration file (` + clientIDs() + `),
changing only its entry ("mcphost", or --name): other servers, comments and
formatting stay. The change is shown and asked for first (--yes for scripts);
the file is backed up before the first change, and ` + "`mcphost client disconnect`" + `
restores it byte for byte.

By default the client starts the gateway on stdio: this mcphost executable with
` + "`serve --naming server`" + ` (the clients prefix tool names with the server's name
themselves), and --config FILE for each --config given here, so that a client
started from another directory serves the same configuration. The variables
MCPHOST_CONFIG_DIR, MCPHOST_LOCAL_CONFIG and MCPHOST_MANAGED_CONFIG, when set
here, go into the entry's env, so that the client's gateway uses the same files.

-s project writes a file meant to be committed (.mcp.json, .cursor/mcp.json,
.vscode/mcp.json, .gemini/settings.json, .codex/config.toml), so nothing of this
machine goes in: the command is ` + "`mcphost`" + ` from the PATH, a --config inside the
project is written relative to the project (${workspaceFolder}/... for VS Code;
the project's own .mcphost.hcl is dropped, as serve finds it), a --config
outside the project is refused, and the MCPHOST_* variables above are not
written (a warning says so). Codex reads .codex/config.toml only in projects it
trusts.

--http URL writes a remote entry instead (streamable HTTP, for a running
` + "`mcphost serve --http`" + `) whose bearer token the client reads from the environment
variable --token-env (default MCPHOST_SERVE_TOKEN, the one serve reads), in the
client's own syntax: the token itself is never written. Claude Desktop cannot
reach an HTTP server from its file: connect it over stdio.`,
		Example: `  mcphost client connect claude-code
  mcphost --config ~/mcphost.hcl client connect claude-desktop
  mcphost client connect cursor -s project
  mcphost client connect codex -s project
  mcphost client connect vscode --http http://127.0.0.1:8080/mcp
  mcphost client connect codex --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, sc, err := clientAndScope(args[0], scope)
			if err != nil {
				return err
			}
			entry := clientconf.Entry{Name: name}
			if httpURL != "" {
				entry.URL, entry.TokenEnv = httpURL, tokenEnv
				if warn := httpPathWarning(httpURL); warn != "" {
					fmt.Fprintln(a.stderr, "Warning: "+warn)
				}
			} else {
				if cmd.Flags().Changed("token-env") {
					return &usageError{errors.New("--token-env goes with --http")}
				}
				if err := a.stdioEntry(c, sc, &entry); err != nil {
					return err
				}
			}
			backups, err := a.clientBackupDir()
			if err != nil {
				return err
			}
			ch, err := clientconf.Connect(c, sc, a.clientEnv(), entry, backups)
			var oe *clientconf.OtherEntryError
			var sf *clientconf.SameFileError
			if errors.Is(err, clientconf.ErrNoHTTP) || errors.Is(err, clientconf.ErrBadEntry) || errors.As(err, &oe) || errors.As(err, &sf) {
				return &usageError{err}
			}
			if err != nil {
				return err
			}
			if ch.Unchanged() {
				fmt.Fprintf(a.stdout, "%s (%s scope) is already connected to the gateway as %q in %s\n", c.Name, sc, ch.Name, ch.Path)
				return nil
			}
			if err := a.writeClientChange(ch, yes, "connect"); err != nil {
				return err
			}
			how := "stdio"
			if entry.URL != "" {
				how = "streamable HTTP at " + entry.URL
			}
			fmt.Fprintf(a.stdout, "Connected %s (%s scope) to the gateway as %q (%s) in %s\n", c.Name, sc, ch.Name, how, ch.Path)
			fmt.Fprintf(a.stdout, "Undo with: mcphost client disconnect %s%s%s\n", c.ID, scopeFlag(c, sc), nameFlag(ch.Name))
			if c.ID == "claude-code" && sc == clientconf.ScopeUser {
				fmt.Fprintln(a.stdout, "A running Claude Code rewrites this file from memory: restart it (quit every session) so that it reads the entry and keeps it.")
			}
			switch {
			case entry.URL != "" && entry.TokenEnv != "":
				fmt.Fprintf(a.stdout, "%s reads the bearer token from $%s when it starts: set it in the client's environment to the token `mcphost serve --http` uses.\n", c.Name, entry.TokenEnv)
			case entry.URL == "" && len(a.configs) == 0:
				fmt.Fprintf(a.stdout, "The gateway serves the configuration it finds from %s's working directory (your user configuration, and a project's when started in one); pass --config FILE to serve a given file.\n", c.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&scope, "scope", "s", "", "the client's configuration `SCOPE`: user or project, where the client has both (default user)")
	cmd.Flags().StringVar(&name, "name", clientconf.DefaultName, "the entry's `NAME` in the client's file")
	cmd.Flags().StringVar(&httpURL, "http", "", "connect to a running 'mcphost serve --http' at `URL` (its /mcp endpoint) instead of starting the gateway on stdio")
	cmd.Flags().StringVar(&tokenEnv, "token-env", clientconf.DefaultTokenEnv, "with --http: the environment `VARIABLE` the client reads the bearer token from (empty: no Authorization header)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "write without asking")
	return cmd
}

func (a *app) clientDisconnectCmd() *cobra.Command {
	var scope, name string
	var yes bool
	cmd := &cobra.Command{
		Use:   "disconnect CLIENT",
		Short: "Remove the gateway from a client's MCP configuration",
		Long: `Remove the gateway's entry from CLIENT's MCP configuration file. When the file is
as ` + "`mcphost client connect`" + ` left it, it is restored byte for byte from the backup
(removed when connect created it); when it changed since, only the entry is
removed. The change is shown and asked for first (--yes for scripts).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, sc, err := clientAndScope(args[0], scope)
			if err != nil {
				return err
			}
			backups, err := a.clientBackupDir()
			if err != nil {
				return err
			}
			ch, err := clientconf.Disconnect(c, sc, a.clientEnv(), name, backups)
			if err != nil {
				return err
			}
			if ch.Unchanged() {
				fmt.Fprintf(a.stdout, "%s (%s scope) has no entry %q in %s: nothing to do\n", c.Name, sc, ch.Name, ch.Path)
				return nil
			}
			if err := a.writeClientChange(ch, yes, "disconnect"); err != nil {
				return err
			}
			for _, w := range ch.Warnings {
				fmt.Fprintln(a.stderr, "Warning: "+w)
			}
			switch {
			case ch.Restore && ch.After == nil:
				fmt.Fprintf(a.stdout, "Disconnected %s (%s scope): removed %s, which mcphost had created\n", c.Name, sc, ch.Path)
			case ch.Restore:
				fmt.Fprintf(a.stdout, "Disconnected %s (%s scope): restored %s byte for byte from the backup\n", c.Name, sc, ch.Path)
			case ch.ChangedSince:
				fmt.Fprintf(a.stdout, "Disconnected %s (%s scope): %s changed since mcphost connected it, so only the %q entry was removed (the rest of the file is as it is now)\n", c.Name, sc, ch.Path, ch.Name)
			default:
				fmt.Fprintf(a.stdout, "Disconnected %s (%s scope): removed the %q entry from %s\n", c.Name, sc, ch.Name, ch.Path)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&scope, "scope", "s", "", "the client's configuration `SCOPE`: user or project (default user)")
	cmd.Flags().StringVar(&name, "name", clientconf.DefaultName, "the entry's `NAME` in the client's file")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "write without asking")
	return cmd
}

func (a *app) clientListCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the clients, their configuration files, and whether the gateway is connected there",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			env := a.clientEnv()
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CLIENT\tSCOPE\tFILE\tGATEWAY")
			var failed bool
			for _, c := range clientconf.Clients() {
				for _, sc := range c.Scopes {
					path, conn, err := clientconf.Status(c, sc, env, name)
					var state string
					switch {
					case err != nil && path == "":
						state, path = "-", "("+err.Error()+")"
					case err != nil:
						state, failed = "unreadable: "+redact.String(err.Error()), true
					case conn == nil:
						state = "not connected"
						if _, serr := os.Stat(path); serr != nil {
							state = "not connected (no file)"
						}
					case conn.Transport == "stdio":
						state = "connected: stdio"
						if len(conn.Configs) > 0 {
							state += " --config " + strings.Join(conn.Configs, " --config ")
						}
					default:
						state = "connected: " + conn.Transport + " " + conn.URL
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, sc, path, state)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if failed {
				return errSilent
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", clientconf.DefaultName, "the gateway entry's `NAME` to look for")
	return cmd
}

// writeClientChange shows ch, every line of it masked (maskDiffLine),
// asks for it unless yes, and applies it.
func (a *app) writeClientChange(ch *clientconf.Change, yes bool, verb string) error {
	fmt.Fprintf(a.stdout, "%s (%s scope): %s\n", ch.Client.Name, ch.Scope, ch.Path)
	if ch.Restore {
		fmt.Fprintln(a.stdout, "The file is as mcphost left it: it is restored from the backup.")
	}
	if ch.ChangedSince {
		fmt.Fprintln(a.stdout, "The file changed since mcphost connected it: only the entry is removed.")
	}
	for _, line := range strings.SplitAfter(string(ch.Diff()), "\n") {
		if line == "" {
			continue
		}
		fmt.Fprint(a.stdout, maskDiffLine(line))
	}
	if yes {
		return ch.Apply()
	}
	if !a.isTerminal(a.stdin) {
		fmt.Fprintf(a.stderr, "Error: not a terminal: review the change above and run the command again with --yes to %s\n", verb)
		return exitErr{exitConfig}
	}
	fmt.Fprintf(a.stderr, "Write %s? [y/N] ", ch.Path)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
		fmt.Fprintln(a.stderr, "Nothing written.")
		return errSilent
	}
	return ch.Apply()
}

// clientAndScope returns the client id names and its scope scope (its
// default when "").
func clientAndScope(id, scope string) (clientconf.Client, clientconf.Scope, error) {
	c, err := lookupClient(id)
	if err != nil {
		return clientconf.Client{}, "", err
	}
	sc, err := clientScope(c, scope)
	return c, sc, err
}

func scopeFlag(c clientconf.Client, sc clientconf.Scope) string {
	if sc == c.Scopes[0] {
		return ""
	}
	return " -s " + string(sc)
}

func nameFlag(name string) string {
	if name == clientconf.DefaultName {
		return ""
	}
	return " --name " + name
}

// Package cli is the mcphost command line. Run executes it with explicit
// arguments and streams so that tests can call it; nothing here calls os.Exit.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// Exit codes.
const (
	exitOK     = 0
	exitError  = 1 // the operation failed (a tool error, a server failure)
	exitConfig = 2 // usage or configuration error
	// exitNotConnected: `mcphost servers` found a server that should be
	// connected and is not.
	exitNotConnected = 3
)

// errSilent marks an error already reported to the user.
var errSilent = errors.New("reported")

// exitErr carries an exit code through cobra.
type exitErr struct{ code int }

func (e exitErr) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs the CLI on the process's arguments and streams and returns the exit code.
//
// MCPHOST_CPUPROFILE=FILE writes a CPU profile of the run (for `go tool pprof`).
func Main() int {
	ctx, sigs := watchSignals(context.Background())
	defer sigs.close()
	if path := os.Getenv("MCPHOST_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if err := pprof.StartCPUProfile(f); err == nil {
				defer func() {
					pprof.StopCPUProfile()
					f.Close()
				}()
			}
		}
	}
	return run(ctx, sigs, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// app is one invocation's state.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	configs        []string
	logLevel       string
	logFormat      string
	lookupEnv      func(string) (string, bool)
	workDir        string
	sigs           *signals // nil unless run by Main

	// Terminal prompts (prompt.go): askMu guards promptTurn's creation;
	// holding the turn guards the rest: one reader over stdin, the read a
	// prompt that gave up left under way, and the tools allowed "always".
	askMu         sync.Mutex
	promptTurn    chan struct{}
	stdinReader   *bufio.Reader
	pendingRead   chan lineRead
	alwaysAllowed map[string]bool

	// openURL opens a URL in the user's browser. OPTIONAL: openBrowser's
	// default ($BROWSER, else the platform's opener). Tests replace it.
	openURL func(string) error

	// The shared state and keys a command opened (state.go).
	state state.Backend
	keys  *sealbox.Keys
}

// Run executes the mcphost command line and returns its exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, nil, args, stdin, stdout, stderr)
}

func run(ctx context.Context, sigs *signals, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, lookupEnv: os.LookupEnv, sigs: sigs}
	a.workDir, _ = os.Getwd()
	return a.execute(ctx, args)
}

// execute runs the command line args and returns its exit code.
func (a *app) execute(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	a.closeState()
	return exitCode(root, args, err, a.stderr)
}

// exitCode is the exit code of root's execution on args that returned err;
// it prints err on stderr unless it was already reported.
func exitCode(root *cobra.Command, args []string, err error, stderr io.Writer) int {
	var ee exitErr
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errSilent):
		return exitError
	}
	// An error may quote a server or plugin (an answer, a stderr tail).
	fmt.Fprintf(stderr, "Error: %s\n", redact.String(err.Error()))
	if isUsage(root, args, err) {
		return exitConfig
	}
	return exitError
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcphost",
		Short: "A plugin-based MCP host: many MCP servers, one registry",
		Long: `mcphost connects to many MCP servers, merges their tools, resources and
prompts into one registry with stable names (mcp__SERVER__TOOL), and serves it
to MCP clients (mcphost serve), operators (this CLI) and programs (the host package).

Configuration is HCL, read from the managed, local, project and user scopes
(or only the files given with --config). The reference is in the repository's
docs/ (docs/README.md); docs/cli has every command.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch a.logFormat {
			case "", "text", "json":
				return nil
			}
			fmt.Fprintf(a.stderr, "Error: --log-format %q: use text or json\n", a.logFormat)
			return exitErr{exitConfig}
		},
	}
	root.PersistentFlags().StringArrayVar(&a.configs, "config", nil, "use this configuration `FILE` instead of discovery (repeatable; later files win; the managed file still governs)")
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "", "log level: trace, debug, info, warn, error, off (default warn, or $MCPHOST_LOG_LEVEL)")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "", "log format: text, or json (one JSON object a line, for machines) (default text, or $MCPHOST_LOG_FORMAT)")
	root.AddCommand(a.serversCmd(), a.serverCmd(), a.toolsCmd(), a.callCmd(), a.resourcesCmd(), a.promptsCmd(), a.configCmd(), a.serveCmd(), a.pluginsCmd(), a.permissionsCmd(), a.authCmd(), a.clientCmd(), a.importCmd(), a.registryCmd(), a.versionCmd())
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	classifyUsage(root)
	return root
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, "mcphost", host.Version)
			return nil
		},
	}
}

func (a *app) logger() hclog.Logger {
	level := a.logLevel
	if level == "" {
		level, _ = a.lookupEnv("MCPHOST_LOG_LEVEL")
	}
	if level == "" {
		level = "warn"
	}
	format := a.logFormat
	if format == "" {
		format, _ = a.lookupEnv("MCPHOST_LOG_FORMAT")
	}
	return redact.Logger(hclog.New(&hclog.LoggerOptions{
		Name:       "mcphost",
		Level:      hclog.LevelFromString(level),
		Output:     a.stderr,
		JSONFormat: format == "json",
	}))
}

// loadConfig loads the configuration and renders its diagnostics. Warnings are
// printed; errors stop the command.
func (a *app) loadConfig() (*config.Config, error) { return a.load(false) }

// load loads the configuration (only settings and plugins with pluginsOnly).
func (a *app) load(pluginsOnly bool) (*config.Config, error) {
	cfg, diags := a.loadWith(pluginsOnly)
	if len(diags) > 0 {
		a.printDiags(cfg, diags)
	}
	if diags.HasErrors() {
		return cfg, exitErr{exitConfig}
	}
	return cfg, nil
}

// loadOnly loads the configuration as loadConfig does, leaving its
// diagnostics to the caller (a reload logs them).
func (a *app) loadOnly() (*config.Config, hcl.Diagnostics) { return a.loadWith(false) }

func (a *app) loadWith(pluginsOnly bool) (*config.Config, hcl.Diagnostics) {
	return config.Load(&config.LoadOptions{
		LookupEnv:   a.lookupEnv,
		WorkDir:     a.workDir,
		Files:       a.configs,
		PluginsOnly: pluginsOnly,
	})
}

func (a *app) printDiags(cfg *config.Config, diags hcl.Diagnostics) {
	width := 0
	color := false
	if f, ok := a.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		width, _, _ = term.GetSize(int(f.Fd()))
		color = true
	}
	w := hcl.NewDiagnosticTextWriter(a.stderr, cfg.Sources, uint(width), color)
	for _, d := range diags {
		// A compiler-style file:line:col first, for editors and grep; then
		// HCL's own rendering with the source snippet.
		if d.Subject != nil {
			fmt.Fprintf(a.stderr, "%s:%d:%d:\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		w.WriteDiagnostic(d)
	}
}

// newHost loads the configuration and starts a host on it, for a command
// run at the user's terminal.
func (a *app) newHost() (*host.Host, error) { return a.startHost(true) }

// startHost loads the configuration and starts a host on it, adjusted by
// adjust. interactive is false for serve: the gateway's requests come from
// its MCP client, so the CLI's own answers to servers' elicitation and
// sampling requests (the terminal form, the sampling refusal) are not
// installed; the gateway passes those requests to the client that made the
// call.
func (a *app) startHost(interactive bool, adjust ...func(*host.Options)) (*host.Host, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	return a.hostOn(cfg, interactive, adjust...)
}

// hostOn is startHost for a configuration already loaded.
func (a *app) hostOn(cfg *config.Config, interactive bool, adjust ...func(*host.Options)) (*host.Host, error) {
	opts := &host.Options{Logger: a.logger(), LookupEnv: a.lookupEnv}
	st, _, err := a.sharedState(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	// Tokens and tool pins: this machine's files, or the replicas' shared
	// state (a state block).
	opts.TokenStore, opts.Pins = state.AnnouncedTokens(st), st.Pins()
	opts.PresentAuthURL = a.presenter("the server", false)
	if a.isTerminal(a.stdin) && a.isTerminal(a.stderr) {
		opts.Ask = a.askOnTerminal
		if interactive {
			// Elicitation is offered to servers only when someone can
			// answer it: without a terminal, OnElicit stays nil and servers
			// see no elicitation capability.
			opts.OnElicit = a.elicitOnTerminal
		}
	}
	if interactive {
		// Sampling is offered although the CLI has no LLM: a server that
		// asks gets declineSampling's error, which says why and what to use
		// instead, and the user sees a warning. Not offering it would leave
		// a server that needs sampling to fail in its own words; the cost is
		// that a server able to do without sampling now gets that error
		// rather than taking its fallback (unless it falls back on errors too).
		opts.OnCreateMessage = a.declineSampling
	}
	for _, f := range adjust {
		f(opts)
	}
	return host.New(cfg, opts)
}

func (a *app) writeJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (a *app) isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

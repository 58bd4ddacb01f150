package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcphost/mcphost/host/config"
)

// `mcphost server add|add-json|remove|list|get`: server management. Edits go
// through config.AddServerBlock and config.RemoveServerBlock (spliced into
// the file's bytes: every byte outside the block stays); the whole configuration
// is loaded with the edit in place before anything is written, and the file
// is replaced atomically.

// EnvClientSecret supplies --client-secret's value without a prompt.
const EnvClientSecret = "MCPHOST_CLIENT_SECRET"

func (a *app) serverCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Add, remove and inspect configured servers",
		Long: `Manage the server blocks of the configuration files.

  mcphost server add NAME [--] COMMAND [ARGS…]   a stdio server
  mcphost server add NAME URL                    a remote server (transport from the URL)
  mcphost server add [NAME] --from-registry ID   a server of the MCP Registry (mcphost registry search)
  mcphost server add-json NAME JSON              the mcpServers JSON shape of other hosts
  mcphost server remove NAME
  mcphost server list [--json]
  mcphost server get NAME [--json]

Servers are written to the local scope (private to you and this project) unless
-s user or -s project says otherwise; with --config FILE, to that file. The
managed scope is never written.`,
	}
	cmd.AddCommand(a.serverAddCmd(), a.serverAddJSONCmd(), a.serverRemoveCmd(), a.serverListCmd(), a.serverGetCmd())
	return cmd
}

// addFlags are the flags of server add and add-json.
type addFlags struct {
	scope           string
	transport       string
	env             []string
	headers         []string
	clientID        string
	clientSecret    bool
	clientSecretEnv string
	secretInConfig  bool
	callbackPort    int
	xaa             string
	headersHelper   string
	inheritEnv      []string
	reg             registryAddFlags // --from-registry (server_registry.go)
}

func (f *addFlags) register(cmd *cobra.Command, withServerFlags bool) {
	fl := cmd.Flags()
	fl.StringVarP(&f.scope, "scope", "s", "local", "where to write: local (you, this project), user (you, everywhere) or project (.mcphost.hcl, shared)")
	if withServerFlags {
		fl.StringVarP(&f.transport, "transport", "t", "", "stdio, http, sse or a plugin transport such as ws (default: stdio for a command; from the URL otherwise)")
		fl.StringArrayVarP(&f.env, "env", "e", nil, "an environment variable of a stdio server, `KEY=VALUE` (repeatable)")
		fl.StringSliceVar(&f.inheritEnv, "inherit-env", nil, "host environment variables a stdio server also gets, by `NAME` (repeatable, or comma-separated): inherit_env")
		fl.StringArrayVarP(&f.headers, "header", "H", nil, "a request header of a remote server, `\"Name: value\"` (repeatable)")
		fl.StringVar(&f.headersHelper, "header-helper", "", "a `COMMAND` (split at spaces) printing headers as a JSON object before each connect")
	}
	fl.StringVar(&f.clientID, "client-id", "", "the OAuth client ID of a pre-registered client (with --xaa: at the server's authorization server)")
	fl.BoolVar(&f.clientSecret, "client-secret", false, "ask for the client secret (or read $"+EnvClientSecret+"); it is stored in the secrets directory, not in the file")
	fl.StringVar(&f.clientSecretEnv, "client-secret-env", "", "write client_secret = env(\"`NAME`\"): the secret is read from that variable at run time")
	fl.BoolVar(&f.secretInConfig, "secret-in-config", false, "with --client-secret: write the secret into the file in clear text")
	fl.IntVar(&f.callbackPort, "callback-port", 0, "the OAuth redirect port registered for --client-id")
	fl.StringVar(&f.xaa, "xaa", "", "authenticate through the identity provider `IDP` (an idp block) with Cross-App Access")
}

func (a *app) serverAddCmd() *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add [flags] NAME [--] COMMAND [ARGS…] | NAME URL | [NAME] --from-registry IDENTIFIER[@VERSION]",
		Short: "Add a server to a configuration file",
		Long: `Adds a server block. A stdio server runs COMMAND with ARGS (put -- before a
command whose arguments start with '-'); a remote server is reached at URL:
http(s):// is streamable HTTP (sse when the path ends in /sse), ws(s):// the ws
plugin transport; -t overrides. The whole configuration is checked with the
new block before the file is written; comments and layout are kept.

A project server (-s project) still needs approval: mcphost config approve NAME.

--from-registry installs a server of the MCP Registry (--registry URL or
$MCPHOST_REGISTRY_URL for another): its first package by default (npm: npx,
PyPI: uvx, OCI: docker run, NuGet: dnx, at the exact version), else its first
remote; --package N, --remote N or -t stdio|http|sse choose. NAME defaults
to the identifier's last segment. Its inputs come from -e KEY=VALUE and
-H "Name: value", else are asked for on a terminal; a secret is stored
(secret("…")), or, not given without a terminal or with --env-from, read
from the environment at run time (env("NAME")). The block records
registry = "NAME@VERSION" and runs only once approved: mcphost config approve NAME.`,
		Example: `  mcphost server add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src
  mcphost server add -e API_KEY=abc github -- github-mcp
  mcphost server add docs https://docs.example.com/mcp -H "X-Team: core"
  mcphost server add -s user --client-id mcphost --client-secret crm https://crm.example.com/mcp
  mcphost server add --from-registry io.github.modelcontextprotocol/filesystem -e target_dir=$HOME/src`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.reg.from != "" {
				return nil // NAME is optional
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return a.addFromRegistry(cmd, &f, nil)
			}
			name, rest, err := splitAddArgs(cmd, args)
			if err != nil {
				return err
			}
			if f.reg.from != "" {
				return a.addFromRegistry(cmd, &f, append([]string{name}, rest...))
			}
			e, err := f.entry(name, rest)
			if err != nil {
				return err
			}
			return a.addServer(cmd, &f, e)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd, true)
	f.reg.register(cmd)
	return cmd
}

func (a *app) serverAddJSONCmd() *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add-json [flags] NAME JSON",
		Short: "Add a server given in the mcpServers JSON shape",
		Long: `Adds a server from one entry of the mcpServers JSON that other MCP hosts use:
{"type": "stdio", "command": …, "args": […], "env": {…}} or
{"type": "http"|"sse"|"ws", "url": …, "headers": {…}, "headersHelper": …,
 "oauth": {"clientId": …, "callbackPort": …}}. Unknown or repeated members
are refused. A client secret is given with --client-secret, not in the JSON.
${NAME}, ${NAME:-default} and ${env:NAME} are written as env() calls; a literal
secret in env or headers (a variable or header named like a token, key,
secret or password, or a value shaped like a token) is stored in the secrets
directory and written as secret("…"), never as text in the file.`,
		Example: `  mcphost server add-json weather '{"type":"stdio","command":"weather-mcp","env":{"UNITS":"metric"}}'`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !config.ValidServerName(args[0]) {
				return fmt.Errorf("invalid server name %q: use letters and digits with single '-' or '_' between them, at most %d characters", args[0], config.MaxServerNameLen)
			}
			// A literal secret of the JSON (a token in env or headers) is
			// stored in the secrets directory and read with secret().
			t, err := a.editTarget(cmd, f.scope)
			if err != nil {
				return err
			}
			store, err := a.newSecretStore(t, false)
			if err != nil {
				return err
			}
			e, err := config.ServerEntryFromJSONWith(args[0], []byte(args[1]), config.EntryOptions{StoreSecret: store.forServer(args[0])})
			if err == nil {
				err = f.applyAuth(e)
			}
			if err == nil {
				err = a.addServer(cmd, &f, e)
			}
			if err != nil {
				store.undo()
				if errors.Is(err, config.ErrServerJSON) {
					return fmt.Errorf("%w\n%s", err, usageHint(cmd))
				}
				return err
			}
			if n := store.count(args[0]); n > 0 {
				fmt.Fprintf(a.stdout, "%d secret value(s) of the JSON are stored in %s (readable by you only) and read with secret()\n", n, store.dir)
			}
			return nil
		},
	}
	f.register(cmd, false)
	return cmd
}

// splitAddArgs returns NAME and the command or URL of server add. Flags
// may come before NAME, between NAME and the command or URL, and after a
// URL; everything from a command on (or after --) is the command's own.
func splitAddArgs(cmd *cobra.Command, args []string) (name string, rest []string, err error) {
	name, rest = args[0], args[1:]
	fl := cmd.Flags()
	switch {
	case len(rest) > 0 && rest[0] == "--":
		return name, rest[1:], nil
	case len(rest) > 0 && strings.HasPrefix(rest[0], "-"):
		if err := fl.Parse(rest); err != nil {
			return "", nil, err
		}
		dashed := fl.ArgsLenAtDash() >= 0
		rest = fl.Args()
		if dashed {
			return name, rest, nil
		}
	}
	if len(rest) > 1 && strings.Contains(rest[0], "://") {
		// Flags after a URL.
		fl.SetInterspersed(true)
		if err := fl.Parse(rest[1:]); err != nil {
			return "", nil, err
		}
		rest = append(rest[:1:1], fl.Args()...)
	}
	return name, rest, nil
}

func usageHint(cmd *cobra.Command) string { return "See: " + cmd.CommandPath() + " --help" }

// entry builds the server block of `server add` from NAME and what follows.
func (f *addFlags) entry(name string, rest []string) (*config.ServerEntry, error) {
	if len(rest) == 0 {
		return nil, errors.New("give a command (a stdio server) or a URL after the name")
	}
	e := &config.ServerEntry{Name: name, Transport: f.transport}
	remote := f.transport != "" && f.transport != config.TransportStdio
	if f.transport == "" && len(rest) == 1 && strings.Contains(rest[0], "://") {
		remote = true
		e.Transport = config.TransportFromURL(rest[0])
	}
	if !remote && f.transport == "" && strings.Contains(rest[0], "://") {
		return nil, fmt.Errorf("a URL takes no arguments after it (got %q); for a stdio command give -t stdio", rest[1:])
	}
	if remote {
		if len(rest) != 1 {
			return nil, fmt.Errorf("a %s server takes one URL, got %d arguments", e.Transport, len(rest))
		}
		e.URL = rest[0]
	} else {
		e.Transport = "" // stdio: the default
		e.Command, e.Args = rest[0], rest[1:]
	}
	if len(f.env) > 0 {
		if remote {
			return nil, errors.New("-e sets a stdio server's environment; a remote server takes -H headers")
		}
		e.Env = map[string]string{}
		for i, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				// (Not quoted: what was given may be the secret itself.)
				return nil, fmt.Errorf("-e number %d: want KEY=VALUE", i+1)
			}
			e.Env[k] = v
		}
	}
	if err := f.applyInheritEnv(e, remote); err != nil {
		return nil, err
	}
	if len(f.headers) > 0 {
		if !remote {
			return nil, errors.New("-H sets a remote server's headers; a stdio server takes -e variables")
		}
		e.Headers = map[string]string{}
		for i, h := range f.headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("-H number %d: want \"Name: value\"", i+1)
			}
			e.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if f.headersHelper != "" {
		if !remote {
			return nil, errors.New("--header-helper is for remote servers")
		}
		e.HeadersHelper = strings.Fields(f.headersHelper)
	}
	return e, f.applyAuth(e)
}

// applyAuth adds the oauth or auth "xaa" block the flags ask for; the
// secret's value is filled in by addServer.
func (f *addFlags) applyAuth(e *config.ServerEntry) error {
	secretAsked := f.clientSecret || f.clientSecretEnv != ""
	switch {
	case f.clientSecret && f.clientSecretEnv != "":
		return errors.New("give --client-secret or --client-secret-env, not both")
	case f.secretInConfig && !f.clientSecret:
		return errors.New("--secret-in-config goes with --client-secret")
	case f.clientSecretEnv != "" && !config.ValidEnvName(f.clientSecretEnv):
		return fmt.Errorf("--client-secret-env %q: not a variable name", f.clientSecretEnv)
	}
	if f.xaa != "" {
		if e.OAuth != nil {
			return errors.New("--xaa replaces the oauth block; the JSON has one")
		}
		e.XAA = &config.XAAEntry{IdP: f.xaa, ClientID: f.clientID}
		if f.callbackPort != 0 {
			return errors.New("--callback-port is for the built-in OAuth client; with --xaa the IdP's callback_port is in its idp block")
		}
		return nil
	}
	if f.clientID == "" && !secretAsked && f.callbackPort == 0 {
		return nil
	}
	if e.URL == "" {
		return errors.New("--client-id, --client-secret and --callback-port are for remote servers")
	}
	if e.OAuth == nil {
		e.OAuth = &config.OAuthEntry{}
	}
	if f.clientID != "" {
		e.OAuth.ClientID = f.clientID
	}
	if f.callbackPort != 0 {
		e.OAuth.CallbackPort = f.callbackPort
	}
	if secretAsked && e.OAuth.ClientID == "" {
		return errors.New("a client secret goes with --client-id")
	}
	return nil
}

// secretRef returns the block's client_secret slot, if any.
func secretRef(e *config.ServerEntry) *config.SecretRef {
	switch {
	case e.XAA != nil:
		return &e.XAA.ClientSecret
	case e.OAuth != nil:
		return &e.OAuth.ClientSecret
	}
	return nil
}

// target is the file an edit goes to.
type target struct {
	path  string // as the loader names it (the overlay's key)
	scope config.Scope
}

// editTarget returns the file of scope name (or of --config).
func (a *app) editTarget(cmd *cobra.Command, name string) (target, error) {
	if len(a.configs) > 0 {
		if cmd.Flags().Changed("scope") {
			return target{}, errors.New("-s and --config together: --config names the file to edit")
		}
		p := a.configs[len(a.configs)-1]
		if !filepath.IsAbs(p) {
			p = filepath.Join(a.workDir, p)
		}
		return target{p, config.ScopeCLI}, nil
	}
	scope, err := config.ParseScope(name)
	if err != nil {
		return target{}, fmt.Errorf("-s %s: allowed: local, user, project", name)
	}
	loc := config.Locate(a.lookupEnv, a.workDir)
	var p string
	switch scope {
	case config.ScopeLocal:
		p = loc.Local
	case config.ScopeUser:
		p = loc.User
	case config.ScopeProject:
		// The repository's root (the nearest directory with a project file
		// or .git), never a file further up, nor the home directory's
		// (which belongs to the user scope and is never read as a project).
		if home, _ := a.lookupEnv("HOME"); home != "" && filepath.Clean(loc.ProjectRoot) == filepath.Clean(home) {
			return target{}, errors.New("the working directory is not in a project (no .git or .mcphost.hcl below your home directory): run this in the project, or use -s user")
		}
		p = filepath.Join(loc.ProjectRoot, config.ProjectFileName)
		// A repository's file may be a link to one of the user's own
		// (written there, an edit would skip approval) or another user's.
		if st, err := os.Lstat(p); err == nil {
			if st.Mode()&os.ModeSymlink != 0 {
				return target{}, fmt.Errorf("%s is a symbolic link: mcphost does not edit a project file through a link", p)
			}
			if err := config.CheckOwner(p); err != nil {
				return target{}, fmt.Errorf("not editing %s: %w", p, err)
			}
		}
	case config.ScopeManaged:
		return target{}, errors.New("the managed scope is written by administrators, not by mcphost")
	default:
		return target{}, fmt.Errorf("-s %s: allowed: local, user, project", name)
	}
	if p == "" {
		return target{}, errors.New("cannot find the configuration directory: set HOME or MCPHOST_CONFIG_DIR")
	}
	return target{p, scope}, nil
}

// addServer writes e into the target file.
func (a *app) addServer(cmd *cobra.Command, f *addFlags, e *config.ServerEntry) error {
	if !config.ValidServerName(e.Name) {
		return fmt.Errorf("invalid server name %q: use letters and digits with single '-' or '_' between them, at most %d characters", e.Name, config.MaxServerNameLen)
	}
	t, err := a.editTarget(cmd, f.scope)
	if err != nil {
		return err
	}
	a.placePaths(t, e)
	src, err := readIfExists(t.path)
	if err != nil {
		return err
	}
	if ok, err := config.HasServerBlock(src, t.path, e.Name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("server %q is already in %s; remove it first (mcphost server remove %s)", e.Name, t.path, e.Name)
	}

	// The client secret: from the environment or a prompt, then stored
	// (or, if asked, written into the file).
	var stored, secretsDir string
	if ref := secretRef(e); ref != nil {
		switch {
		case f.clientSecretEnv != "":
			// The configuration must load as written, so the variable must
			// be set now (and wherever mcphost runs).
			if _, ok := a.lookupEnv(f.clientSecretEnv); !ok {
				return fmt.Errorf("%s is not set: the configuration would not load without it; set it first (and wherever mcphost runs)", f.clientSecretEnv)
			}
			ref.Env = f.clientSecretEnv
		case f.clientSecret:
			if t.scope == config.ScopeProject {
				return errors.New("a project file is shared: it cannot hold or read your secret; use --client-secret-env NAME")
			}
			v, err := a.readClientSecret()
			if err != nil {
				return err
			}
			if f.secretInConfig {
				ref.Value = v
				if st, err := os.Stat(t.path); err == nil && config.OpenTo(st, 0o077) {
					fmt.Fprintf(a.stderr, "warning: %s can be read by others (mode %v), and now holds the secret in clear text\n", t.path, st.Mode().Perm())
				}
				break
			}
			secretsDir = config.SecretsDir(a.lookupEnv, a.workDir)
			if secretsDir == "" {
				return errors.New("cannot find the configuration directory for the secret: set HOME or MCPHOST_CONFIG_DIR")
			}
			stored = secretName(e.Name, t.path)
			ref.Stored = stored
			if err := config.WriteSecret(secretsDir, stored, v); err != nil {
				return err
			}
		}
	}
	out, err := config.AddServerBlock(src, t.path, e)
	if err == nil {
		err = a.checkEdit(t, out, e.Name, true)
	}
	if err == nil {
		err = writeConfigFile(t.path, src, out, t.scope)
	}
	if err != nil {
		if stored != "" {
			config.DeleteSecret(secretsDir, stored)
		}
		return err
	}
	fmt.Fprintf(a.stdout, "Added server %q to %s (%s scope)\n", e.Name, t.path, t.scope)
	if stored != "" {
		fmt.Fprintf(a.stdout, "The client secret is stored in %s (readable by you only)\n", filepath.Join(secretsDir, stored))
	}
	if t.scope == config.ScopeProject {
		fmt.Fprintf(a.stdout, "Project servers run only once approved: mcphost config approve %s\n", e.Name)
	}
	return nil
}

// placePaths rewrites the relative paths of e, given relative to the
// working directory, for the target file (pathFor).
func (a *app) placePaths(t target, e *config.ServerEntry) { a.placePathsFrom(t, a.workDir, e) }

// placePathsFrom is placePaths for paths relative to base.
func (a *app) placePathsFrom(t target, base string, e *config.ServerEntry) {
	// Relative program paths are relative to the file that declares them;
	// on the command line they were relative to the working directory.
	if e.Cwd == "" {
		e.Command = pathFor(t, base, e.Command, false, e.Expand)
	} // (else a relative command is relative to cwd, as exec runs it)
	if len(e.HeadersHelper) > 0 {
		e.HeadersHelper[0] = pathFor(t, base, e.HeadersHelper[0], false, e.Expand)
	}
	e.Cwd = pathFor(t, base, e.Cwd, true, e.Expand)
	e.EnvFile = pathFor(t, base, e.EnvFile, true, e.Expand)
}

// editErrors loads the whole configuration with out in place of the target
// file and returns it and the errors that refuse the edit.
func (a *app) editErrors(t target, out []byte) (*config.Config, hcl.Diagnostics) {
	cfg, diags := config.Load(&config.LoadOptions{
		LookupEnv: a.lookupEnv,
		WorkDir:   a.workDir,
		Files:     a.configs,
		Overlay:   map[string][]byte{t.path: out},
	})
	var errs hcl.Diagnostics
	for _, d := range diags {
		// An error in a project file is loaded as a warning (the block is
		// skipped); in the file being edited it refuses the edit.
		if d.Severity == hcl.DiagError || config.IsProjectError(d) && d.Subject != nil && d.Subject.Filename == t.path {
			errs = append(errs, d)
		}
	}
	return cfg, errs
}

// checkEdit loads the whole configuration with out in place of the target
// file and refuses the edit on any error; for an added server it also says
// when the server would not be used.
func (a *app) checkEdit(t target, out []byte, name string, added bool) error {
	cfg, errs := a.editErrors(t, out)
	if len(errs) > 0 {
		a.printDiags(cfg, errs)
		return fmt.Errorf("not written: the configuration would not load (%d error(s) above)", len(errs))
	}
	read := false
	for _, f := range cfg.Files {
		read = read || f.Path == t.path
	}
	if !read {
		return fmt.Errorf("not written: %s would not be read as part of the configuration", t.path)
	}
	if !added {
		return nil
	}
	for _, s := range cfg.Servers {
		if s.Name != name {
			continue
		}
		if s.BlockedBy != "" {
			return fmt.Errorf("not written: the managed policy blocks server %q (%s)", name, s.BlockedBy)
		}
		if s.Origin.File != t.path {
			fmt.Fprintf(a.stderr, "note: %q from %s (%s scope) takes precedence over the one added\n", name, s.Origin.File, s.Origin.Scope)
		}
		return nil
	}
	for _, s := range cfg.Skipped {
		if s.Server.Name == name && s.Server.Origin.File == t.path {
			fmt.Fprintf(a.stderr, "note: server %q will not be used: %s\n", name, s.Reason)
			return nil
		}
	}
	return fmt.Errorf("not written: server %q would not be loaded from %s", name, t.path)
}

// pathFor rewrites p, a path relative to base (the working directory), for the
// target file: relative to that file's directory in the project scope (the
// repository's file stays valid in every clone), absolute elsewhere. A
// program's bare name (no separator: looked up in PATH) stays as it is; a
// directory (dir) is always a path. With expand (values of another
// client's JSON), a path starting with a variable ("${HOME}/bin/x", written
// as env("HOME")) is the variable's, never joined to the working directory.
func pathFor(t target, base, p string, dir, expand bool) string {
	if p == "" || filepath.IsAbs(p) || !dir && !strings.ContainsAny(p, `/\`) {
		return p
	}
	if expand && strings.HasPrefix(p, "${") {
		return p
	}
	abs := filepath.Join(base, p)
	if t.scope == config.ScopeProject {
		if rel, err := filepath.Rel(filepath.Dir(t.path), abs); err == nil {
			if !strings.HasPrefix(rel, "..") {
				rel = "." + string(filepath.Separator) + rel
			}
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// readClientSecret reads a client secret from $MCPHOST_CLIENT_SECRET, or a
// terminal (not echoed), or one line of piped input.
func (a *app) readClientSecret() (string, error) {
	if v, ok := a.lookupEnv(EnvClientSecret); ok && v != "" {
		return v, nil
	}
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(a.stderr, "Client secret: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", fmt.Errorf("reading the client secret: %w", err)
		}
		if len(b) == 0 {
			return "", errors.New("no client secret given")
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		if err != nil {
			return "", fmt.Errorf("no client secret: set %s or give it on standard input (%v)", EnvClientSecret, err)
		}
		return "", errors.New("no client secret given")
	}
	return line, nil
}

// secretName names the stored client secret of server name in file path:
// unique per file and server, recognisable in the secrets directory.
func secretName(name, path string) string {
	sum := sha256.Sum256([]byte(path))
	return name + "." + hex.EncodeToString(sum[:4]) + ".client_secret"
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// errEditedMeanwhile refuses an edit of a file that changed since it was
// read.
var errEditedMeanwhile = errors.New("the file changed while it was being edited; run the command again")

// writeConfigFile replaces path (through a symbolic link, its target)
// atomically with data, keeping its mode, provided it still holds was (what
// the edit started from); a new file is 0600, or 0644 in the project scope
// (a file shared with others), and its directory is created.
func writeConfigFile(path string, was, data []byte, scope config.Scope) error {
	real := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		real = p
	}
	if now, err := readIfExists(real); err != nil {
		return err
	} else if !bytes.Equal(now, was) {
		return fmt.Errorf("%s: %w", path, errEditedMeanwhile)
	}
	mode := os.FileMode(0o600)
	if scope == config.ScopeProject {
		mode = 0o644
	}
	if st, err := os.Stat(real); err == nil {
		mode = st.Mode().Perm()
	} else if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(real), err)
	}
	if err := config.WriteFileAtomic(real, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", real, err)
	}
	return nil
}

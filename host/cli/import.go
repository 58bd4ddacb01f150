package cli

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/clientconf"
	"github.com/mcphost/mcphost/host/config"
)

// `mcphost import CLIENT|FILE`: the servers of another MCP client's
// configuration become server blocks, through the writer of `server add`
// (config.AddServerBlock), all in one edit of the target file, checked by
// loading the whole configuration first.

// importFlags are the flags of import.
type importFlags struct {
	scope  string
	dryRun bool
	only   []string
}

func (a *app) importCmd() *cobra.Command {
	var f importFlags
	ids := make([]string, 0, 6)
	for _, c := range clientconf.Clients() {
		ids = append(ids, c.ID)
	}
	cmd := &cobra.Command{
		Use:   "import CLIENT|FILE",
		Short: "Import the MCP servers of another client's configuration",
		Long: `Imports every MCP server of another client's configuration as a server block:
CLIENT (` + strings.Join(ids, ", ") + `) reads that client's own
files (its user and project files; for Claude Code also the servers it keeps
for this directory in ~/.claude.json), FILE any such file (an mcpServers,
servers or mcp.servers JSON object, JSONC allowed, or Codex's config.toml).

Values are kept as the client means them: ${NAME}, ${NAME:-default} and
${env:NAME} become env() calls (read from the environment when mcphost runs);
a secret written in the file (a variable or header named like a token, key,
secret or password, or a value shaped like a token) is stored in the secrets
directory and read with secret(), never written into the configuration. An
entry mcphost cannot keep as it is (a VS Code ${input:…}, an unknown member, a
tool filter) is reported with what to do and not imported; an entry whose
name is already configured is skipped. Disabled entries are imported with
disabled = true.

Servers are written to the local scope unless -s user or -s project says
otherwise (with --config FILE, to that file), in one edit that keeps the rest
of the file as it is. Project servers still need approval.

A client's project file (.mcp.json, .vscode/mcp.json, .cursor/mcp.json,
.gemini/settings.json of this repository) is the repository's, not yours: by
CLIENT, its servers go to the project scope (.mcphost.hcl), where none runs
before ` + "`mcphost config approve NAME`" + `; with -s local, -s user or --config
they are refused (give -s project). A server you refused in Claude Code
(disabledMcpjsonServers in ~/.claude.json) is not imported. A FILE named on
the command line is your choice: it goes where -s says.

Claude Desktop does not expand ${NAME}: its values are imported as the literal
text it passes on (a secret among them is stored and read with secret()).
Claude Code runs headersHelper through a shell: a command line is imported
as ["sh", "-c", COMMAND].`,
		Example: `  mcphost import claude-desktop
  mcphost import claude-code -s user --dry-run
  mcphost import .vscode/mcp.json --only github,fetch
  mcphost import ~/.codex/config.toml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.importServers(cmd, &f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.scope, "scope", "s", "local", "where to write: local (you, this project), user (you, everywhere) or project (.mcphost.hcl, shared)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show what would be imported and the blocks, write nothing")
	fl.StringSliceVar(&f.only, "only", nil, "import only these servers (`NAME,…`, as the client names them)")
	return cmd
}

// importSource is one configuration file read.
type importSource struct {
	path, label string
	servers     []clientconf.Server
	// workspace is the project directory of a project file: its relative
	// paths are relative to it, and it replaces VS Code's
	// ${workspaceFolder} ("" when unknown: a user file).
	workspace string
	// project is set for a client's project file (a repository's, read
	// for `import CLIENT`): its entries need approval in mcphost.
	project bool
	// client names the client; choices, if not nil, are the user's
	// decisions in it about the file's servers, kept in choicesFile.
	client      string
	choices     *clientconf.ProjectChoices
	choicesFile string
}

// Statuses of an entry.
const (
	statusImported = "imported"
	statusSkipped  = "skipped"
	statusRefused  = "refused"
)

// importResult is what became of one entry.
type importResult struct {
	name, from string // the name written; file:line
	status     string
	group      *importGroup // where it is written
	reasons    []string
	fixes      []string
	notes      []string
}

// importGroup is one file the import writes: its target, its text, the
// store of its secrets and the servers configured already.
type importGroup struct {
	t          target
	src        []byte
	store      *secretStore
	configured map[string]string // name → where
	ed         *importEdit
}

// newImportGroup opens the target of scope for the import.
func (a *app) newImportGroup(cmd *cobra.Command, scope string, dryRun bool) (*importGroup, error) {
	t, err := a.editTarget(cmd, scope)
	if err != nil {
		return nil, err
	}
	src, err := readIfExists(t.path)
	if err != nil {
		return nil, err
	}
	store, err := a.newSecretStore(t, dryRun)
	if err != nil {
		return nil, err
	}
	g := &importGroup{t: t, src: src, store: store, configured: map[string]string{}, ed: &importEdit{out: src, check: src}}
	if cfg, _ := a.editErrors(t, src); cfg != nil {
		for _, s := range cfg.Servers {
			g.configured[s.Name] = fmt.Sprintf("%s (%s scope)", s.Origin.File, s.Origin.Scope)
		}
		for _, s := range cfg.Skipped {
			if _, ok := g.configured[s.Server.Name]; !ok {
				g.configured[s.Server.Name] = fmt.Sprintf("%s (%s scope)", s.Server.Origin.File, s.Server.Origin.Scope)
			}
		}
	}
	return g, nil
}

func (a *app) importServers(cmd *cobra.Command, f *importFlags, arg string) error {
	sources, err := a.importSources(arg)
	if err != nil {
		return err
	}
	main, err := a.newImportGroup(cmd, f.scope, f.dryRun)
	if err != nil {
		return err
	}
	// The entries of a client's project file (a repository's) keep the
	// trust of a project server: they go to mcphost's project scope, which
	// runs nothing before `mcphost config approve`. A scope the user chose
	// that would run them without approval refuses them.
	explicit := cmd.Flags().Changed("scope") || len(a.configs) > 0
	groups := []*importGroup{main}
	var proj *importGroup
	var projErr error
	groupFor := func(so importSource) (*importGroup, string) {
		if !so.project || main.t.scope == config.ScopeProject {
			return main, ""
		}
		if explicit {
			return nil, fmt.Sprintf("read from %s, a repository's file: its servers run only once approved, and %s (%s scope) would run it without approval", so.path, main.t.path, main.t.scope)
		}
		if proj == nil && projErr == nil {
			if proj, projErr = a.newImportGroup(cmd, "project", f.dryRun); projErr == nil {
				groups = append(groups, proj)
			}
		}
		if projErr != nil {
			return nil, "read from a repository's file, which goes to the project scope: " + projErr.Error()
		}
		return proj, ""
	}
	only := map[string]bool{}
	for _, n := range f.only {
		if n = strings.TrimSpace(n); n != "" {
			only[n] = false
		}
	}
	var results []*importResult
	seen := map[string]string{} // original name → where it was taken from
	for _, so := range sources {
		for _, s := range so.servers {
			if len(only) > 0 {
				if _, ok := only[s.Name]; !ok {
					continue
				}
				only[s.Name] = true
			}
			from := so.path
			if s.Line > 0 {
				from = fmt.Sprintf("%s:%d", so.path, s.Line)
			}
			r := &importResult{name: s.Name, from: from}
			results = append(results, r)
			if first, dup := seen[s.Name]; dup {
				r.status = statusSkipped
				r.reasons = append(r.reasons, "the client uses the entry of "+first+" instead")
				continue
			}
			seen[s.Name] = from
			if so.choices != nil && so.choices.Refused(s.Name) {
				r.status = statusSkipped
				r.reasons = append(r.reasons, "you refused it in "+so.client+" (disabledMcpjsonServers of this project in "+so.choicesFile+")")
				continue
			}
			g, why := groupFor(so)
			if g == nil {
				r.status = statusRefused
				r.reasons = append(r.reasons, why)
				r.fixes = append(r.fixes, "import it into the project scope, where it needs approval: mcphost import "+arg+" -s project (or, if you trust the file, mcphost import "+so.path+")")
				continue
			}
			r.group = g
			if so.choices != nil && !so.choices.Approved(s.Name) {
				r.notes = append(r.notes, so.client+" has not approved it either")
			}
			a.importEntry(g.t, g.ed, so, s, r, g.store, g.configured, f.dryRun)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(only)) {
		if !only[n] {
			results = append(results, &importResult{name: n, from: arg, status: statusRefused,
				reasons: []string{"no such server in " + arg}, fixes: []string{"check the name (mcphost import " + arg + " --dry-run lists them)"}})
		}
	}

	imported, refused, skipped := 0, 0, 0
	count := map[*importGroup]int{}
	for _, r := range results {
		switch r.status {
		case statusImported:
			imported++
			count[r.group]++
		case statusRefused:
			refused++
		default:
			skipped++
		}
	}
	if imported > 0 && !f.dryRun {
		undo := func() {
			for _, g := range groups {
				g.store.undo()
			}
		}
		for _, g := range groups {
			if count[g] > 0 {
				if err := a.checkEdit(g.t, g.ed.out, "", false); err != nil {
					undo()
					return err
				}
			}
		}
		for _, g := range groups {
			if count[g] > 0 {
				if err := writeConfigFile(g.t.path, g.src, g.ed.out, g.t.scope); err != nil {
					undo()
					return err
				}
			}
		}
	}
	a.printImport(sources, results)
	verb := "Imported"
	if f.dryRun {
		verb = "Would import"
		for _, g := range groups {
			if count[g] > 0 {
				fmt.Fprintf(a.stdout, "\nThe blocks to add to %s:\n\n%s", g.t.path, cleanText(addedText(g.src, g.ed.out)))
			}
		}
	}
	// One line per file written (the main target's when none is).
	var shown []*importGroup
	for _, g := range groups {
		if count[g] > 0 {
			shown = append(shown, g)
		}
	}
	if len(shown) == 0 {
		shown = groups[:1]
	}
	for i, g := range shown {
		fmt.Fprintf(a.stdout, "%s %d server(s) into %s (%s scope)", verb, count[g], g.t.path, g.t.scope)
		if i == len(shown)-1 {
			fmt.Fprintf(a.stdout, "; %d skipped, %d refused", skipped, refused)
		}
		fmt.Fprintln(a.stdout)
	}
	for _, g := range groups {
		var secrets, names []string
		for _, r := range results {
			if r.status == statusImported && r.group == g {
				names = append(names, r.name)
				secrets = append(secrets, g.store.names(r.name)...)
			}
		}
		if len(secrets) > 0 {
			stored := "are stored"
			if f.dryRun {
				stored = "would be stored"
			}
			fmt.Fprintf(a.stdout, "%d secret value(s) %s in %s (readable by you only), read with secret()\n", len(secrets), stored, g.store.dir)
		}
		if len(names) > 0 && g.t.scope == config.ScopeProject {
			fmt.Fprintf(a.stdout, "Project servers run only once approved: mcphost config approve %s\n", strings.Join(names, " "))
		}
	}
	if imported == 0 && refused > 0 {
		return errSilent
	}
	return nil
}

// importEdit is the target file as the import edits it: out is written;
// check is loaded to check it (in a dry run, with placeholders for the
// secrets, which are not stored).
type importEdit struct{ out, check []byte }

// importEntry maps entry s of source so and, if it can be imported, adds
// its block to ed; r says what became of it.
func (a *app) importEntry(t target, ed *importEdit, so importSource, s clientconf.Server, r *importResult, store *secretStore, configured map[string]string, dryRun bool) {
	refuse := func(what, fix string) {
		r.status = statusRefused
		r.reasons = append(r.reasons, what)
		r.fixes = append(r.fixes, fix)
	}
	if s.Invalid != "" {
		refuse(s.Invalid, "write the entry as an object")
		return
	}
	name := sanitizeServerName(s.Name)
	if name != s.Name {
		r.notes = append(r.notes, fmt.Sprintf("named %q: %q is not a valid mcphost server name", name, s.Name))
		r.name = name
	}
	if where, ok := configured[name]; ok {
		r.status = statusSkipped
		r.reasons = append(r.reasons, fmt.Sprintf("%q is already configured in %s", name, where))
		return
	}
	if has, _ := config.HasServerBlock(ed.out, t.path, name); has {
		r.status = statusSkipped
		r.reasons = append(r.reasons, fmt.Sprintf("%q is already in %s", name, t.path))
		return
	}
	e, notes, err := config.ServerEntryFromFields(name, s.Fields, config.EntryOptions{
		Format: s.Format, WorkspaceDir: so.workspace, StoreSecret: store.forServer(name), GOOS: runtime.GOOS,
	})
	r.notes = append(r.notes, notes...)
	if err != nil {
		store.drop(name)
		var ee *config.EntryError
		if errors.As(err, &ee) {
			r.status = statusRefused
			for _, p := range ee.Problems {
				what := p.What
				if p.Key != "" {
					what = p.Key + ": " + what
				}
				r.reasons = append(r.reasons, what)
				r.fixes = append(r.fixes, p.Fix)
			}
			return
		}
		refuse(err.Error(), "")
		return
	}
	if unset := e.UnsetVars(a.lookupEnv); len(unset) > 0 {
		store.drop(name)
		refuse(fmt.Sprintf("reads %s from the environment, not set here: the configuration would not load without it", strings.Join(unset, ", ")),
			"set it (here and wherever mcphost runs) and import again, or write ${NAME:-default} in the client's file")
		return
	}
	// A project file's relative paths are relative to the project, where
	// the client runs its servers.
	base := a.workDir
	if so.workspace != "" {
		base = so.workspace
	}
	a.placePathsFrom(t, base, e)
	next, err := config.AddServerBlock(ed.out, t.path, e)
	if err != nil {
		store.drop(name)
		refuse(err.Error(), "")
		return
	}
	ce := e
	if dryRun && (len(e.SecretEnv)+len(e.SecretHeaders) > 0) {
		// Nothing is stored in a dry run: the check reads placeholders.
		c := *e
		c.Env, c.Headers = placeholders(e.Env, e.SecretEnv), placeholders(e.Headers, e.SecretHeaders)
		c.SecretEnv, c.SecretHeaders = nil, nil
		ce = &c
	}
	check, err := config.AddServerBlock(ed.check, t.path, ce)
	if err != nil {
		store.drop(name)
		refuse(err.Error(), "")
		return
	}
	cfg, errs := a.editErrors(t, check)
	if len(errs) > 0 {
		store.drop(name)
		for _, d := range errs {
			what := d.Summary
			if d.Detail != "" {
				what += ": " + d.Detail
			}
			if d.Subject != nil {
				what = fmt.Sprintf("%s:%d: %s", d.Subject.Filename, d.Subject.Start.Line, what)
			}
			r.reasons = append(r.reasons, what)
			r.fixes = append(r.fixes, "")
		}
		r.status = statusRefused
		return
	}
	for _, sk := range cfg.Skipped {
		if sk.Server.Name == name && sk.Server.Origin.File == t.path {
			r.notes = append(r.notes, "not used yet: "+sk.Reason)
		}
	}
	r.status = statusImported
	ed.out, ed.check = next, check
}

// placeholders is m with the keys of secrets set to a placeholder.
func placeholders(m map[string]string, secrets map[string]config.SecretRef) map[string]string {
	out := make(map[string]string, len(m)+len(secrets))
	for k, v := range m {
		out[k] = v
	}
	for k := range secrets {
		out[k] = "(secret)"
	}
	return out
}

// printImport prints what became of each entry. Every text in it may come
// from the imported file (names, keys, values quoted in problems and
// notes): it is printed through termText.
func (a *app) printImport(sources []importSource, results []*importResult) {
	for _, so := range sources {
		fmt.Fprintf(a.stdout, "%s: %s, %d server(s)\n", termText(so.label), termText(so.path), len(so.servers))
	}
	if len(results) == 0 {
		fmt.Fprintln(a.stdout, "No servers to import.")
		return
	}
	w := 0
	for _, r := range results {
		w = max(w, utf8.RuneCountInString(termText(r.name)))
	}
	for _, r := range results {
		name := termText(r.name)
		fmt.Fprintf(a.stdout, "  %-8s  %s%s  %s\n", r.status, name, strings.Repeat(" ", w-utf8.RuneCountInString(name)), termText(r.from))
		for i, why := range r.reasons {
			fmt.Fprintf(a.stdout, "      %s\n", termText(why))
			if i < len(r.fixes) && r.fixes[i] != "" {
				fmt.Fprintf(a.stdout, "        fix: %s\n", termText(r.fixes[i]))
			}
		}
		for _, n := range r.notes {
			fmt.Fprintf(a.stdout, "      note: %s\n", termText(n))
		}
	}
}

// termText makes text read from another client's file safe to print on
// one line of a terminal: cleanText (the CLI's filter of untrusted text:
// no escape sequences, control or invisible characters), with its line
// breaks and tabs as single spaces.
func termText(s string) string { return strings.Join(strings.Fields(cleanText(s)), " ") }

// importSources reads the configuration files of client arg, or the file
// arg.
func (a *app) importSources(arg string) ([]importSource, error) {
	c, err := clientconf.Lookup(arg)
	if err != nil {
		return a.importFile(arg)
	}
	loc := config.Locate(a.lookupEnv, a.workDir)
	env := clientconf.Env{LookupEnv: a.lookupEnv, WorkDir: a.workDir, ProjectDir: loc.ProjectRoot, GOOS: runtime.GOOS}
	// In the order of the client's precedence: its project file before its
	// user file (and Claude Code's servers of this directory first).
	scopes := slices.Clone(c.Scopes)
	slices.Reverse(scopes)
	var sources, local []importSource
	var looked []string
	for _, scope := range scopes {
		p, err := c.Path(scope, env)
		if err != nil {
			continue // the client has no such file here
		}
		data, err := readIfExists(p)
		if err != nil {
			return nil, err
		}
		looked = append(looked, p)
		if data == nil {
			continue
		}
		servers, err := clientconf.Servers(c, data)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		so := importSource{path: p, label: fmt.Sprintf("%s (%s)", c.Name, scope), servers: servers, client: c.Name}
		if scope == clientconf.ScopeProject {
			so.workspace = env.ProjectDir
			so.project = true
		}
		sources = append(sources, so)
		if c.ID == "claude-code" && scope == clientconf.ScopeUser {
			// What the user decided in Claude Code about the project's
			// .mcp.json servers (kept by the directory Claude Code ran in).
			for i := range sources {
				if !sources[i].project {
					continue
				}
				for _, dir := range []string{a.workDir, env.ProjectDir} {
					ch, err := clientconf.ClaudeProjectChoices(data, dir)
					if err != nil {
						return nil, fmt.Errorf("reading %s: %w", p, err)
					}
					if sources[i].choices == nil || len(ch.Disabled)+len(ch.Enabled) > 0 || ch.EnableAll {
						sources[i].choices, sources[i].choicesFile = &ch, p
					}
					if len(ch.Disabled)+len(ch.Enabled) > 0 || ch.EnableAll {
						break
					}
				}
			}
			ps, err := clientconf.ProjectServers(data, a.workDir)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", p, err)
			}
			if len(ps) > 0 {
				local = append(local, importSource{path: p, label: c.Name + " (local: " + a.workDir + ")", servers: ps})
			}
		}
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no configuration of %s found (looked at: %s)", c.Name, strings.Join(looked, ", "))
	}
	return append(local, sources...), nil
}

// importFile reads the client configuration file p.
func (a *app) importFile(p string) ([]importSource, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.workDir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		ids := make([]string, 0, 6)
		for _, c := range clientconf.Clients() {
			ids = append(ids, c.ID)
		}
		return nil, fmt.Errorf("%w; give a client (%s) or a configuration file", err, strings.Join(ids, ", "))
	}
	servers, err := clientconf.ServersOfFile(p, data)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	so := importSource{path: p, label: "File", servers: servers}
	switch dir := filepath.Dir(p); {
	case filepath.Base(dir) == ".vscode" || filepath.Base(dir) == ".cursor":
		so.workspace = filepath.Dir(dir)
	case filepath.Base(p) == ".mcp.json":
		so.workspace = dir
	}
	return []importSource{so}, nil
}

// sanitizeServerName makes name a valid server name: runs of other
// characters become one '-', separators at the ends are dropped, and it is
// cut to the maximum length ("@acme/My Server" is "acme-My-Server").
func sanitizeServerName(name string) string {
	if config.ValidServerName(name) {
		return name
	}
	var b []byte
	var sep byte // the separator owed before the next letter or digit
	for _, r := range name {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			if sep != 0 && len(b) > 0 {
				b = append(b, sep)
			}
			sep = 0
			b = append(b, byte(r))
		case sep == 0 && r == '_':
			sep = '_'
		case sep == 0:
			sep = '-'
		}
	}
	out := string(b)
	if len(out) > config.MaxServerNameLen {
		out = strings.TrimRight(out[:config.MaxServerNameLen], "-_")
	}
	if !config.ValidServerName(out) {
		return "server"
	}
	return out
}

// addedText is what out added to src: the text after their common start.
func addedText(src, out []byte) string {
	i := 0
	for i < len(src) && i < len(out) && src[i] == out[i] {
		i++
	}
	return strings.TrimLeft(string(out[i:]), "\n")
}

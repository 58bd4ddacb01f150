package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// MaxFileSize bounds a configuration file; larger files are refused.
const MaxFileSize = 4 << 20

// LoadOptions configures Load. The zero value (or nil) loads the discovered
// files of the process's working directory with the process environment.
type LoadOptions struct {
	// LookupEnv resolves env() calls and the MCPHOST_* location variables.
	// OPTIONAL: defaults to os.LookupEnv.
	LookupEnv LookupEnvFunc
	// WorkDir is where the project file search starts. OPTIONAL: defaults to os.Getwd.
	WorkDir string
	// Files, when set, are loaded (in order, later wins) as the cli scope instead of
	// the user, project and local scopes. The managed file still governs.
	Files []string
	// Dynamic servers are contributed at run time; they have the lowest precedence.
	Dynamic []*Server
	// Transports lists every allowed transport name. OPTIONAL: defaults to BuiltinTransports.
	Transports []string
	// PluginsOnly skips the server blocks: settings and plugins are loaded,
	// servers are not (for `mcphost plugins …`, which must work before the
	// plugins' transports are known).
	PluginsOnly bool
	// Overlay holds file contents that replace what is on disk, by path (as
	// the scope's file is located, or as given in Files): a file in it is
	// read from it, even if absent from disk. For validating an edit before
	// it is written.
	Overlay map[string][]byte
	// AsWritten decodes every file as a project file is decoded before
	// approval: env() and secret() calls are kept as written
	// (`${env("NAME")}`), never evaluated, so nothing secret is read. For
	// showing configuration (`mcphost server list|get`), not for running it.
	AsWritten bool
}

// Load reads, merges and validates the configuration. It keeps going after an
// error so that every problem is reported at once; the returned Config is never
// nil, but must not be used when the diagnostics have errors.
func Load(opts *LoadOptions) (*Config, hcl.Diagnostics) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.WorkDir == "" {
		o.WorkDir, _ = os.Getwd()
	}
	if len(o.Transports) == 0 {
		o.Transports = BuiltinTransports
	}
	loc := locate(o.LookupEnv, o.WorkDir, func(p string) bool { _, ok := o.Overlay[p]; return ok })

	type source struct {
		path     string
		scope    Scope
		required bool
	}
	var sources []source
	var cliFiles []string
	if len(o.Files) > 0 {
		for _, f := range o.Files {
			if !filepath.IsAbs(f) {
				f = filepath.Join(o.WorkDir, f)
			}
			sources = append(sources, source{f, ScopeCLI, true})
			cliFiles = append(cliFiles, f)
		}
	} else {
		if loc.User != "" {
			sources = append(sources, source{loc.User, ScopeUser, false})
		}
		for _, p := range loc.Project {
			sources = append(sources, source{p, ScopeProject, false})
		}
		if loc.Local != "" {
			sources = append(sources, source{loc.Local, ScopeLocal, false})
		}
	}
	sources = append(sources, source{loc.Managed, ScopeManaged, false})

	cfg := &Config{Sources: map[string]*hcl.File{}}
	parser := hclparse.NewParser()
	ctx := evalContext(o.LookupEnv, joinIf(loc.ConfigDir, SecretsDirName))
	if o.AsWritten {
		ctx = displayContext()
	}
	var diags hcl.Diagnostics
	var files []*decodedFile
	for _, src := range sources {
		src := src
		project := src.scope == ScopeProject
		b, overlaid := o.Overlay[src.path]
		var err error
		if !overlaid {
			b, err = readConfigFile(src.path)
		}
		if err == nil && project && !overlaid {
			// A project file written by another user (a shared /tmp, a
			// parent directory) is not the user's project.
			err = CheckOwner(src.path)
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !src.required {
				continue
			}
			diags = append(diags, forScope(src.scope, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Cannot read configuration file",
				Detail:   fmt.Sprintf("Reading the %s configuration %s: %v.", src.scope, src.path, err),
			}})...)
			continue
		}
		f, d := parser.ParseHCL(b, src.path)
		diags = append(diags, forScope(src.scope, d)...)
		cfg.Files = append(cfg.Files, File{Path: src.path, Scope: src.scope})
		if f == nil || d.HasErrors() {
			continue
		}
		fctx := ctx
		if project {
			// Nothing in a project file reads the environment before the
			// user approved it; approved servers are decoded again below.
			fctx = writtenContext()
		}
		df, d := decodeFile(f, src.path, src.scope, fctx)
		if src.scope == ScopeLocal {
			df.base = loc.ProjectRoot // the file is about the project, kept elsewhere
		}
		diags = append(diags, forScope(src.scope, d)...)
		files = append(files, df)
	}

	diags = append(diags, mergeSettings(cfg, files)...)
	diags = append(diags, mergePermissions(cfg, files)...)
	diags = append(diags, mergeGateway(cfg, files)...)
	diags = append(diags, mergeTelemetry(cfg, files)...)
	diags = append(diags, mergeState(cfg, files)...)
	if cfg.Settings.PluginDir == "" {
		cfg.Settings.PluginDir = envOr(o.LookupEnv, EnvPluginDir, joinIf(loc.ConfigDir, "plugins"))
	}
	if cfg.Settings.PluginLock == "" {
		cfg.Settings.PluginLock = envOr(o.LookupEnv, EnvPluginLock, joinIf(loc.ConfigDir, "plugins.lock.hcl"))
	}
	home, _ := o.LookupEnv("HOME")
	cfg.Watch = watchPaths(loc, cliFiles, o.WorkDir, home, &cfg.Settings)
	diags = append(diags, mergePlugins(cfg, files)...)
	mergeIdPs(cfg, files)
	cfg.Transports = append([]string(nil), o.Transports...)
	for _, p := range cfg.Plugins {
		if p.Locked == nil {
			continue
		}
		for _, t := range p.Locked.Transports {
			if prev := cfg.PluginFor(t); prev != p || slices.Contains(cfg.Transports, t) || t == TransportInProcess {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Transport provided twice",
					Detail: fmt.Sprintf("Plugin %q provides transport %q, which is already provided (built in, or by plugin %q).", p.Name, t, prev.Name)})
				continue
			}
			cfg.Transports = append(cfg.Transports, t)
		}
	}
	var unlocked []string
	for _, p := range cfg.Plugins {
		if p.Locked == nil {
			unlocked = append(unlocked, p.Name)
		}
	}
	for _, df := range files {
		if o.PluginsOnly {
			break
		}
		diags = append(diags, decodeServers(df, ctx, cfg, unlocked)...)
	}
	for name, f := range parser.Files() {
		cfg.Sources[name] = f
	}
	diags = append(diags, mergeServers(cfg, files, o.Dynamic)...)
	applyServerPolicy(cfg, files)
	if !o.PluginsOnly {
		diags = append(diags, mergeChecks(cfg, files, ctx, loc.ProjectRoot, unlocked)...)
		diags = append(diags, mergeEndpoints(cfg, files)...)
	}
	return cfg, diags
}

// forScope returns a file's diagnostics as they count for its scope. In a
// project file an error is a warning: the block it is in is skipped and the
// rest of the configuration loads, so a repository cannot stop mcphost (and
// the user's own servers) with one bad line.
func forScope(scope Scope, diags hcl.Diagnostics) hcl.Diagnostics {
	if scope != ScopeProject {
		return diags
	}
	out := make(hcl.Diagnostics, len(diags))
	for i, d := range diags {
		c := *d
		if c.Severity == hcl.DiagError {
			c.Severity = hcl.DiagWarning
			c.Detail = strings.TrimSpace(c.Detail + " This is in a project file, so only this block (or file, if it cannot be parsed) is skipped; the rest of the configuration is loaded.")
			c.Extra = projectError{c.Extra}
		}
		out[i] = &c
	}
	return out
}

// projectError marks (in hcl.Diagnostic.Extra) an error of a project file
// reported as a warning; it keeps the Extra it replaced.
type projectError struct{ extra any }

// UnwrapDiagnosticExtra lets hcl.DiagnosticExtra see the replaced Extra.
func (e projectError) UnwrapDiagnosticExtra() any { return e.extra }

// IsProjectError reports whether d is an error of a project file that the
// loader reported as a warning (the block or file was skipped). An edit of
// that file must treat it as an error.
func IsProjectError(d *hcl.Diagnostic) bool {
	_, ok := d.Extra.(projectError)
	return ok
}

// Environment variables that relocate the plugin directory and lock file.
const (
	EnvPluginDir  = "MCPHOST_PLUGIN_DIR"
	EnvPluginLock = "MCPHOST_PLUGIN_LOCK"
)

func envOr(lookup LookupEnvFunc, name, def string) string {
	if v, ok := lookup(name); ok && v != "" {
		return v
	}
	return def
}

func joinIf(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// mergePlugins combines discovered and declared plugins (a declaration
// overrides a discovered plugin of the same name; a higher scope overrides a
// lower one) and attaches each plugin's lock entry when its path matches.
func mergePlugins(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	byName := map[string]*Plugin{}
	if cfg.Settings.PluginDir != "" {
		found, err := discoverPlugins(cfg.Settings.PluginDir)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Plugin directory not trusted",
				Detail: fmt.Sprintf("No plugin is discovered in %s: %v.", cfg.Settings.PluginDir, err)})
		}
		for _, p := range found {
			byName[p.Name] = p
		}
	}
	for _, f := range files {
		for _, p := range f.plugins {
			if f.scope == ScopeProject {
				rng := p.Origin.Range
				diags = append(diags, warnf(&rng, "Ignored in project scope",
					"A plugin block is only honoured in the user, local, cli and managed scopes: it would make mcphost run a program the repository chooses."))
				continue
			}
			byName[p.Name] = p
		}
	}
	var lock *Lock
	if cfg.Settings.PluginLock != "" {
		var d hcl.Diagnostics
		lock, d = ReadLock(cfg.Settings.PluginLock)
		diags = append(diags, d...)
	}
	for _, p := range byName {
		if lock != nil {
			if l := lock.Find(p.Name); l != nil && l.Path == p.Path {
				p.Locked = l
			}
		}
		cfg.Plugins = append(cfg.Plugins, p)
	}
	sort.Slice(cfg.Plugins, func(i, j int) bool { return cfg.Plugins[i].Name < cfg.Plugins[j].Name })
	return diags
}

func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("file is %d bytes; the limit is %d", st.Size(), MaxFileSize)
	}
	return os.ReadFile(path)
}

// mergeServers resolves name clashes by scope precedence, applies managed
// exclusivity, project approval and deduplication by signature.
func mergeServers(cfg *Config, files []*decodedFile, dynamic []*Server) hcl.Diagnostics {
	var diags hcl.Diagnostics
	// Candidates in increasing precedence: dynamic, then files in load order.
	var cands []*Server
	for _, s := range dynamic {
		c := *s
		c.Origin.Scope = ScopeDynamic
		if !ValidServerName(c.Name) {
			diags = append(diags, errorf(nil, "Invalid server name",
				"Dynamic server name %q is not allowed: use letters and digits, optionally joined by single '-' or '_', at most %d characters.", c.Name, MaxServerNameLen))
			continue
		}
		cands = append(cands, &c)
	}
	for _, f := range files {
		for _, s := range f.servers {
			if f.scope == ScopeManaged {
				cfg.ManagedExclusive = true
			}
			cands = append(cands, s.Server)
		}
	}
	if cfg.ManagedExclusive {
		var kept []*Server
		for _, s := range cands {
			if s.Origin.Scope == ScopeManaged {
				kept = append(kept, s)
			} else {
				cfg.Skipped = append(cfg.Skipped, &Skipped{Server: s, Reason: "the managed configuration declares servers, so it is exclusive"})
			}
		}
		cands = kept
	}

	// Later (higher-precedence) declarations replace earlier ones.
	byName := map[string]*Server{}
	for _, s := range cands {
		if prev, ok := byName[s.Name]; ok {
			cfg.Skipped = append(cfg.Skipped, &Skipped{Server: prev,
				Reason: fmt.Sprintf("overridden by the %s scope (%s)", s.Origin.Scope, s.Origin.File)})
		}
		byName[s.Name] = s
	}
	servers := make([]*Server, 0, len(byName))
	for _, s := range byName {
		if s.ConnectTimeout == 0 {
			s.ConnectTimeout = cfg.Settings.ConnectTimeout
		}
		if s.ToolTimeout == 0 {
			s.ToolTimeout = cfg.Settings.ToolTimeout
		}
		if s.MaxToolDuration == 0 {
			s.MaxToolDuration = cfg.Settings.MaxToolDuration
		}
		s.Approved = !s.NeedsApproval() ||
			s.Origin.Scope == ScopeProject && cfg.Settings.ApproveAllProjectServers ||
			cfg.Settings.ApprovedProjectServers[s.Name] == s.ApprovalHash()
		if !s.Approved {
			s.noteApproval(cfg.Settings.ApprovedProjectServers[s.Name])
		}
		servers = append(servers, s)
	}

	// Deduplicate by signature: the higher scope keeps the server; within a
	// scope, the name that sorts first. Disabled or unapproved servers claim nothing.
	sort.Slice(servers, func(i, j int) bool {
		a, b := servers[i], servers[j]
		if a.Origin.Scope != b.Origin.Scope {
			return a.Origin.Scope > b.Origin.Scope
		}
		return a.Name < b.Name
	})
	claimed := map[string]*Server{}
	kept := servers[:0]
	for _, s := range servers {
		if s.Disabled || !s.Approved {
			kept = append(kept, s)
			continue
		}
		sig := s.Signature()
		if first, dup := claimed[sig]; dup {
			cfg.Skipped = append(cfg.Skipped, &Skipped{Server: s,
				Reason: fmt.Sprintf("duplicate of server %q (%s scope): same %s", first.Name, first.Origin.Scope, sigKind(s))})
			continue
		}
		claimed[sig] = s
		kept = append(kept, s)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	cfg.Servers = kept
	return diags
}

func sigKind(s *Server) string {
	if s.IsRemote() {
		return "url"
	}
	return "command and args"
}

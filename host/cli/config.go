package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/spf13/cobra"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
)

const redacted = "<redacted>"

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Show, validate and approve configuration"}
	var asJSON, showSecrets bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Show the effective merged configuration, with the scope and file of each entry",
		Long: `Shows the effective configuration after merging every scope. Each server is
annotated with the scope and file:line it came from. Header and environment
values are redacted unless --show-secrets is given.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			if !showSecrets {
				cfg = redactConfig(cfg)
			}
			if asJSON {
				return a.writeJSON(cfg)
			}
			_, err = a.stdout.Write(renderHCL(cfg))
			return err
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	show.Flags().BoolVar(&showSecrets, "show-secrets", false, "print header and environment values")

	validate := &cobra.Command{
		Use:   "validate",
		Short: "Check the configuration and report every problem with its file:line:col",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			var files []string
			for _, f := range cfg.Files {
				files = append(files, fmt.Sprintf("%s (%s)", f.Path, f.Scope))
			}
			if len(files) == 0 {
				fmt.Fprintln(a.stdout, "No configuration files found.")
				return nil
			}
			fmt.Fprintf(a.stdout, "Configuration is valid: %d server(s) from %s.\n", len(cfg.Servers), strings.Join(files, ", "))
			return nil
		},
	}

	var yes bool
	approve := &cobra.Command{
		Use:   "approve NAME...",
		Short: "Approve project-scope servers (bound to a hash of what they run or reach)",
		Long: `Shows what each named project-scope server runs (command, args, env, cwd) or
reaches and sends (url, headers, headers helper, oauth or auth block, TLS,
proxy and transport options), and records its approval hash in the local scope
file. Any later change to those fields needs approval again. Values taken from
env() are shown as the env() call: they are read only once approved.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	approve.RunE = func(_ *cobra.Command, names []string) error {
		cfg, err := a.loadConfig()
		if err != nil {
			return err
		}
		hashes := map[string]string{}
		for _, name := range names {
			s := cfg.Server(name)
			if s == nil {
				return fmt.Errorf("no server named %q is configured", name)
			}
			if s.Origin.Scope != config.ScopeProject {
				return fmt.Errorf("server %q comes from the %s scope; only project-scope servers need approval", name, s.Origin.Scope)
			}
			fmt.Fprintf(a.stderr, "Server %q from %s:\n", name, s.Origin.File)
			describeForApproval(a.stderr, s.Written())
			hashes[name] = s.ApprovalHash()
		}
		if !yes {
			if !a.isTerminal(a.stdin) {
				fmt.Fprintln(a.stderr, "Error: not a terminal; review the above and pass --yes to approve")
				return exitErr{exitConfig}
			}
			fmt.Fprint(a.stderr, "Approve? [y/N] ")
			line, _ := bufio.NewReader(a.stdin).ReadString('\n')
			if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
				fmt.Fprintln(a.stderr, "Not approved.")
				return errSilent
			}
		}
		loc := config.Locate(a.lookupEnv, a.workDir)
		if loc.Local == "" {
			return errors.New("cannot find the local scope file: set HOME or MCPHOST_CONFIG_DIR")
		}
		if err := writeApprovals(loc.Local, hashes); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "Approved %s in %s\n", strings.Join(names, ", "), loc.Local)
		return nil
	}
	approve.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking")
	cmd.AddCommand(show, validate, approve)
	return cmd
}

// writeApprovals records approval hashes in a local scope file with hclwrite,
// keeping the file's other content and comments.
func writeApprovals(path string, hashes map[string]string) error {
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, diags := hclwrite.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return fmt.Errorf("cannot update %s: %s", path, diags.Error())
	}
	body := f.Body()
	settings := body.FirstMatchingBlock("settings", nil)
	if settings == nil {
		if len(body.Attributes())+len(body.Blocks()) > 0 {
			body.AppendNewline()
		}
		settings = body.AppendNewBlock("settings", nil)
	}
	existing := map[string]cty.Value{}
	if attr := settings.Body().GetAttribute("approved_project_servers"); attr != nil {
		// Re-read the current approvals through the config package's decoder.
		cur, err := readApprovals(path, src)
		if err != nil {
			return err
		}
		for k, v := range cur {
			existing[k] = cty.StringVal(v)
		}
	}
	for k, v := range hashes {
		existing[k] = cty.StringVal(v)
	}
	settings.Body().SetAttributeValue("approved_project_servers", cty.ObjectVal(existing))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return config.WriteFileAtomic(path, f.Bytes(), 0o600)
}

func readApprovals(path string, src []byte) (map[string]string, error) {
	dir, err := os.MkdirTemp("", "mcphost-approve")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "local.hcl")
	if err := os.WriteFile(tmp, src, 0o600); err != nil {
		return nil, err
	}
	cfg, diags := config.Load(&config.LoadOptions{Files: []string{tmp}, LookupEnv: func(string) (string, bool) { return "", false }, WorkDir: dir})
	if diags.HasErrors() {
		return nil, fmt.Errorf("cannot read the approvals in %s: %s", path, diags.Error())
	}
	return cfg.Settings.ApprovedProjectServers, nil
}

func redactConfig(cfg *config.Config) *config.Config {
	c := *cfg
	redact := func(s *config.Server) *config.Server {
		r := *s
		if len(s.Env) > 0 {
			r.Env = map[string]string{}
			for k := range s.Env {
				r.Env[k] = redacted
			}
		}
		if len(s.Headers) > 0 {
			r.Headers = map[string]string{}
			for k := range s.Headers {
				r.Headers[k] = redacted
			}
		}
		if s.OAuth != nil {
			o := *s.OAuth
			for _, f := range []*string{&o.ClientSecret, &o.PrivateKey, &o.Assertion} {
				if *f != "" {
					*f = redacted
				}
			}
			r.OAuth = &o
		}
		if len(s.AuthConfig) > 0 {
			r.AuthConfig = redactAuthConfig(cfg, s)
		}
		if s.IdP != nil {
			r.IdP = redactIdP(s.IdP)
		}
		return &r
	}
	if cfg.Gateway != nil && cfg.Gateway.OAuth != nil && cfg.Gateway.OAuth.ClientSecret != "" {
		gw, o := *cfg.Gateway, *cfg.Gateway.OAuth
		o.ClientSecret = redacted
		gw.OAuth = &o
		c.Gateway = &gw
	}
	c.IdPs = nil
	for _, p := range cfg.IdPs {
		c.IdPs = append(c.IdPs, redactIdP(p))
	}
	c.Servers = nil
	for _, s := range cfg.Servers {
		c.Servers = append(c.Servers, redact(s))
	}
	c.Skipped = nil
	for _, s := range cfg.Skipped {
		c.Skipped = append(c.Skipped, &config.Skipped{Server: redact(s.Server), Reason: s.Reason})
	}
	return &c
}

func redactIdP(p *config.IdP) *config.IdP {
	q := *p
	for _, f := range []*string{&q.ClientSecret, &q.IDToken} {
		if *f != "" {
			*f = redacted
		}
	}
	return &q
}

// redactAuthConfig redacts the values of an auth block that its plugin
// marked sensitive; without a recorded schema, every value but idp.
func redactAuthConfig(cfg *config.Config, s *config.Server) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(s.AuthConfig, &m) != nil {
		return json.RawMessage(`"` + redacted + `"`)
	}
	var comp *config.LockedComponent
	if p := cfg.PluginForScheme(s.AuthScheme); p != nil {
		comp = p.Locked.Component("auth", s.AuthScheme)
	}
	for k := range m {
		sensitive := k != "idp"
		if comp != nil {
			sensitive = false
			for _, a := range comp.Attributes {
				if a.Name == k {
					sensitive = a.Sensitive
				}
			}
		}
		if sensitive {
			m[k] = redacted
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// renderHCL prints the effective configuration as HCL, each entry preceded by
// a comment naming its scope and source position.
func renderHCL(cfg *config.Config) []byte {
	f := hclwrite.NewEmptyFile()
	b := f.Body()
	for _, file := range cfg.Files {
		comment(b, fmt.Sprintf("read %s (%s scope)", file.Path, file.Scope))
	}
	if cfg.ManagedExclusive {
		comment(b, "the managed configuration declares servers: it is exclusive")
	}
	b.AppendNewline()
	st := b.AppendNewBlock("settings", nil).Body()
	st.SetAttributeValue("connect_timeout", cty.StringVal(cfg.Settings.ConnectTimeout.String()))
	if cfg.Settings.ToolTimeout > 0 {
		st.SetAttributeValue("tool_timeout", cty.StringVal(cfg.Settings.ToolTimeout.String()))
	}
	if cfg.Settings.MaxToolDuration > 0 {
		st.SetAttributeValue("max_tool_duration", cty.StringVal(cfg.Settings.MaxToolDuration.String()))
	}
	st.SetAttributeValue("connect_concurrency_local", cty.NumberIntVal(int64(cfg.Settings.ConcurrencyLocal)))
	st.SetAttributeValue("connect_concurrency_remote", cty.NumberIntVal(int64(cfg.Settings.ConcurrencyRemote)))
	if cfg.Settings.OutputDir != "" {
		st.SetAttributeValue("output_dir", cty.StringVal(cfg.Settings.OutputDir))
	}
	st.SetAttributeValue("approve_all_project_servers", cty.BoolVal(cfg.Settings.ApproveAllProjectServers))
	// One permissions block for everyone's rules, then one per
	// for_principals condition (rules of one block share it).
	var conds []*permissions.Principals
	for _, r := range cfg.Permissions {
		if r.For != nil && !slices.Contains(conds, r.For) {
			conds = append(conds, r.For)
		}
	}
	for _, cond := range append([]*permissions.Principals{nil}, conds...) {
		if cond == nil && len(cfg.Permissions) == len(conds) && cfg.DefaultMode == "" && !slices.ContainsFunc(cfg.Permissions, func(r config.PermissionRule) bool { return r.For == nil }) {
			continue
		}
		b.AppendNewline()
		pb := b.AppendNewBlock("permissions", nil).Body()
		if cond != nil {
			fb := pb.AppendNewBlock("for_principals", nil).Body()
			if len(cond.Groups) > 0 {
				fb.SetAttributeValue("groups", strList(cond.Groups))
			}
			if len(cond.Subjects) > 0 {
				fb.SetAttributeValue("subjects", strList(cond.Subjects))
			}
		}
		for _, kind := range []permissions.Behavior{permissions.Allow, permissions.Ask, permissions.Deny} {
			var pats []string
			for _, r := range cfg.Permissions {
				if r.Behavior == kind && r.For == cond {
					pats = append(pats, r.Pattern)
					comment(pb, fmt.Sprintf("%s %q from %s", kind, r.Pattern, r.Origin.Source()))
				}
			}
			if len(pats) > 0 {
				pb.SetAttributeValue(kind.String(), strList(pats))
			}
		}
		if cfg.DefaultMode != "" && cond == nil {
			comment(pb, "default_mode from "+cfg.DefaultModeOrigin.Source())
			pb.SetAttributeValue("default_mode", cty.StringVal(cfg.DefaultMode))
		}
	}
	writeGateway(b, cfg)
	for _, p := range cfg.IdPs {
		b.AppendNewline()
		comment(b, fmt.Sprintf("%s scope, %s:%d", p.Origin.Scope, p.Origin.File, p.Origin.Range.Start.Line))
		ib := b.AppendNewBlock("idp", []string{p.Name}).Body()
		for _, kv := range [][2]string{{"issuer", p.Issuer}, {"client_id", p.ClientID}, {"client_secret", p.ClientSecret},
			{"id_token", p.IDToken}, {"id_token_file", p.IDTokenFile}, {"login_hint", p.LoginHint}} {
			if kv[1] != "" {
				ib.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
			}
		}
		if len(p.Scopes) > 0 {
			ib.SetAttributeValue("scopes", strList(p.Scopes))
		}
		if p.CallbackPort != 0 {
			ib.SetAttributeValue("callback_port", cty.NumberIntVal(int64(p.CallbackPort)))
		}
		if p.AllowLoopback {
			ib.SetAttributeValue("allow_loopback", cty.True)
		}
	}
	for _, s := range cfg.Servers {
		b.AppendNewline()
		origin := fmt.Sprintf("%s scope, %s:%d", s.Origin.Scope, s.Origin.File, s.Origin.Range.Start.Line)
		if s.Origin.Scope == config.ScopeDynamic {
			origin = "dynamic scope"
		}
		if !s.Approved {
			origin += " (not approved: run `mcphost config approve " + s.Name + "`)"
		}
		if s.BlockedBy != "" {
			origin += " (blocked by policy: " + s.BlockedBy + ")"
		}
		comment(b, origin)
		writeServer(b.AppendNewBlock("server", []string{s.Name}).Body(), s)
	}
	for _, sk := range cfg.Skipped {
		b.AppendNewline()
		comment(b, fmt.Sprintf("not used: server %q from %s (%s scope): %s", sk.Server.Name, sk.Server.Origin.File, sk.Server.Origin.Scope, sk.Reason))
	}
	return f.Bytes()
}

func strList(v []string) cty.Value {
	if len(v) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	var vals []cty.Value
	for _, x := range v {
		vals = append(vals, cty.StringVal(x))
	}
	return cty.ListVal(vals)
}

func writeServer(b *hclwrite.Body, s *config.Server) {
	b.SetAttributeValue("transport", cty.StringVal(s.Transport))
	strMap := func(m map[string]string) cty.Value {
		vals := map[string]cty.Value{}
		for k, v := range m {
			vals[k] = cty.StringVal(v)
		}
		return cty.ObjectVal(vals)
	}
	if s.IsRemote() {
		b.SetAttributeValue("url", cty.StringVal(s.URL))
		if len(s.Headers) > 0 {
			b.SetAttributeValue("headers", strMap(s.Headers))
		}
		if len(s.HeadersHelper) > 0 {
			b.SetAttributeValue("headers_helper", strList(s.HeadersHelper))
		}
		if o := s.OAuth; o != nil {
			ob := b.AppendNewBlock("oauth", nil).Body()
			ob.SetAttributeValue("grant", cty.StringVal(o.Grant))
			if o.PerUser {
				ob.SetAttributeValue("per_user", cty.True)
			}
			for _, kv := range [][2]string{{"audience", o.Audience}, {"client_id", o.ClientID}, {"client_secret", o.ClientSecret}, {"client_metadata_url", o.ClientMetadataURL},
				{"auth_server_metadata_url", o.AuthServerMetadataURL}, {"private_key_file", o.PrivateKeyFile}, {"private_key", o.PrivateKey},
				{"signing_algorithm", o.SigningAlgorithm}, {"assertion_file", o.AssertionFile}, {"assertion", o.Assertion}} {
				if kv[1] != "" {
					ob.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
				}
			}
			if o.CallbackPort != 0 {
				ob.SetAttributeValue("callback_port", cty.NumberIntVal(int64(o.CallbackPort)))
			}
			if len(o.Scopes) > 0 {
				ob.SetAttributeValue("scopes", strList(o.Scopes))
			}
			if o.AllowLoopback {
				ob.SetAttributeValue("allow_loopback", cty.True)
			}
		}
		if s.AuthScheme != "" {
			ab := b.AppendNewBlock("auth", []string{s.AuthScheme}).Body()
			if s.AuthPerUser {
				ab.SetAttributeValue("per_user", cty.True)
			}
			if s.AuthInboundToken {
				ab.SetAttributeValue("inbound_token", cty.True)
			}
			if t, err := ctyjson.ImpliedType(s.AuthConfig); err == nil {
				if v, err := ctyjson.Unmarshal(s.AuthConfig, t); err == nil && v.Type().IsObjectType() {
					keys := make([]string, 0, len(v.Type().AttributeTypes()))
					for k := range v.Type().AttributeTypes() {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						ab.SetAttributeValue(k, v.GetAttr(k))
					}
				}
			}
		}
	} else {
		b.SetAttributeValue("command", cty.StringVal(s.Command))
		if len(s.Args) > 0 {
			b.SetAttributeValue("args", strList(s.Args))
		}
		if len(s.Env) > 0 {
			b.SetAttributeValue("env", strMap(s.Env))
		}
		if len(s.InheritEnv) > 0 {
			b.SetAttributeValue("inherit_env", strList(s.InheritEnv))
		}
		if s.Cwd != "" {
			b.SetAttributeValue("cwd", cty.StringVal(s.Cwd))
		}
	}
	if s.Disabled {
		b.SetAttributeValue("disabled", cty.True)
	}
	b.SetAttributeValue("connect_timeout", cty.StringVal(s.ConnectTimeout.String()))
	if s.ToolTimeout > 0 {
		b.SetAttributeValue("tool_timeout", cty.StringVal(s.ToolTimeout.String()))
	}
	if s.MaxToolDuration > 0 {
		b.SetAttributeValue("max_tool_duration", cty.StringVal(s.MaxToolDuration.String()))
	}
}

// writeGateway writes the gateway and audit blocks in effect.
func writeGateway(b *hclwrite.Body, cfg *config.Config) {
	if g := cfg.Gateway; g != nil {
		b.AppendNewline()
		comment(b, fmt.Sprintf("%s scope, %s:%d", g.Origin.Scope, g.Origin.File, g.Origin.Range.Start.Line))
		gb := b.AppendNewBlock("gateway", nil).Body()
		if g.URL != "" {
			gb.SetAttributeValue("url", cty.StringVal(g.URL))
		}
		if o := g.OAuth; o != nil {
			ob := gb.AppendNewBlock("oauth", nil).Body()
			for _, kv := range [][2]string{{"issuer", o.Issuer}, {"groups_claim", o.GroupsClaim}, {"jwks_url", o.JWKSURL},
				{"introspection_url", o.IntrospectionURL}, {"client_id", o.ClientID}, {"client_secret", o.ClientSecret}} {
				if kv[1] != "" {
					ob.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
				}
			}
			ob.SetAttributeValue("audience", strList(o.Audience))
			if len(o.Scopes) > 0 {
				ob.SetAttributeValue("scopes", strList(o.Scopes))
			}
			if o.AllowLoopback {
				ob.SetAttributeValue("allow_loopback", cty.True)
			}
		}
		if r := g.RateLimit; r != nil {
			rb := gb.AppendNewBlock("rate_limit", nil).Body()
			if r.PerPrincipal != "" {
				rb.SetAttributeValue("per_principal", cty.StringVal(r.PerPrincipal))
			}
			if r.Burst != 0 {
				rb.SetAttributeValue("burst", cty.NumberIntVal(int64(r.Burst)))
			}
			if r.MaxConcurrent != 0 {
				rb.SetAttributeValue("max_concurrent", cty.NumberIntVal(int64(r.MaxConcurrent)))
			}
		}
	}
	if a := cfg.Audit; a != nil {
		b.AppendNewline()
		comment(b, fmt.Sprintf("%s scope, %s:%d", a.Origin.Scope, a.Origin.File, a.Origin.Range.Start.Line))
		b.AppendNewBlock("audit", nil).Body().SetAttributeValue("path", cty.StringVal(a.Path))
	}
}

// comment appends a comment line to body.
func comment(body *hclwrite.Body, text string) {
	body.AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte("# " + text + "\n")}})
}

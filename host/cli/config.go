package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/config"
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
			_, err = a.stdout.Write(config.Render(cfg))
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
			checks := ""
			if n, m := len(cfg.Hooks), len(cfg.Interceptors); n+m > 0 {
				checks = fmt.Sprintf(", %d hook(s), %d interceptor(s)", n, m)
			}
			fmt.Fprintf(a.stdout, "Configuration is valid: %d server(s)%s from %s.\n", len(cfg.Servers), checks, strings.Join(files, ", "))
			return nil
		},
	}

	var yes bool
	approve := &cobra.Command{
		Use:   "approve NAME... | @checks",
		Short: "Approve project-scope and registry-installed servers, or the project's hooks and interceptors (@checks)",
		Long: `Shows what each named project-scope server, or server installed from an MCP
Registry (registry = "NAME@VERSION"), runs (command, args, env, cwd) or
reaches and sends (url, headers, headers helper, oauth or auth block, TLS,
proxy and transport options), and records its approval hash in the local scope
file of this directory; a user-scope server from a registry is approved in the
user file, so that it runs in every directory (where a desktop client starts
mcphost serve). A project never approves its own servers. Any later change to those fields needs approval again. Values taken from
env() are shown as the env() call: they are read only once approved.

@checks approves the project files' hook and interceptor blocks, all of them
at once: it shows every one and records the hash of them as written. Any later
edit of them needs approval again.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	approve.RunE = func(_ *cobra.Command, names []string) error {
		cfg, err := a.loadConfig()
		if err != nil {
			return err
		}
		hashes := map[string]string{}
		// userFile holds the approvals of user-scope registry servers:
		// the user file is read in every directory, where a desktop client
		// may start mcphost serve.
		userFile := map[string]string{}
		for _, name := range names {
			if name == config.ApprovalKeyChecks {
				h := cfg.ChecksApprovalHash()
				if h == "" {
					return fmt.Errorf("no project file declares hook or interceptor blocks: %s has nothing to approve", name)
				}
				hooks, ics := cfg.ProjectChecks()
				describeChecksForApproval(a.stderr, hooks, ics)
				hashes[name] = h
				continue
			}
			s := cfg.Server(name)
			if s == nil {
				return fmt.Errorf("no server named %q is configured", name)
			}
			if !s.NeedsApproval() {
				return fmt.Errorf("server %q comes from the %s scope; only project-scope servers and servers installed from a registry need approval", name, s.Origin.Scope)
			}
			fmt.Fprintf(a.stderr, "Server %q from %s:\n", name, s.Origin.File)
			describeForApproval(a.stderr, s.Written())
			if s.Origin.Scope == config.ScopeUser && s.Origin.File != "" {
				userFile[name] = s.Origin.File
			}
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
		return a.writeApprovals(names, hashes, userFile)
	}
	approve.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking")
	cmd.AddCommand(show, validate, approve)
	return cmd
}

// redactConfig returns cfg for showing (`config show` without
// --show-secrets): every secret value is "<redacted>" — servers' env and
// headers, oauth client secrets, private keys and assertions, auth
// settings the plugin marks sensitive, idp secrets and tokens, the
// gateway's client secret and telemetry's otlp_headers.
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
	if t := cfg.Telemetry; t != nil && len(t.OTLPHeaders) > 0 {
		r := *t
		r.OTLPHeaders = map[string]string{}
		for k := range t.OTLPHeaders {
			r.OTLPHeaders[k] = redacted
		}
		c.Telemetry = &r
	}
	if cfg.State != nil && cfg.State.URL != "" {
		st := *cfg.State
		st.URL = st.RedactedURL()
		c.State = &st
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
	c.Hooks, c.Interceptors = redactChecks(cfg)
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
	var comp *config.LockedComponent
	if p := cfg.PluginForScheme(s.AuthScheme); p != nil {
		comp = p.Locked.Component("auth", s.AuthScheme)
	}
	return redactByComponent(s.AuthConfig, comp, func(k string) bool { return k != "idp" })
}

// redactByComponent redacts the values of the JSON object raw that the
// plugin component comp marks sensitive; without comp (no recorded
// schema), those for which unknown says so. Anything but an object is
// redacted whole.
func redactByComponent(raw json.RawMessage, comp *config.LockedComponent, unknown func(key string) bool) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return json.RawMessage(`"` + redacted + `"`)
	}
	for k := range m {
		sensitive := unknown(k)
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

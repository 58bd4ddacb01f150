package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/plugins"
	"github.com/mcphost/mcphost/sdk"
)

func (a *app) pluginsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "plugins", Short: "List, lock and verify plugins"}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the configured and discovered plugins, their pins and what they provide",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := a.load(true)
			if err != nil {
				return err
			}
			type row struct {
				Name       string   `json:"name"`
				Path       string   `json:"path"`
				Discovered bool     `json:"discovered"`
				SHA256     string   `json:"sha256,omitempty"`
				Provides   []string `json:"provides,omitempty"`
			}
			var rows []row
			for _, p := range cfg.Plugins {
				rows = append(rows, row{Name: p.Name, Path: p.Path, Discovered: p.Discovered, SHA256: p.Pin(), Provides: provides(p.Locked)})
			}
			if asJSON {
				if rows == nil {
					rows = []row{}
				}
				return a.writeJSON(map[string]any{"plugins": rows, "plugin_dir": cfg.Settings.PluginDir, "lock_file": cfg.Settings.PluginLock})
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPATH\tSHA256\tPROVIDES")
			for _, r := range rows {
				sum := "not pinned"
				if r.SHA256 != "" {
					sum = r.SHA256[:12] + "…"
				}
				prov := strings.Join(r.Provides, ", ")
				if prov == "" {
					prov = "unknown (run `mcphost plugins lock`)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Path, sum, prov)
			}
			tw.Flush()
			fmt.Fprintf(a.stdout, "\nplugin directory: %s\nlock file: %s\n", cfg.Settings.PluginDir, cfg.Settings.PluginLock)
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	lock := &cobra.Command{
		Use:   "lock",
		Short: "Record each plugin binary's sha256 and what it provides in the lock file",
		Long: `Computes the sha256 of every configured or discovered plugin binary, starts
it once (verified against that checksum) to ask what it provides, and writes
the lock file. From then on the host refuses to start a binary that does not
match. A plugin block's own sha256, if set, must match: it is never overridden.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.load(true)
			if err != nil {
				return err
			}
			if cfg.Settings.PluginLock == "" {
				return fmt.Errorf("no lock file location: set plugin_lock, MCPHOST_PLUGIN_LOCK, or HOME")
			}
			if len(cfg.Plugins) == 0 {
				fmt.Fprintf(a.stdout, "No plugins configured or found in %s.\n", cfg.Settings.PluginDir)
				return nil
			}
			l := &config.Lock{}
			failed := false
			for _, p := range cfg.Plugins {
				entry, err := a.lockOne(cmd.Context(), p)
				if err != nil {
					fmt.Fprintf(a.stderr, "Error: %v\n", err)
					failed = true
					continue
				}
				l.Plugins = append(l.Plugins, entry)
				fmt.Fprintf(a.stdout, "%s: sha256 %s, provides %s\n", p.Name, entry.SHA256, strings.Join(provides(entry), ", "))
			}
			if failed {
				return errSilent
			}
			if err := config.WriteLock(cfg.Settings.PluginLock, l); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Wrote %s\n", cfg.Settings.PluginLock)
			return nil
		},
	}

	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check every plugin binary against its pinned sha256",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := a.load(true)
			if err != nil {
				return err
			}
			bad := 0
			for _, p := range cfg.Plugins {
				pin := p.Pin()
				sum, err := plugins.FileSHA256(p.Path)
				switch {
				case err != nil:
					fmt.Fprintf(a.stdout, "%s: ERROR %v\n", p.Name, err)
					bad++
				case pin == "":
					fmt.Fprintf(a.stdout, "%s: NOT PINNED (run `mcphost plugins lock`)\n", p.Name)
					bad++
				case sum != pin:
					fmt.Fprintf(a.stdout, "%s: MISMATCH %s is %s, pinned %s\n", p.Name, p.Path, sum, pin)
					bad++
				default:
					if lerr := plugins.CheckLocation(p.Path); lerr != nil {
						fmt.Fprintf(a.stdout, "%s: UNSAFE %v\n", p.Name, lerr)
						bad++
						continue
					}
					fmt.Fprintf(a.stdout, "%s: OK %s\n", p.Name, sum)
				}
			}
			if bad > 0 {
				return errSilent
			}
			return nil
		},
	}
	cmd.AddCommand(list, lock, verify)
	return cmd
}

// lockOne hashes a plugin binary, starts it pinned to that hash and asks it
// what it provides.
func (a *app) lockOne(ctx context.Context, p *config.Plugin) (*config.LockedPlugin, error) {
	sum, err := plugins.FileSHA256(p.Path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	if p.SHA256 != "" && p.SHA256 != sum {
		return nil, fmt.Errorf("plugin %s: %s has sha256 %s but its plugin block pins %s", p.Name, p.Path, sum, p.SHA256)
	}
	pinned := *p
	pinned.SHA256 = sum
	rt, err := plugins.New(&config.Config{Plugins: []*config.Plugin{&pinned}}, &plugins.Options{Logger: a.logger()})
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	info, err := rt.Info(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	entry := &config.LockedPlugin{Name: p.Name, Path: p.Path, SHA256: sum, Version: info.Version, Protocol: sdk.ProtocolVersion, Headers: info.Headers != nil, Interceptor: info.Interceptor != nil}
	for _, t := range info.Transports {
		entry.Transports = append(entry.Transports, t.Name)
		entry.Components = append(entry.Components, lockedComponent("transport", t))
	}
	for _, s := range info.AuthSchemes {
		entry.AuthSchemes = append(entry.AuthSchemes, s.Name)
		entry.Components = append(entry.Components, lockedComponent("auth", s))
	}
	if info.Headers != nil {
		entry.Components = append(entry.Components, lockedComponent("headers", *info.Headers))
	}
	if info.Interceptor != nil {
		entry.Components = append(entry.Components, lockedComponent("interceptor", *info.Interceptor))
	}
	return entry, nil
}

// lockedComponent records a component's configuration schema for the lock file.
func lockedComponent(kind string, c sdk.Component) *config.LockedComponent {
	lc := &config.LockedComponent{Kind: kind, Name: c.Name}
	for _, a := range c.Config {
		typ := map[sdk.AttrType]string{sdk.TypeString: "string", sdk.TypeNumber: "number", sdk.TypeBool: "bool",
			sdk.TypeListOfString: "list(string)", sdk.TypeMapOfString: "map(string)"}[a.Type]
		if typ == "" {
			typ = "string"
		}
		lc.Attributes = append(lc.Attributes, &config.LockedAttribute{Name: a.Name, Type: typ, Required: a.Required, Sensitive: a.Sensitive})
	}
	return lc
}

func provides(l *config.LockedPlugin) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, t := range l.Transports {
		out = append(out, "transport "+t)
	}
	for _, s := range l.AuthSchemes {
		out = append(out, "auth "+s)
	}
	if l.Headers {
		out = append(out, "headers")
	}
	if l.Interceptor {
		out = append(out, "interceptor")
	}
	return out
}

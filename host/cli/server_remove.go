package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host/config"
)

func (a *app) serverRemoveCmd() *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a server from a configuration file",
		Long: `Removes the server's block, with the comment lines just above it, from the one
file that declares it among the local, project and user scopes (or --config).
When several do, -s says which. A client secret that server add stored for the
block is deleted with it. The managed scope is never written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			var candidates []target
			if len(a.configs) > 0 || cmd.Flags().Changed("scope") {
				t, err := a.editTarget(cmd, scope)
				if err != nil {
					return err
				}
				candidates = []target{t}
			} else {
				for _, s := range []string{"local", "project", "user"} {
					t, err := a.editTarget(cmd, s)
					if err == nil {
						candidates = append(candidates, t)
					}
				}
			}
			var found []target
			for _, t := range candidates {
				src, err := readIfExists(t.path)
				if err != nil {
					return err
				}
				if ok, err := config.HasServerBlock(src, t.path, name); err != nil {
					return err
				} else if ok {
					found = append(found, t)
				}
			}
			switch len(found) {
			case 0:
				loc := config.Locate(a.lookupEnv, a.workDir)
				if src, _ := readIfExists(loc.Managed); src != nil {
					if ok, _ := config.HasServerBlock(src, loc.Managed, name); ok {
						return fmt.Errorf("server %q is in the managed configuration %s, which only its administrators change", name, loc.Managed)
					}
				}
				var where []string
				for _, t := range candidates {
					where = append(where, t.path)
				}
				return fmt.Errorf("no server %q in %s", name, strings.Join(where, ", "))
			case 1:
			default:
				var where []string
				for _, t := range found {
					where = append(where, fmt.Sprintf("%s (-s %s)", t.path, t.scope))
				}
				return fmt.Errorf("server %q is in %s; say which with -s", name, strings.Join(where, " and "))
			}
			t := found[0]
			src, err := readIfExists(t.path)
			if err != nil {
				return err
			}
			out, stored, err := config.RemoveServerBlock(src, t.path, name)
			if err != nil {
				return err
			}
			if err := a.checkEdit(t, out, name, false); err != nil {
				return err
			}
			if err := writeConfigFile(t.path, src, out, t.scope); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Removed server %q from %s (%s scope)\n", name, t.path, t.scope)
			// Delete the secret server add stored for this block (and only
			// that one: another block may read other secrets).
			if own := secretName(name, t.path); slices.Contains(stored, own) {
				if other := a.secretUsers(own); len(other) > 0 {
					fmt.Fprintf(a.stderr, "warning: the client secret it stored, %s, is kept: %s still read it\n", own, strings.Join(other, ", "))
				} else if dir := config.SecretsDir(a.lookupEnv, a.workDir); dir != "" {
					if err := config.DeleteSecret(dir, own); err != nil {
						fmt.Fprintf(a.stderr, "warning: %v\n", err)
					} else {
						fmt.Fprintf(a.stdout, "Deleted its stored client secret %s\n", filepath.Join(dir, own))
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&scope, "scope", "s", "local", "the scope to remove it from: local, user or project")
	return cmd
}

// secretUsers lists the configuration files (as now written) that still
// call secret(name): those of the scopes, and those given with --config.
func (a *app) secretUsers(name string) []string {
	loc := config.Locate(a.lookupEnv, a.workDir)
	paths := append([]string{loc.User, loc.Local, loc.Managed}, loc.Project...)
	for _, f := range a.configs {
		if !filepath.IsAbs(f) {
			f = filepath.Join(a.workDir, f)
		}
		paths = append(paths, f)
	}
	var users []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		src, err := readIfExists(p)
		if err == nil && slices.Contains(config.SecretCalls(src, p), name) {
			users = append(users, p)
		}
	}
	return users
}

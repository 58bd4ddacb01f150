package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/mcphost/mcphost/host/config"
)

// maxOtherLocalFiles bounds the other directories' local files the empty
// gateway's notice lists.
const maxOtherLocalFiles = 10

// noServersNotice tells the user, on w, that serve has no server to serve
// (none configured, or none that will run: every one disabled, not
// approved or blocked by the managed policy), which and why, and where it
// looked: the files it read, the local-scope files of other directories
// that do declare servers (server add writes the local scope of the
// directory it runs in, and a desktop client starts serve from another),
// and how to add a server every directory sees. It prints nothing when a
// server will run.
func noServersNotice(w io.Writer, cfg *config.Config, loc config.Locations, workDir string) {
	var disabled, unapproved, blocked []*config.Server
	for _, s := range cfg.Servers {
		switch {
		case s.InterceptorOnly:
		case s.BlockedBy != "":
			blocked = append(blocked, s)
		case s.Disabled:
			disabled = append(disabled, s)
		case !s.Approved:
			unapproved = append(unapproved, s)
		default:
			return
		}
	}
	var b strings.Builder
	switch {
	case len(cfg.Servers) == 0:
		fmt.Fprintf(&b, "mcphost serve: no servers are configured: clients get no tools.\n")
	case len(unapproved) == 0 && len(blocked) == 0:
		fmt.Fprintf(&b, "mcphost serve: every configured server is disabled: clients get no tools.\n")
	default:
		fmt.Fprintf(&b, "mcphost serve: no configured server will run: clients get no tools.\n")
	}
	if len(unapproved) > 0 {
		fmt.Fprintf(&b, "  not approved (a project server or one installed from a registry runs once you approve it):\n")
		for _, s := range unapproved {
			fmt.Fprintf(&b, "    %s (%s)", s.Name, s.Origin.File)
			if note := s.ApprovalNote(); note != "" {
				fmt.Fprintf(&b, ": %s", note)
			}
			fmt.Fprintf(&b, "\n      review and approve it: mcphost config approve %s\n", s.Name)
		}
	}
	if len(blocked) > 0 {
		fmt.Fprintf(&b, "  blocked by the managed policy:\n")
		for _, s := range blocked {
			fmt.Fprintf(&b, "    %s: %s\n", s.Name, termSafe(s.BlockedBy))
		}
	}
	if len(disabled) > 0 && (len(unapproved) > 0 || len(blocked) > 0) {
		names := make([]string, len(disabled))
		for i, s := range disabled {
			names[i] = s.Name
		}
		fmt.Fprintf(&b, "  disabled (disabled = true): %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "  working directory: %s\n", workDir)
	if len(cfg.Files) == 0 {
		fmt.Fprintf(&b, "  no configuration file was found\n")
	} else {
		fmt.Fprintf(&b, "  files read:\n")
		for _, f := range cfg.Files {
			fmt.Fprintf(&b, "    %s (%s scope)\n", f.Path, f.Scope)
		}
	}
	read := map[string]bool{}
	for _, f := range cfg.Files {
		read[filepath.Clean(f.Path)] = true
	}
	for _, f := range []struct{ scope, path string }{{"user", loc.User}, {"local", loc.Local}} {
		if f.path != "" && !read[filepath.Clean(f.path)] {
			fmt.Fprintf(&b, "  no %s-scope file at %s\n", f.scope, f.path)
		}
	}
	if others := otherLocalServers(loc); len(others) > 0 {
		fmt.Fprintf(&b, "  servers in the local scope of other directories (used only when mcphost runs there):\n")
		for i, o := range others {
			if i == maxOtherLocalFiles {
				fmt.Fprintf(&b, "    … and %d more files\n", len(others)-i)
				break
			}
			fmt.Fprintf(&b, "    %s: %s\n", o.file, strings.Join(o.servers, ", "))
		}
		fmt.Fprintf(&b, "  to use one everywhere, add it again with -s user (or move its block to %s)\n", orUserFile(loc))
	}
	fmt.Fprintf(&b, "  add a server for every directory (the user scope):\n    mcphost server add -s user NAME -- COMMAND [ARGS…]\n")
	fmt.Fprintf(&b, "    e.g. mcphost server add -s user everything -- npx -y @modelcontextprotocol/server-everything\n")
	io.WriteString(w, b.String())
}

func orUserFile(loc config.Locations) string {
	if loc.User == "" {
		return "the user file"
	}
	return loc.User
}

// localServers is a local-scope file and the servers it declares.
type localServers struct {
	file    string
	servers []string
}

// otherLocalServers lists the local-scope files of other directories (in
// the config directory's projects/) that declare servers, with their
// names, most recently changed first. Files that do not parse are skipped:
// serve reports the problems of the files it reads, not of these.
func otherLocalServers(loc config.Locations) []localServers {
	if loc.ConfigDir == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(loc.ConfigDir, "projects", "*.hcl"))
	type found struct {
		localServers
		mod int64
	}
	var all []found
	for _, p := range paths {
		if filepath.Clean(p) == filepath.Clean(loc.Local) {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, p, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		var names []string
		for _, blk := range body.Blocks {
			if blk.Type == "server" && len(blk.Labels) == 1 {
				names = append(names, blk.Labels[0])
			}
		}
		if len(names) == 0 {
			continue
		}
		var mod int64
		if fi, err := os.Stat(p); err == nil {
			mod = fi.ModTime().UnixNano()
		}
		all = append(all, found{localServers{p, names}, mod})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].mod > all[j].mod })
	out := make([]localServers, len(all))
	for i, f := range all {
		out[i] = f.localServers
	}
	return out
}

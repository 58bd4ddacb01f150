package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// writeApprovals records the approval hashes of `config approve`. A
// user-scope server (one installed from a registry: the user scope needs
// no other approval) is approved in the settings of its own user file,
// read in every directory; every other one (a project server, a local one
// from a registry, @checks) in the local scope file of this directory, so
// a project never approves itself. userFile maps the names of the first
// kind to their file. A local file that already holds an approval of a
// name moved to the user file gets the new hash too: the local scope's
// settings win over the user's.
func (a *app) writeApprovals(names []string, hashes, userFile map[string]string) error {
	loc := config.Locate(a.lookupEnv, a.workDir)
	byFile := map[string]map[string]string{}
	var order []string
	add := func(file, name string) {
		if byFile[file] == nil {
			byFile[file] = map[string]string{}
			order = append(order, file)
		}
		byFile[file][name] = hashes[name]
	}
	var localHas map[string]string
	if loc.Local != "" {
		if src, err := os.ReadFile(loc.Local); err == nil {
			localHas, _ = config.ReadApprovals(loc.Local, src)
		}
	}
	for _, name := range names {
		if f := userFile[name]; f != "" {
			add(f, name)
			if _, stale := localHas[name]; !stale {
				continue
			}
		}
		if loc.Local == "" {
			return errors.New("cannot find the local scope file: set HOME or MCPHOST_CONFIG_DIR")
		}
		add(loc.Local, name)
	}
	for _, file := range order {
		if err := config.WriteApprovals(file, byFile[file]); err != nil {
			return err
		}
		approved := make([]string, 0, len(byFile[file]))
		for _, name := range names {
			if _, ok := byFile[file][name]; ok {
				approved = append(approved, name)
			}
		}
		fmt.Fprintf(a.stdout, "Approved %s in %s\n", strings.Join(approved, ", "), file)
	}
	return nil
}

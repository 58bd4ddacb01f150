package config

import (
	"os"
	"path/filepath"
	"strings"
)

// Environment variables that relocate configuration files.
const (
	EnvManagedConfig = "MCPHOST_MANAGED_CONFIG" // managed file (default /etc/mcphost/managed.hcl)
	EnvConfigDir     = "MCPHOST_CONFIG_DIR"     // user config directory (default $XDG_CONFIG_HOME/mcphost or ~/.config/mcphost)
	EnvLocalConfig   = "MCPHOST_LOCAL_CONFIG"   // local-scope file (default <config dir>/projects/<project path>.hcl)
)

// ProjectFileName is the project-scope file looked for from the working
// directory up to the home directory.
const ProjectFileName = ".mcphost.hcl"

// DefaultManagedFile is where the managed (enterprise) file is looked for.
const DefaultManagedFile = "/etc/mcphost/managed.hcl"

// Locations are the files each scope is read from.
type Locations struct {
	Managed string
	// ConfigDir is the user's mcphost directory (user file, local files, state).
	ConfigDir string
	User      string
	// Project lists project files, farthest from the working directory first
	// (so nearer files take precedence when merged in order).
	Project []string
	// ProjectRoot is the nearest directory holding a project file or a .git
	// entry, or the working directory when there is none. The local scope
	// file is keyed by it.
	ProjectRoot string
	Local       string
}

// Locate finds the configuration files for workDir, honouring the MCPHOST_*
// relocation variables read through lookup. Files need not exist.
func Locate(lookup LookupEnvFunc, workDir string) Locations {
	return locate(lookup, workDir, nil)
}

// locate is Locate where a project file also counts as found when
// present(path) says so (an overlay of Load).
func locate(lookup LookupEnvFunc, workDir string, present func(string) bool) Locations {
	var loc Locations
	loc.Managed = DefaultManagedFile
	if v, ok := lookup(EnvManagedConfig); ok && v != "" {
		loc.Managed = v
	}
	home, _ := lookup("HOME")
	switch {
	case nonEmpty(lookup, EnvConfigDir):
		loc.ConfigDir, _ = lookup(EnvConfigDir)
	case nonEmpty(lookup, "XDG_CONFIG_HOME"):
		x, _ := lookup("XDG_CONFIG_HOME")
		loc.ConfigDir = filepath.Join(x, "mcphost")
	case home != "":
		loc.ConfigDir = filepath.Join(home, ".config", "mcphost")
	}
	if loc.ConfigDir != "" {
		loc.User = filepath.Join(loc.ConfigDir, "config.hcl")
	}

	workDir = filepath.Clean(workDir)
	loc.ProjectRoot = workDir
	var found []string
	rootFound := false
	for _, dir := range searchDirs(workDir, home) {
		p := filepath.Join(dir, ProjectFileName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() || present != nil && present(p) {
			if len(found) == 0 && !rootFound {
				loc.ProjectRoot, rootFound = dir, true
			}
			found = append(found, p)
		} else if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil && !rootFound {
			loc.ProjectRoot, rootFound = dir, true
		}
	}
	for i := len(found) - 1; i >= 0; i-- {
		loc.Project = append(loc.Project, found[i])
	}

	if v, ok := lookup(EnvLocalConfig); ok && v != "" {
		loc.Local = v
	} else if loc.ConfigDir != "" {
		loc.Local = filepath.Join(loc.ConfigDir, "projects", LocalFileName(loc.ProjectRoot))
	}
	return loc
}

// searchDirs lists the directories a project file (and the project's root,
// a .git entry) is looked for in, nearest first: workDir and its parents,
// up to the home directory, whose own files belong to the user scope.
func searchDirs(workDir, home string) []string {
	var dirs []string
	for dir := filepath.Clean(workDir); ; {
		if home != "" && dir == filepath.Clean(home) {
			break
		}
		dirs = append(dirs, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return dirs
}

// LocalFileName is the file name of the local scope for a project directory:
// the absolute path with separators turned into dashes.
func LocalFileName(projectRoot string) string {
	return strings.ReplaceAll(filepath.Clean(projectRoot), string(filepath.Separator), "-") + ".hcl"
}

func nonEmpty(lookup LookupEnvFunc, name string) bool {
	v, ok := lookup(name)
	return ok && v != ""
}

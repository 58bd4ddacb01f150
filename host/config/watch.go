package config

import (
	"path/filepath"
	"slices"
)

// watchPaths returns Config.Watch for a load from workDir: the files of
// sources (files, the --config files, when set; else the discovered
// scopes), then the managed file, the plugin lock file and directory, the
// secrets directory, and the .git entries that decide the project's root.
func watchPaths(loc Locations, files []string, workDir, home string, s *Settings) []string {
	var paths []string
	dirs := searchDirs(workDir, home)
	if len(files) > 0 {
		paths = append(paths, files...)
	} else {
		paths = append(paths, loc.User)
		for _, dir := range slices.Backward(dirs) { // farthest first, as loaded
			paths = append(paths, filepath.Join(dir, ProjectFileName))
		}
		paths = append(paths, loc.Local)
	}
	paths = append(paths, loc.Managed, s.PluginLock, s.PluginDir, joinIf(loc.ConfigDir, SecretsDirName))
	if len(files) == 0 {
		// A .git entry nearer than the project's root (or any, while there
		// is none) moves the root, and with it the local file and the base
		// of the local file's relative paths.
		for _, dir := range dirs {
			paths = append(paths, filepath.Join(dir, ".git"))
			if dir == loc.ProjectRoot && dir != filepath.Clean(workDir) {
				break
			}
		}
	}
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

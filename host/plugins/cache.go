package plugins

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// A plugin's verified private copy is kept across runs in a per-user cache
// directory (Options.CacheDir), so that a host's first start of a plugin
// need not read and hash the binary again: the copy is named by the plugin
// and its pinned sha256, and beside it a stamp records what the copy and
// its source were when the copy was hashed (device, inode, size,
// modification time, mode). A copy is used only while both are unchanged
// — an edited source is copied and hashed again, and refused if it no
// longer matches its pin — and only from a directory of the user's that no
// one else can write. Copies of other pins of the plugin are removed when a
// new one is made. Where files have no such identity (Windows), or the
// cache directory cannot be used, each runtime copies into its run
// directory and hashes, as before.

// cacheName is the cached copy's name for plugin name pinned at sum.
func cacheName(name string, sum []byte) string { return name + "-" + hex.EncodeToString(sum) }

// cacheDir returns the usable cache directory, creating it (0700), or "".
func (r *Runtime) cacheDir() string {
	dir := r.opts.CacheDir
	if dir == "-" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "mcphost", "plugins")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.log.Debug("the plugin cache directory is not usable", "dir", dir, "error", err)
		return ""
	}
	if err := privateDir(dir); err != nil {
		r.log.Warn("the plugin cache directory is not private: plugins are copied and hashed at every start", "dir", dir, "error", err)
		return ""
	}
	return dir
}

// cached returns the cached copy of plugin p pinned at sum, if there is one
// whose copy and source are as they were when it was hashed.
func (r *Runtime) cached(dir string, p *config.Plugin, sum []byte) (string, os.FileInfo, bool) {
	path := filepath.Join(dir, cacheName(p.Name, sum))
	stamp, err := os.ReadFile(path + ".stamp")
	if err != nil {
		return "", nil, false
	}
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return "", nil, false
	}
	src, err := os.Stat(p.Path)
	if err != nil {
		return "", nil, false
	}
	want, ok := stampOf(info, src)
	if !ok || string(stamp) != want {
		return "", nil, false
	}
	return path, info, true
}

// cache names a copy hashed at sum (made in the cache directory) as the
// plugin's cached copy, writes its stamp, removes the plugin's copies of
// other pins, and returns the copy. Once the copy is named, a failure only
// leaves it unstamped (it is used by this run, and replaced by the next).
func (r *Runtime) cache(dir string, p *config.Plugin, sum []byte, exe string, src os.FileInfo) (string, os.FileInfo, error) {
	path := filepath.Join(dir, cacheName(p.Name, sum))
	os.Remove(path + ".stamp") // first: a stamp never describes another file
	if err := os.Rename(exe, path); err != nil {
		os.Remove(exe)
		return "", nil, fmt.Errorf("plugin %s: caching its verified copy: %w", p.Name, err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		return "", nil, fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	if err := writeStamp(dir, path+".stamp", info, src); err != nil {
		r.log.Debug("the verified copy is not stamped: it will be copied again", "plugin", p.Name, "error", err)
	}
	others, _ := filepath.Glob(filepath.Join(dir, p.Name+"-*"))
	for _, o := range others {
		pin := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(o), p.Name+"-"), ".stamp")
		if len(pin) == 2*len(sum) && pin != hex.EncodeToString(sum) {
			os.Remove(o)
		}
	}
	return path, info, nil
}

// writeStamp writes the stamp of a copy and its source at path.
func writeStamp(dir, path string, copy, src os.FileInfo) error {
	stamp, ok := stampOf(copy, src)
	if !ok {
		return errors.New("no file identity here")
	}
	tmp, err := os.CreateTemp(dir, ".stamp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(stamp)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// stampOf is what a stamp records of a copy and its source.
func stampOf(copy, src os.FileInfo) (string, bool) {
	c, ok := identity(copy)
	if !ok {
		return "", false
	}
	s, ok := identity(src)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("copy %s\nsource %s\n", c, s), true
}

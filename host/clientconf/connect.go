package clientconf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/diff"
)

// ErrDanglingLink is returned for a client file that is a symbolic link
// whose target does not exist.
var ErrDanglingLink = errors.New("dangling symbolic link")

// ErrChangedMeanwhile is returned by Apply when the file changed after the
// change was planned.
var ErrChangedMeanwhile = errors.New("the file changed while the change was being confirmed; run the command again")

// Change is a planned edit of a client's file: Connect and Disconnect plan
// it, the caller shows it (Diff) and asks, and Apply makes it.
type Change struct {
	Client Client
	Scope  Scope
	// Path is the client's file.
	Path string
	// Name is the gateway entry's name.
	Name string
	// Before is the file now (nil when it does not exist); After the file
	// once changed (nil when the file is removed).
	Before, After []byte
	// Existed: the file exists now.
	Existed bool
	// Found (Disconnect): the entry is in the file.
	Found bool
	// Restore (Disconnect): the file is restored byte for byte from the
	// backup Connect kept (removed when Connect created it).
	Restore bool
	// ChangedSince (Disconnect): the file changed since Connect wrote it,
	// so only the entry is removed.
	ChangedSince bool

	// Warnings are what Apply could not tidy up (a backup left behind).
	Warnings []string

	backups *backups
	record  *record
}

// Unchanged reports whether Apply would change nothing.
func (ch *Change) Unchanged() bool {
	if ch.Restore {
		return false
	}
	return ch.Existed == (ch.After != nil) && bytes.Equal(ch.Before, ch.After)
}

// Diff is the change as a unified diff of the file.
func (ch *Change) Diff() []byte {
	oldName, newName := ch.Path, ch.Path
	if !ch.Existed {
		oldName = "/dev/null"
	}
	if ch.After == nil {
		newName = "/dev/null"
	}
	return diff.Diff(oldName, ch.Before, newName, ch.After)
}

// Connect plans writing entry e into client c's file of scope: the entry
// named e.Name is added, or replaced when it is there. backupDir is where
// the file's backup is kept (mcphost's state directory).
func Connect(c Client, scope Scope, env Env, e Entry, backupDir string) (*Change, error) {
	if err := e.validate(c); err != nil {
		return nil, err
	}
	ch, err := plan(c, scope, env, e.name(), backupDir)
	if err != nil {
		return nil, err
	}
	if rec := ch.record; rec != nil && rec.Name != ch.Name {
		// One gateway entry per file: the record restores the file as it
		// was before the first, which a second name would make wrong.
		if _, other, err := ch.withoutName(ch.Before, rec.Name); err == nil && other {
			return nil, &OtherEntryError{Path: ch.Path, Name: rec.Name}
		}
		ch.record = nil // the other entry is gone: its record is stale
	}
	if c.ID == "codex" {
		ch.After, err = tomlSet(ch.Before, ch.Name, e)
	} else {
		ch.After, err = jsonSet(ch.Before, serversKey(c), ch.Name, e.jsonEntry(c))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ch.Path, err)
	}
	return ch, nil
}

// Disconnect plans removing the entry name from client c's file of scope.
// When the file is as Connect left it, the change restores the backup byte
// for byte (removing the file when Connect created it); else only the entry
// is removed (ChangedSince).
func Disconnect(c Client, scope Scope, env Env, name, backupDir string) (*Change, error) {
	if name == "" {
		name = DefaultName
	}
	ch, err := plan(c, scope, env, name, backupDir)
	if err != nil {
		return nil, err
	}
	if ch.Existed {
		if c.ID == "codex" {
			ch.After, ch.Found, err = tomlRemove(ch.Before, name)
		} else {
			ch.After, ch.Found, err = jsonRemove(ch.Before, serversKey(c), name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ch.Path, err)
		}
	}
	if ch.record != nil && ch.record.Name == name {
		if ch.record.Written == digest(ch.Before, ch.Existed) {
			ch.Restore = true
			ch.After = nil
			if ch.record.Existed {
				orig, err := ch.backups.original(ch.record)
				if err != nil {
					return nil, err
				}
				// A backup never holds the entry (Apply keeps none that
				// does); one of an older mcphost might: the entry goes.
				if without, found, err := ch.without(orig); err == nil && found {
					orig = without
				}
				ch.After = orig
			}
			return ch, nil
		}
		ch.ChangedSince = ch.Found
	}
	return ch, nil
}

func plan(c Client, scope Scope, env Env, name, backupDir string) (*Change, error) {
	p, err := c.Path(scope, env)
	if err != nil {
		return nil, err
	}
	data, existed, err := readFile(p)
	if err != nil {
		return nil, err
	}
	ch := &Change{Client: c, Scope: scope, Path: p, Name: name, Before: data, Existed: existed, After: data}
	if backupDir != "" {
		ch.backups = &backups{dir: backupDir}
		if ch.record, err = ch.backups.load(p); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// Apply makes the change: the file's backup is kept before Connect's first
// change; Disconnect restores it or removes the entry.
func (ch *Change) Apply() error {
	now, existed, err := readFile(ch.Path)
	if err != nil {
		return err
	}
	if existed != ch.Existed || !bytes.Equal(now, ch.Before) {
		return fmt.Errorf("%s: %w", ch.Path, ErrChangedMeanwhile)
	}
	if ch.Unchanged() {
		return nil
	}
	if ch.Restore || ch.ChangedSince {
		return ch.disconnect()
	}
	if ch.Found || ch.After == nil {
		// Disconnect without a backup of ours: only the entry goes.
		return writeFile(ch.Path, ch.After, nil)
	}
	// Connect: the backup first, unless one of ours is current (a second
	// connect keeps the first backup).
	rec := ch.record
	if rec == nil || rec.Written != digest(ch.Before, ch.Existed) {
		orig := ch.Before
		if rec != nil {
			// Connected before, and the file changed since (the client
			// rewrote it): the new backup is the file without our entry,
			// never one that holds it, or Disconnect would restore a
			// connected file.
			without, found, err := ch.without(ch.Before)
			if err != nil {
				return err
			}
			if found {
				orig = without
			}
		}
		if ch.backups == nil {
			rec = nil
		} else if rec, err = ch.backups.save(ch.Client, ch.Scope, ch.Path, ch.Name, orig, ch.Existed); err != nil {
			return err
		}
	}
	var created []string
	if err := writeFile(ch.Path, ch.After, &created); err != nil {
		return err
	}
	if rec != nil {
		if len(created) > 0 {
			rec.CreatedDirs = created
		}
		rec.Written = digest(ch.After, true)
		return ch.backups.update(rec)
	}
	return nil
}

// without returns data without ch's entry, and whether it held it.
func (ch *Change) without(data []byte) ([]byte, bool, error) {
	return ch.withoutName(data, ch.Name)
}

// withoutName returns data without the entry name, and whether it held it.
func (ch *Change) withoutName(data []byte, name string) ([]byte, bool, error) {
	if data == nil {
		return nil, false, nil
	}
	if ch.Client.ID == "codex" {
		return tomlRemove(data, name)
	}
	return jsonRemove(data, serversKey(ch.Client), name)
}

// OtherEntryError is returned by Connect for a file in which mcphost
// already connected the gateway under another name.
type OtherEntryError struct {
	Path, Name string
}

func (e *OtherEntryError) Error() string {
	return fmt.Sprintf("%s already holds the gateway as %q: disconnect it first (mcphost client disconnect --name %s), or connect with --name %s", e.Path, e.Name, e.Name, e.Name)
}

func (ch *Change) disconnect() error {
	rec := ch.record
	if ch.Restore && !rec.Existed {
		if err := os.Remove(ch.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", ch.Path, err)
		}
		// The directories Connect created, deepest first, when empty.
		for i := len(rec.CreatedDirs) - 1; i >= 0; i-- {
			os.Remove(rec.CreatedDirs[i]) // fails, as it should, when not empty
		}
	} else if err := writeFile(ch.Path, ch.After, nil); err != nil {
		return err
	}
	warning, err := ch.backups.drop(rec)
	if warning != "" {
		ch.Warnings = append(ch.Warnings, warning)
	}
	return err
}

// readFile reads path; a file that does not exist is (nil, false, nil).
func readFile(path string) ([]byte, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, true, nil
}

// writeFile replaces path's content atomically (a file beside it renamed
// over it; a symbolic link is followed, not replaced), keeping its mode; a
// new file is 0600 (it may name a token's variable, and is the user's
// own), its missing directories 0700, which created lists.
func writeFile(path string, data []byte, created *[]string) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	} else if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		// A symbolic link whose target is missing (a dotfiles link):
		// replacing it with a file would break the user's setup.
		return fmt.Errorf("writing %s: %w: it is a symbolic link that does not resolve (%w); fix or remove the link", path, ErrDanglingLink, err)
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := mkdirAll(dir, created); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".mcphost-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync() // the bytes are on disk before the rename makes them the file
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return syncDir(dir)
}

// mkdirAll is os.MkdirAll (0700) listing the directories it made,
// outermost first.
func mkdirAll(dir string, created *[]string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if created != nil {
		for i := len(missing) - 1; i >= 0; i-- {
			*created = append(*created, missing[i])
		}
	}
	return nil
}

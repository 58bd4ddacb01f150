package clientconf

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrDamagedRecord is returned when a backup record cannot be read back.
var ErrDamagedRecord = errors.New("damaged backup record")

// backups is the directory of the client files' backups: for each file
// mcphost connected, FILEID.orig (the file as it was before the first
// change; absent when there was none) and FILEID.json (the record).
type backups struct{ dir string }

// record is what Disconnect needs to restore a file.
type record struct {
	// Path is the client's file; Client and Scope whose it is.
	Path   string `json:"path"`
	Client string `json:"client"`
	Scope  Scope  `json:"scope"`
	// Name is the entry Connect wrote.
	Name string `json:"name"`
	// Existed: the file existed before the first change (its bytes are
	// in Orig).
	Existed bool `json:"existed"`
	// Orig is the backup's file name in the directory.
	Orig string `json:"orig,omitempty"`
	// Written is the digest of the file as Connect last wrote it.
	Written string `json:"written"`
	// CreatedDirs are the directories Connect created for the file,
	// outermost first.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

// digest identifies a file's content ("" when it does not exist).
func digest(data []byte, exists bool) string {
	if !exists {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func fileID(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:8])
}

func (b *backups) recordPath(path string) string {
	return filepath.Join(b.dir, fileID(path)+".json")
}

// load returns path's record (nil when there is none).
func (b *backups) load(path string) (*record, error) {
	data, err := os.ReadFile(b.recordPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the backup of %s: %w", path, err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil || r.Path != path {
		return nil, fmt.Errorf("%w %s of %s: remove it", ErrDamagedRecord, b.recordPath(path), path)
	}
	return &r, nil
}

// original returns the bytes rec's file had.
func (b *backups) original(rec *record) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(b.dir, rec.Orig))
	if err != nil {
		return nil, fmt.Errorf("reading the backup of %s: %w", rec.Path, err)
	}
	return data, nil
}

// save keeps path's content data as its backup.
func (b *backups) save(c Client, scope Scope, path, name string, data []byte, existed bool) (*record, error) {
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the backup directory: %w", err)
	}
	rec := &record{Path: path, Client: c.ID, Scope: scope, Name: name, Existed: existed, Written: digest(data, existed)}
	if existed {
		rec.Orig = fileID(path) + "." + filepath.Base(path) + ".orig"
		if err := os.WriteFile(filepath.Join(b.dir, rec.Orig), data, 0o600); err != nil {
			return nil, fmt.Errorf("keeping a backup of %s: %w", path, err)
		}
	}
	return rec, b.update(rec)
}

// update writes rec.
func (b *backups) update(rec *record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(b.recordPath(rec.Path), append(data, '\n'), nil); err != nil {
		return fmt.Errorf("recording the backup of %s: %w", rec.Path, err)
	}
	return nil
}

// drop removes rec and its backup; a backup that cannot be removed is a
// warning (the file itself is restored).
func (b *backups) drop(rec *record) (warning string, err error) {
	if rec.Orig != "" {
		if err := os.Remove(filepath.Join(b.dir, rec.Orig)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			warning = fmt.Sprintf("the backup of %s could not be removed: %v", rec.Path, err)
		}
	}
	if err := os.Remove(b.recordPath(rec.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return warning, fmt.Errorf("removing the backup record of %s: %w", rec.Path, err)
	}
	return warning, nil
}

package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// secretStore stores the literal secrets of server entries read from
// another client's configuration (`import`, `server add-json`) in the
// secrets directory, so that the block reads them with secret("NAME") and
// the file never holds them. A secret already stored is never replaced
// (another block may read it): the new one gets a name of its own.
type secretStore struct {
	dir    string // the secrets directory
	path   string // the file the blocks go to
	dryRun bool   // name the secrets, store nothing
	// stored are the secrets written, by server.
	stored map[string][]string
}

// newSecretStore returns the store for blocks written to t, or nil when t
// cannot read stored secrets (a project file is shared: the entries'
// secrets must come from environment variables there).
func (a *app) newSecretStore(t target, dryRun bool) (*secretStore, error) {
	if t.scope == config.ScopeProject {
		return nil, nil
	}
	dir := config.SecretsDir(a.lookupEnv, a.workDir)
	if dir == "" {
		return nil, errors.New("cannot find the configuration directory for secrets: set HOME or MCPHOST_CONFIG_DIR")
	}
	return &secretStore{dir: dir, path: t.path, dryRun: dryRun, stored: map[string][]string{}}, nil
}

// forServer returns the EntryOptions.StoreSecret of server (nil for a nil
// store: literal secrets are refused).
func (s *secretStore) forServer(server string) func(where, value string) (config.SecretRef, error) {
	if s == nil {
		return nil
	}
	return func(where, value string) (config.SecretRef, error) {
		base := importSecretName(server, s.path, where)
		name := base
		for i := 2; ; i++ {
			if _, err := os.Lstat(filepath.Join(s.dir, name)); errors.Is(err, fs.ErrNotExist) && !s.taken(name) {
				break
			}
			if i > 100 {
				return config.SecretRef{}, fmt.Errorf("%s: too many secrets of that name", base)
			}
			name = fmt.Sprintf("%s-%d", base, i)
		}
		if !s.dryRun {
			if err := config.WriteSecret(s.dir, name, value); err != nil {
				return config.SecretRef{}, err
			}
		}
		s.stored[server] = append(s.stored[server], name)
		return config.SecretRef{Stored: name}, nil
	}
}

// taken reports whether name was given to a secret already (in a dry run,
// nothing is written to tell).
func (s *secretStore) taken(name string) bool {
	for _, names := range s.stored {
		for _, n := range names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// drop deletes the secrets stored for server (its block was not written).
func (s *secretStore) drop(server string) {
	if s == nil {
		return
	}
	if !s.dryRun {
		for _, n := range s.stored[server] {
			config.DeleteSecret(s.dir, n)
		}
	}
	delete(s.stored, server)
}

// undo deletes every secret stored (nothing was written).
func (s *secretStore) undo() {
	if s == nil {
		return
	}
	for server := range s.stored {
		s.drop(server)
	}
}

// names are the secrets stored for server.
func (s *secretStore) names(server string) []string {
	if s == nil {
		return nil
	}
	return s.stored[server]
}

// count is the number of secrets stored for server.
func (s *secretStore) count(server string) int { return len(s.names(server)) }

// importSecretName names the secret of server's member where ("env.TOKEN")
// in file path: unique per file, server and member, recognisable in the
// secrets directory.
func importSecretName(server, path, where string) string {
	sum := sha256.Sum256([]byte(path))
	slot := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, where)
	name := server + "." + hex.EncodeToString(sum[:4]) + "." + strings.ReplaceAll(slot, "..", "._")
	if len(name) > 120 {
		name = name[:120]
	}
	return strings.TrimRight(name, ".")
}

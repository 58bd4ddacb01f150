// Package auth is mcphost's OAuth 2.1 client for remote servers: the
// built-in handler (authorization code with PKCE, client credentials,
// JWT-bearer), the token store, the SSRF guard for OAuth fetches, the
// one-shot loopback callback and safe URL opening. The flows build on the
// go-sdk's auth, auth/extauth and oauthex packages.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/host/config"
)

// ErrNotFound is returned by Store.Load when there is no record for a key.
var ErrNotFound = errors.New("no stored credentials")

// Record is what is stored for one server: the token (with its refresh
// token, which is replaced whenever the authorization server rotates it) and
// the facts needed to use and revoke it.
type Record struct {
	Server string `json:"server"`
	// Grant is the OAuth grant that produced the token.
	Grant  string   `json:"grant,omitempty"`
	Issuer string   `json:"issuer,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the RFC 8707 resource the token was issued for; it is
	// sent again on every refresh.
	Resource string `json:"resource,omitempty"`
	// The client (pre-registered or dynamically registered) and the
	// endpoints that refresh and revoke its tokens.
	ClientID      string           `json:"client_id,omitempty"`
	ClientSecret  string           `json:"client_secret,omitempty"`
	AuthStyle     oauth2.AuthStyle `json:"auth_style,omitempty"`
	TokenURL      string           `json:"token_url,omitempty"`
	RevocationURL string           `json:"revocation_url,omitempty"`
	Token         *oauth2.Token    `json:"token"`
	// PluginState is an auth plugin's saved state (TokenResponse.SavedState).
	PluginState []byte `json:"plugin_state,omitempty"`
	// DPoPKey is the PEM private key a DPoP-bound token is tied to.
	DPoPKey   string    `json:"dpop_key,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Store keeps credential records by key. Implementations must be safe for
// concurrent use; a file store, an OS keychain or a Vault backend fit it.
type Store interface {
	Load(key string) (*Record, error)
	Save(key string, r *Record) error
	Delete(key string) error
}

// ErrLeaseHeld is returned by Leaser.Lease while another process holds the
// lease.
var ErrLeaseHeld = errors.New("the lease is held by another holder")

// Leaser is implemented by a Store that several processes share (the
// gateway's replicas): before refreshing a token, a process takes the lease
// of its key, so that one process refreshes a credential and the others
// wait for its result and load it, rather than each spending the refresh
// token (which an authorization server that rotates refresh tokens would
// take as a replay, revoking the family).
type Leaser interface {
	// Lease takes the lease on key for ttl, or fails with ErrLeaseHeld
	// while another holder has it. release gives it back if it is still
	// this holder's; calling it more than once is harmless.
	Lease(ctx context.Context, key string, ttl time.Duration) (release func(), err error)
}

// Key is the store key of a server: its name and config hash, so that an
// edited server does not reuse another configuration's tokens.
func Key(server, configHash string) string { return server + ":" + configHash }

// FileStore keeps one file per key in Dir: the directory is 0700, each file
// 0600, created exclusively and renamed into place, so a reader (or a crash)
// sees the old record or the new one, never a partial one.
type FileStore struct {
	// Dir is the directory. REQUIRED.
	Dir string
}

var _ Store = (*FileStore)(nil)

func (s *FileStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Load reads a record. A file readable by group or others is refused.
func (s *FileStore) Load(key string) (*Record, error) {
	p := s.path(key)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if config.OpenTo(st, 0o077) {
		return nil, fmt.Errorf("token file %s is accessible to others (mode %v); remove it and log in again", p, st.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("token file %s is damaged; log in again", p) // never quote its content
	}
	return &r, nil
}

// Save writes a record atomically.
func (s *FileStore) Save(key string, r *Record) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(s.Dir, 0o700); err != nil { // whatever the umask was
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// A 0600 temporary file created exclusively, synced, then renamed over.
	return config.WriteFileAtomic(s.path(key), b, 0o600)
}

// Delete removes a record; a missing one is not an error.
func (s *FileStore) Delete(key string) error {
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

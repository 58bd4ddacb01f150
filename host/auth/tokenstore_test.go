package auth

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func record(access, refresh string) *Record {
	return &Record{Server: "s", Issuer: "https://as.example", ClientID: "c", Scopes: []string{"read"},
		Token: &oauth2.Token{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer", Expiry: time.Unix(2_000_000_000, 0)}, UpdatedAt: time.Unix(1, 0)}
}

// TestFileStoreModesUnderUmask000: whatever the umask, the directory is 0700
// and the file 0600. (Not parallel: the umask is process-wide.)
func TestFileStoreModesUnderUmask000(t *testing.T) {
	defer setUmask(0)() // the store must not depend on the umask
	dir := filepath.Join(t.TempDir(), "tokens")
	s := &FileStore{Dir: dir}
	if err := s.Save(Key("s", "h1"), record("at", "rt")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", st.Mode().Perm())
	}
	fst, _ := os.Stat(s.path(Key("s", "h1")))
	if fst.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fst.Mode().Perm())
	}
}

func TestFileStoreRoundTripRotationAndDelete(t *testing.T) {
	t.Parallel()
	s := &FileStore{Dir: t.TempDir()}
	k := Key("s", "h1")
	if _, err := s.Load(k); err != ErrNotFound {
		t.Fatalf("empty store: %v", err)
	}
	if err := s.Save(k, record("at1", "rt1")); err != nil {
		t.Fatal(err)
	}
	// The authorization server rotated the refresh token: the new one is kept.
	if err := s.Save(k, record("at2", "rt2")); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(k)
	if err != nil || r.Token.AccessToken != "at2" || r.Token.RefreshToken != "rt2" || r.Issuer != "https://as.example" {
		t.Fatalf("loaded %+v %v", r, err)
	}
	// Another config hash of the same server does not see these tokens.
	if _, err := s.Load(Key("s", "h2")); err != ErrNotFound {
		t.Errorf("another configuration's key: %v", err)
	}
	if err := s.Delete(k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(k); err != ErrNotFound {
		t.Errorf("after delete: %v", err)
	}
	if err := s.Delete(k); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
}

// TestFileStoreCrashLeavesOldOrNew: a write interrupted before its rename
// leaves a temporary file that Load ignores, and the old record intact; many
// concurrent writers leave one whole record.
func TestFileStoreCrashLeavesOldOrNew(t *testing.T) {
	t.Parallel()
	s := &FileStore{Dir: t.TempDir()}
	k := Key("s", "h")
	if err := s.Save(k, record("old", "rt")); err != nil {
		t.Fatal(err)
	}
	// A crash mid-write: a partial temporary file is all it leaves.
	if err := os.WriteFile(filepath.Join(s.Dir, ".tmp-crashed"), []byte(`{"server":"s","tok`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Load(k); err != nil || r.Token.AccessToken != "old" {
		t.Fatalf("after a crash: %+v %v", r, err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Save(k, record(strings.Repeat("x", 1000+i), "rt"))
		}()
	}
	wg.Wait()
	r, err := s.Load(k)
	if err != nil || !strings.HasPrefix(r.Token.AccessToken, "xxxx") {
		t.Fatalf("after concurrent writes: %v", err)
	}
}

func TestFileStoreRefusesOpenPermissionsAndNeverQuotesTokens(t *testing.T) {
	t.Parallel()
	s := &FileStore{Dir: t.TempDir()}
	k := Key("s", "h")
	if err := s.Save(k, record("secret-access", "secret-refresh")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.path(k), 0o644)
	if _, err := s.Load(k); err == nil || !strings.Contains(err.Error(), "accessible to others") {
		t.Errorf("a world-readable token file was used: %v", err)
	}
	os.Chmod(s.path(k), 0o600)
	os.WriteFile(s.path(k), []byte(`{"token":{"access_token":"secret-access"`), 0o600)
	_, err := s.Load(k)
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("damaged file: %v", err)
	}
}

//go:build unix

package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// unixLike: Unix permissions, links and FIFOs are tested.
const unixLike = true

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// otherOwner is a FileInfo of a 0600 regular file owned by uid.
type otherOwner struct{ uid uint32 }

func (o otherOwner) Name() string       { return "tok" }
func (o otherOwner) Size() int64        { return 1 }
func (o otherOwner) Mode() fs.FileMode  { return 0o600 }
func (o otherOwner) ModTime() time.Time { return time.Time{} }
func (o otherOwner) IsDir() bool        { return false }
func (o otherOwner) Sys() any           { return &syscall.Stat_t{Uid: o.uid} }

// TestSecretFileOwner: a secret file of another user than the current one
// or root is refused (an *OwnerError). Making a file another user's needs
// root: as root the file is chowned for real, otherwise its FileInfo says
// so (the check reads only what Stat returns).
func TestSecretFileOwner(t *testing.T) {
	const other = 4242
	if os.Getuid() == other {
		t.Fatalf("the test's other uid %d is the current user's", other)
	}
	var err error
	if os.Getuid() == 0 {
		dir := filepath.Join(t.TempDir(), "secrets")
		os.Mkdir(dir, 0o700)
		p := filepath.Join(dir, "tok")
		mustWrite(t, p, "canary-secret-4411", 0o600)
		if err := os.Chown(p, other, other); err != nil {
			t.Fatal(err)
		}
		_, err = readSecret(dir, "tok")
		if err == nil || strings.Contains(err.Error(), "canary") {
			t.Fatalf("readSecret of another user's file: %v", err)
		}
	} else {
		err = checkSecretFile("/secrets/tok", otherOwner{uid: other})
	}
	var oe *OwnerError
	if !errors.Is(err, ErrSecretFile) || !errors.As(err, &oe) || oe.UID != other {
		t.Errorf("another user's secret file: %v; want ErrSecretFile and an *OwnerError of uid %d", err, other)
	}
	// Root's and the user's own are trusted.
	for _, uid := range []uint32{0, uint32(os.Getuid())} {
		if err := checkSecretFile("/secrets/tok", otherOwner{uid: uid}); err != nil {
			t.Errorf("a file of uid %d: %v", uid, err)
		}
	}
}

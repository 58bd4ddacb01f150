package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSecretRefusesUntrustedFiles: a secret is read only from a regular
// file of the user's (or root's) that others cannot access, in such a
// directory; the refusal names the file and never holds the value (nor the
// value of what a link points to).
func TestReadSecretRefusesUntrustedFiles(t *testing.T) {
	const value = "canary-secret-4411"
	tests := []struct {
		name    string
		unix    bool                           // needs Unix permissions, links or FIFOs
		prepare func(t *testing.T, dir string) // makes dir/tok
		want    string                         // in the error; "" for the value
	}{
		{"a regular 0600 file", false, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "tok"), value, 0o600)
		}, ""},
		{"a symbolic link to the user's own 0600 file", true, func(t *testing.T, dir string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			mustWrite(t, target, value, 0o600)
			if err := os.Symlink(target, filepath.Join(dir, "tok")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"a symbolic link to a directory", true, func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(dir, "tok")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"a directory", false, func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "tok"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"a FIFO (the read must not block)", true, func(t *testing.T, dir string) {
			mkfifo(t, filepath.Join(dir, "tok"))
		}, "not a regular file"},
		{"group-readable", true, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "tok"), value, 0o640)
		}, "accessible to others"},
		{"in a directory others can list", true, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "tok"), value, 0o600)
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "the secrets directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unix && !unixLike {
				t.Skip("Unix permissions, links and FIFOs") // (Windows: ACLs; openNoFollow refuses reparse points)
			}
			dir := filepath.Join(t.TempDir(), "secrets")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tt.prepare(t, dir)
			got, err := readSecret(dir, "tok")
			if tt.want == "" {
				if err != nil || got != value {
					t.Fatalf("readSecret = %q, %v; want the value", got, err)
				}
				return
			}
			if !errors.Is(err, ErrSecretFile) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("readSecret = %q, %v; want ErrSecretFile saying %q", got, err, tt.want)
			}
			if strings.Contains(err.Error(), value) || got != "" {
				t.Errorf("the refusal holds the value: %q, %v", got, err)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("the refusal does not name the file: %v", err)
			}
		})
	}
}

func mustWrite(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // (whatever the umask)
		t.Fatal(err)
	}
}

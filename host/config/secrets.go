package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Secrets are values kept out of configuration files: each is a file of its
// own in the user's secrets directory (<config dir>/secrets, 0700; each file
// 0600), read by the secret("NAME") function of the user, local and cli
// scopes. `mcphost server add --client-secret` stores a client secret so.
// A project file cannot call secret(): a repository never reads the user's
// secrets.

// SecretsDirName is the secrets directory's name in the config directory.
const SecretsDirName = "secrets"

// maxSecretSize bounds a secret file.
const maxSecretSize = 64 << 10

var secretNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// ErrSecretName is returned for a secret name outside [A-Za-z0-9_.-] (at
// most 128 characters, starting with a letter or digit).
var ErrSecretName = errors.New("invalid secret name")

// SecretsDir returns the secrets directory for the configuration found
// through lookup ("" when there is no config directory).
func SecretsDir(lookup LookupEnvFunc, workDir string) string {
	return joinIf(Locate(lookup, workDir).ConfigDir, SecretsDirName)
}

// CheckSecretName reports whether name can name a secret.
func CheckSecretName(name string) error {
	if !secretNameRE.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%w %q: use letters, digits, '_', '.' and '-' (at most 128, starting with a letter or digit)", ErrSecretName, name)
	}
	return nil
}

// WriteSecret stores value as the secret name in dir (created 0700), in a
// file only its owner can read, replaced atomically.
func WriteSecret(dir, name, value string) error {
	if err := CheckSecretName(name); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the secrets directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("securing the secrets directory: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, name), []byte(value), 0o600); err != nil {
		return fmt.Errorf("storing secret %s: %w", name, err)
	}
	return nil
}

// DeleteSecret removes the secret name from dir; a missing secret is not an
// error.
func DeleteSecret(dir, name string) error {
	if err := CheckSecretName(name); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting secret %s: %w", name, err)
	}
	return nil
}

// ErrSecretFile is returned (wrapped) for a secret file, or secrets
// directory, that mcphost does not trust: a symbolic link (or, on Windows,
// another reparse point), not a regular file, owned by another user than
// the current one or root (an *OwnerError too), or accessible to group or
// others, as ssh refuses such keys. The error names the file, never its
// content.
var ErrSecretFile = errors.New("untrusted secret file")

// errSymlink is openNoFollow's error for a symbolic link.
var errSymlink = errors.New("a symbolic link")

// readSecret reads the secret name from dir. A file that is a symbolic
// link, not regular, owned by another user, or that others can read or
// write, is refused (ErrSecretFile), as is such a directory; the error
// never holds the value.
func readSecret(dir, name string) (string, error) {
	if dir == "" {
		return "", errors.New("there is no config directory (set HOME or MCPHOST_CONFIG_DIR)")
	}
	if err := CheckSecretName(name); err != nil {
		return "", err
	}
	if st, err := os.Stat(dir); err == nil {
		if uid, ok := fileOwner(st); ok && uid != os.Getuid() && uid != 0 {
			return "", fmt.Errorf("%w: the secrets directory: %w", ErrSecretFile, &OwnerError{Path: dir, UID: uid})
		}
		if OpenTo(st, 0o077) {
			return "", fmt.Errorf("%w: the secrets directory %s is accessible to others (mode %v); run chmod 700 on it", ErrSecretFile, dir, st.Mode().Perm())
		}
	}
	p := filepath.Join(dir, name)
	// Not following a link: the file read is the one whose owner and mode
	// are checked, not what a link points to (and a FIFO does not block).
	f, err := openNoFollow(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("secret %s is not stored (looked for %s)", name, p)
	}
	if errors.Is(err, errSymlink) {
		return "", fmt.Errorf("%w: secret file %s is a symbolic link; secrets are read from regular files only: replace the link with the file itself (mode 0600)", ErrSecretFile, p)
	}
	if err != nil {
		return "", fmt.Errorf("reading secret %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading secret %s: %w", name, err)
	}
	if err := checkSecretFile(p, st); err != nil {
		return "", err
	}
	if st.Size() > maxSecretSize {
		return "", fmt.Errorf("secret file %s is %d bytes; the limit is %d", p, st.Size(), maxSecretSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretSize+1))
	if err != nil {
		return "", fmt.Errorf("reading secret %s: %w", name, err)
	}
	if len(b) > maxSecretSize {
		return "", fmt.Errorf("secret file %s is over %d bytes", p, maxSecretSize)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// checkSecretFile returns an ErrSecretFile error unless st, the opened
// secret file p, is a regular file of the current user's or root's that
// group and others cannot access.
func checkSecretFile(p string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: secret file %s is not a regular file", ErrSecretFile, p)
	}
	if uid, ok := fileOwner(st); ok && uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("%w: %w", ErrSecretFile, &OwnerError{Path: p, UID: uid})
	}
	if OpenTo(st, 0o077) {
		return fmt.Errorf("%w: secret file %s is accessible to others (mode %v); run chmod 600 on it", ErrSecretFile, p, st.Mode().Perm())
	}
	return nil
}

// secretFunc is secret("NAME"): the secret NAME from dir.
func secretFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "Returns a secret stored in the user's secrets directory.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := readSecret(dir, args[0].AsString())
			if err != nil {
				return cty.NilVal, function.NewArgError(0, err)
			}
			return cty.StringVal(v), nil
		},
	})
}

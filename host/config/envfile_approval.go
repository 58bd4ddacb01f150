package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// envFileHashSep separates, in the approval hash of a server with an
// env_file, the hash of its block from the digest of the file's content:
// "sha256:BLOCK env_file=sha256:CONTENT". Keeping the two apart lets the
// loader say that it is the file that changed. A server without env_file
// has no such part, so approvals given before it existed stay valid.
const envFileHashSep = " env_file="

// envFileAbsent is the digest of an env_file that did not exist (or could
// not be read) when the configuration was loaded: approved so, the server
// needs approval again once the file appears.
const envFileAbsent = "absent"

// ErrEnvFileChanged is the error of a connect of a server that needs
// approval (a project server, a registry server) whose env_file's content
// is no longer the one loaded, and approved, with the configuration.
var ErrEnvFileChanged = errors.New("env_file changed since the configuration was loaded and approved")

// DigestEnvFile is the digest of an env_file's content as the approval hash
// holds it.
func DigestEnvFile(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// digestEnvFileAt is DigestEnvFile of the file at path, or envFileAbsent
// when it cannot be read.
func digestEnvFileAt(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return envFileAbsent
	}
	return DigestEnvFile(b)
}

// EnvFileDigest is the digest of the server's env_file content when the
// configuration was loaded, for a server that needs approval (its approval
// covers that content); "" otherwise. A connect compares the file's
// content with it and refuses a changed file (ErrEnvFileChanged).
func (s *Server) EnvFileDigest() string { return s.envFileDigest }

// ApprovalNote says why a server that was approved before is not now, when
// the reason is not its block: its env_file's content changed (or was not
// covered by the earlier approval). "" otherwise.
func (s *Server) ApprovalNote() string { return s.approvalNote }

// noteApproval sets s.approvalNote when s is not approved by the recorded
// approval only because of its env_file's content.
func (s *Server) noteApproval(recorded string) {
	if recorded == "" || s.envFileDigest == "" {
		return
	}
	cur := s.ApprovalHash()
	curBlock, _, _ := strings.Cut(cur, envFileHashSep)
	recBlock, recFile, hadFile := strings.Cut(recorded, envFileHashSep)
	switch {
	case curBlock != recBlock:
	case !hadFile:
		s.approvalNote = fmt.Sprintf("its approval does not cover the content of its env_file %s (given before env_file's content was covered)", s.EnvFile)
	case recFile != s.envFileDigest:
		s.approvalNote = fmt.Sprintf("its env file %s changed since it was approved", s.EnvFile)
	}
}

// checkApprovedEnvFile checks the env_file of a server that needs approval
// (s as written) and records its content's digest: the approval covers the
// file's content, so a path only known at connect (env()) cannot be
// approved, and a project file's env_file stays inside the project (root,
// the project file's own directory, symlinks resolved): a repository does
// not get to hand another directory's secrets to its server.
func checkApprovedEnvFile(s *Server, a *hcl.Attribute, project bool, root string) hcl.Diagnostics {
	if s.EnvFile == "" || a == nil {
		return nil
	}
	if FromEnv(s.EnvFile) {
		return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "env_file from the environment",
			"Server %q needs approval, which covers its env_file's content: give env_file as a path, not env().", s.Name)}
	}
	if project && !insideDir(root, s.EnvFile) {
		return hcl.Diagnostics{errorf(a.Expr.Range().Ptr(), "env_file outside the project",
			"%s is outside the project %s (symlinks resolved): a project file's env_file must be a file of the project.", s.EnvFile, root)}
	}
	s.envFileDigest = digestEnvFileAt(s.EnvFile)
	return nil
}

// insideDir reports whether path is root or below it, both as written and
// with symlinks resolved (for a path that does not exist yet, its nearest
// existing parent is resolved).
func insideDir(root, path string) bool {
	within := func(root, p string) bool {
		rel, err := filepath.Rel(root, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
	}
	root, path = filepath.Clean(root), filepath.Clean(path)
	if !within(root, path) {
		return false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	return within(realRoot, resolveExisting(path))
}

// resolveExisting resolves the symlinks of path's longest existing prefix
// and joins the rest.
func resolveExisting(path string) string {
	rest := ""
	for p := path; ; {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return path
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// validApprovalHash reports whether h has the shape of an ApprovalHash:
// "sha256:<64 hex>", followed for a server with an env_file by
// envFileHashSep and the digest of its content (or envFileAbsent).
func validApprovalHash(h string) bool {
	isSHA := func(v string) bool {
		hexPart, ok := strings.CutPrefix(v, "sha256:")
		if !ok || len(hexPart) != 64 {
			return false
		}
		_, err := hex.DecodeString(hexPart)
		return err == nil
	}
	block, file, hasFile := strings.Cut(h, envFileHashSep)
	return isSHA(block) && (!hasFile || file == envFileAbsent || isSHA(file))
}

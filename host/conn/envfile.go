package conn

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-envparse"

	"github.com/mcphost/mcphost/host/config"
)

// EnvFileError is the error of a connect whose server's env_file could not
// be read or parsed. It names the file and the line, never a value.
type EnvFileError struct {
	Server string
	// Path is the env file's absolute path.
	Path string
	// Line is the line that did not parse (0: the file could not be read).
	Line int
	// Err is what went wrong: the read's error, or the reason a line did
	// not parse (never the line's text).
	Err error
}

func (e *EnvFileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("server %s: env_file %s:%d: %v", e.Server, e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("server %s: env_file %s: %v", e.Server, e.Path, e.Err)
}

func (e *EnvFileError) Unwrap() error { return e.Err }

// errEnvFileSyntax is the reason given for a line that does not parse when
// the parser's own reason could quote the line (and so a value).
var errEnvFileSyntax = errors.New("not NAME=value (or a comment)")

// errEnvFileName is the reason given for a name that cannot name an
// environment variable.
var errEnvFileName = errors.New("invalid variable name (letters, digits and '_', not starting with a digit)")

// readEnvFile reads a server's env_file: a dotenv file of NAME=value lines
// (comments, blank lines, "export NAME=value", single- and double-quoted
// values; no ${…} interpolation, so nothing of the host leaks through it),
// parsed by hashicorp/go-envparse. It is read at each connect, so an edit
// takes effect at the next one.
//
// For a server that needs approval, digest is the digest of the content
// loaded with the configuration (config.Server.EnvFileDigest), which the
// approval covers: a file whose content differs is refused
// (config.ErrEnvFileChanged) until the server is approved again.
func readEnvFile(server, path, digest string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &EnvFileError{Server: server, Path: path, Err: err}
	}
	if digest != "" && config.DigestEnvFile(b) != digest {
		return nil, &EnvFileError{Server: server, Path: path,
			Err: fmt.Errorf("%w: run `mcphost config approve %s` to review and approve it again", config.ErrEnvFileChanged, server)}
	}
	return parseEnvFile(server, path, bytes.NewReader(b))
}

// parseEnvFile parses a dotenv file's content; its errors never quote it.
func parseEnvFile(server, path string, r io.Reader) (map[string]string, error) {
	vars, err := envparse.Parse(r)
	if err != nil {
		var pe *envparse.ParseError
		if !errors.As(err, &pe) {
			return nil, &EnvFileError{Server: server, Path: path, Err: errEnvFileSyntax}
		}
		reason := errEnvFileSyntax
		for _, known := range []error{envparse.ErrMissingSeparator, envparse.ErrEmptyKey, envparse.ErrUnmatchedDouble,
			envparse.ErrUnmatchedSingle, envparse.ErrIncompleteEscape, envparse.ErrIncompleteHex, envparse.ErrIncompleteSur,
			envparse.ErrMultibyteEscape, bufio.ErrTooLong} {
			if errors.Is(pe.Err, known) {
				reason = known
			}
		}
		return nil, &EnvFileError{Server: server, Path: path, Line: pe.Line, Err: reason}
	}
	for k := range vars {
		if !config.ValidEnvName(k) {
			return nil, &EnvFileError{Server: server, Path: path, Err: fmt.Errorf("%w: %q", errEnvFileName, k)}
		}
	}
	return vars, nil
}

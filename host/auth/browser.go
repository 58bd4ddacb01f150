package auth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
)

// ErrUnsafeURL is returned by CheckAuthorizationURL for a URL that must not be opened.
var ErrUnsafeURL = errors.New("refusing to open an unsafe URL")

// CheckAuthorizationURL accepts a URL to open in the user's browser only if it
// is https (or http to a loopback host), absolute, and made only of URI
// characters: no javascript:, data:, file: or vbscript:, no control or space
// characters, no leading '-' (which an opener could take for an option). The
// CVE-2025-6514 class of bugs is an authorization server handing the client
// such a URL.
func CheckAuthorizationURL(raw string) error {
	if raw == "" || raw[0] == '-' {
		return fmt.Errorf("%w: %q", ErrUnsafeURL, raw)
	}
	for _, r := range raw {
		if !uriChar(r) {
			return fmt.Errorf("%w: it contains %q", ErrUnsafeURL, r)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: %q is not an absolute web URL", ErrUnsafeURL, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return fmt.Errorf("%w: plain http is only allowed to loopback, not %s", ErrUnsafeURL, host)
	}
	return fmt.Errorf("%w: scheme %q (only https, or http to loopback)", ErrUnsafeURL, u.Scheme)
}

// uriChar reports whether r may appear in a URI (RFC 3986 unreserved,
// reserved and '%').
func uriChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-._~:/?#[]@!$&'()*+,;=%", r)
}

// Opener opens a URL for the user; tests record instead of opening.
type Opener func(url string) error

// OpenBrowser checks the URL, then runs the platform's opener with the URL
// as one argument: never through a shell.
func OpenBrowser(raw string) error {
	if err := CheckAuthorizationURL(raw); err != nil {
		return err
	}
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	return exec.Command(name, raw).Start()
}

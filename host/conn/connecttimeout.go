package conn

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnectTimeoutError is the error of a connect that did not finish within
// the server's connect_timeout. For a stdio server it names the host's
// environment variables the server was not given (names only, never
// values): a server that cannot reach the network through a proxy, or
// does not trust a TLS-inspecting proxy's certificate, often hangs until
// the timeout instead of failing.
type ConnectTimeoutError struct {
	// Server is the server's name, Timeout its connect timeout.
	Server  string
	Timeout time.Duration
	// File is the configuration file that declares the server, if known.
	File string
	// Stdio says the server is a stdio server; NotPassed and Others are
	// only set for one.
	Stdio bool
	// NotPassed are the names of the host's variables that the server did
	// not get and that may matter (proxies, certificates, NODE_*), sorted;
	// Others counts the rest.
	NotPassed []string
	Others    int
}

// Error is "connect timed out after X" alone: the error (Status.Error) can
// reach a gateway's clients, who are not necessarily the host's user, so
// the names of the host's variables stay in Hint, which the host's own
// displays (servers, the serve banner, the log) show.
func (e *ConnectTimeoutError) Error() string {
	return fmt.Sprintf("connect timed out after %s", e.Timeout)
}

// Hint says which of the host's variables a stdio server did not get, and
// how to pass them: add the names to the server's inherit_env in its file
// (the server exists: `server add` would refuse it), or, for a new server,
// `server add --inherit-env`. "" when there are none (or the server is
// remote).
func (e *ConnectTimeoutError) Hint() string {
	if !e.Stdio || len(e.NotPassed) == 0 && e.Others == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("the server gets only some of the host's environment variables; not passed: ")
	switch {
	case len(e.NotPassed) > 0 && e.Others > 0:
		fmt.Fprintf(&b, "%s and %d others", strings.Join(e.NotPassed, ", "), e.Others)
	case len(e.NotPassed) > 0:
		b.WriteString(strings.Join(e.NotPassed, ", "))
	default:
		fmt.Fprintf(&b, "%d variables", e.Others)
	}
	names := e.NotPassed
	if len(names) == 0 {
		names = []string{"NAME"}
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	where := "its server block"
	if e.File != "" {
		where = "its server block in " + e.File
	}
	fmt.Fprintf(&b, "\nif the server needs them (a proxy, a CA certificate), add the names to the inherit_env of %s: server %q { … inherit_env = [%s] }",
		where, e.Server, strings.Join(quoted, ", "))
	fmt.Fprintf(&b, "\n(for a new server: mcphost server add NEW-NAME --inherit-env %s -- COMMAND …)", strings.Join(names, ","))
	return b.String()
}

// timeoutError is the error of a connect through t that timed out.
func (c *Conn) timeoutError(t mcp.Transport, timeout time.Duration) *ConnectTimeoutError {
	e := &ConnectTimeoutError{Server: c.cfg.Name, Timeout: timeout, File: c.cfg.Origin.File}
	if st, ok := t.(*stdioTransport); ok {
		e.Stdio = true
		if environ := c.m.opts.Environ; environ != nil {
			e.NotPassed, e.Others = notPassed(runtime.GOOS, environ(), st.env)
		}
	}
	if h := e.Hint(); h != "" {
		c.log.Warn("connect timed out", "timeout", timeout, "hint", h) // (the host's own log: names, never values)
	}
	return e
}

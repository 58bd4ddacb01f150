package conn

import (
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/redact"
)

// A stdio server may print lines that are not JSON-RPC on its stdout (a
// banner, a warning): they are skipped and logged, as other MCP clients skip
// them, where a line that looks like JSON-RPC is held to the strict rules.
const (
	// noiseLogged is how many skipped lines of a connection are logged;
	// later ones are only counted, and the count logged when it ends.
	noiseLogged = 10
	// noiseShown is how much of a skipped line is logged, in bytes.
	noiseShown = 200
)

// looksJSONRPC reports whether line (trimmed, not empty) looks like a
// JSON-RPC message, or a batch of them: an object, or an array that is empty
// or starts with an object. "[INFO] starting" does not.
func looksJSONRPC(line []byte) bool {
	switch line[0] {
	case '{':
		return true
	case '[':
		for _, b := range line[1:] {
			switch b {
			case ' ', '\t', '\r', '\n':
				continue
			case '{', ']':
				return true
			}
			return false
		}
		return true // "[" alone: strict, and an error
	}
	return false
}

// noise logs the non-JSON lines of one connection's read loop (which alone
// uses it).
type noise struct {
	log     hclog.Logger
	skipped int
}

// skip logs line, one the read loop skips, if it is among the first
// noiseLogged; with the next it says that later lines are only counted.
func (n *noise) skip(line []byte) {
	n.skipped++
	switch {
	case n.log == nil || n.skipped > noiseLogged+1:
	case n.skipped == noiseLogged+1:
		n.log.Warn("the server printed more lines that are not JSON-RPC on its stdout: skipping them, counted but not logged", "logged", noiseLogged)
	default:
		n.log.Warn("skipping a line that is not JSON-RPC on the server's stdout", "line", shownLine(line))
	}
}

// end logs how many lines were skipped, if more than were logged.
func (n *noise) end() {
	if n.log != nil && n.skipped > noiseLogged {
		n.log.Warn("lines that are not JSON-RPC skipped on the server's stdout", "count", n.skipped)
	}
}

// shownLine is line as logged: scrubbed of secrets (in its first 4 KiB: a
// secret that starts before the cut is masked whole) and cut to noiseShown
// bytes at a character boundary. (The logger escapes control characters and
// invalid UTF-8: hclog quotes such values, or JSON-encodes them.)
func shownLine(line []byte) string {
	s := string(line[:min(len(line), 4<<10)])
	s = redact.String(s)
	cut := len(s) > noiseShown
	if cut {
		n := noiseShown
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	if cut {
		s += "…"
	}
	return s
}

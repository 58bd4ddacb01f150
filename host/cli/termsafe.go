package cli

import (
	"fmt"
	"strings"
	"unicode"
)

// maxTermSafe bounds, in runes, a server-supplied string termSafe prints.
const maxTermSafe = 200

// termSafe returns s, a string from a server or a configuration (a tool's
// title or description, a policy's reason), fit to print on a terminal:
// control characters (C0, DEL, C1: escape sequences that would move the
// cursor, clear the screen or rewrite what the prompt shows) and Unicode
// format characters (bidirectional overrides, zero-width characters that
// hide text) are shown as \uXXXX escapes, and it is cut at maxTermSafe
// runes. Printable text is unchanged.
func termSafe(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxTermSafe {
			b.WriteString("…")
			break
		}
		n++
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

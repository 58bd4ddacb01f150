package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Name limits.
const (
	// Prefix starts every registry name of a tool or prompt.
	Prefix = "mcp__"
	// Separator separates the server from the tool in a registry name.
	Separator = "__"
	// MaxNameLen is the longest registry name; longer names are shortened
	// deterministically, keeping a hash of the full name.
	MaxNameLen = 64
	// MaxDescriptionLen caps tool descriptions and server instructions (in characters).
	MaxDescriptionLen = 2048
)

// Normalize maps a server-provided name to the characters [a-zA-Z0-9_-]:
// invisible characters are removed and every other character becomes '_'.
func Normalize(name string) string {
	name = Sanitize(name)
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == '\n' || r == '\r' || r == '\t':
			// dropped: whitespace controls never belong in a name
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolName returns the registry name mcp__SERVER__TOOL for a server's tool (or
// prompt), normalized, and shortened to MaxNameLen by keeping the start and
// appending 8 hex digits of a hash of the full, original pair. It is
// deterministic: the same pair always gives the same name.
func ToolName(server, tool string) string {
	full := Prefix + Normalize(server) + Separator + Normalize(tool)
	if len(full) <= MaxNameLen {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return full[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
}

// ParseName splits a registry name into its server and tool parts. The server
// part ends at the first separator after the prefix (server names never contain
// "__" nor end with '_'). ok is false if name is not a registry name.
func ParseName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return "", "", false
	}
	i := strings.Index(rest, Separator)
	if i <= 0 || i+len(Separator) >= len(rest) {
		return "", "", false
	}
	return rest[:i], rest[i+len(Separator):], true
}

// Sanitize removes characters that can hide or reorder text: control
// characters other than newline and tab, format characters (bidi controls,
// zero-width characters, tag characters), private-use and unassigned code
// points, and invalid UTF-8. The result is NFKC-normalized.
func Sanitize(s string) string {
	clean := func(s string) string {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "")
		}
		return strings.Map(func(r rune) rune {
			switch {
			case r == '\n' || r == '\t':
				return r
			case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Co, r),
				r == utf8.RuneError, !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z):
				return -1
			}
			return r
		}, s)
	}
	// NFKC can compose characters into new ones; clean before and after.
	return clean(norm.NFKC.String(clean(s)))
}

// Cap sanitizes s and truncates it to max characters, marking the cut.
func Cap(s string, max int) string {
	s = Sanitize(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

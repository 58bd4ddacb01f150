package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/sdk/jsonredact"
)

// An ask question shows a call's arguments within these bounds.
const (
	ArgumentsMaxBytes = 1 << 10
	ArgumentsMaxLines = 20
)

// secretArgName matches argument names whose values are secrets beyond
// SecretName's (a private key, a passphrase).
var secretArgName = regexp.MustCompile(`(?i)(private[_-]?key|passphrase)`)

// Arguments renders a call's arguments (JSON) for a permission question
// (the terminal's ask prompt, the gateway's question to its client):
// indented, the values of secret-named keys masked and token-looking text
// scrubbed (String), bounded to ArgumentsMaxLines lines and
// ArgumentsMaxBytes bytes (cut with "…"). Every line is indented by indent.
// JSON encoding escapes control characters, so a server's argument
// cannot write terminal escapes.
func Arguments(raw json.RawMessage, indent string) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return indent + "(no arguments)"
	}
	v, err := jsonredact.Decode(raw)
	if err != nil {
		return indent + "(arguments that are not valid JSON)"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, "  ")
	if err := enc.Encode(maskArgs(v)); err != nil {
		return indent + "(arguments that cannot be shown)"
	}
	return indent + boundText(strings.TrimRight(b.String(), "\n"), ArgumentsMaxLines, ArgumentsMaxBytes)
}

// maskArgs masks the values of secret-named keys and scrubs strings.
func maskArgs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if SecretName(k) || secretArgName.MatchString(k) {
				out[k] = Mask
				continue
			}
			out[k] = maskArgs(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = maskArgs(e)
		}
		return out
	case string:
		return String(v)
	}
	return v
}

// boundText cuts s after maxLines lines or maxBytes bytes (at a character
// boundary), whichever comes first, marking the cut with "…".
func boundText(s string, maxLines, maxBytes int) string {
	cut := false
	if lines := strings.SplitAfterN(s, "\n", maxLines+1); len(lines) > maxLines {
		s, cut = strings.TrimSuffix(strings.Join(lines[:maxLines], ""), "\n"), true
	}
	if len(s) > maxBytes {
		n := maxBytes
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, cut = s[:n], true
	}
	if cut {
		return s + "…"
	}
	return s
}

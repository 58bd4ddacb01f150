package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/sdk/jsonredact"
)

// The ask prompt shows a call's arguments within these bounds.
const (
	askArgsMaxBytes = 1 << 10
	askArgsMaxLines = 20
)

// askArguments renders a call's arguments (JSON) for the ask prompt:
// indented, the values of secret-named keys masked and token-looking text
// scrubbed (host/redact), bounded to askArgsMaxLines lines and
// askArgsMaxBytes bytes (cut with "…"). Every line is indented by indent.
// JSON encoding escapes control characters, so a server's argument
// cannot write terminal escapes.
func askArguments(raw json.RawMessage, indent string) string {
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
	return indent + boundText(strings.TrimRight(b.String(), "\n"), askArgsMaxLines, askArgsMaxBytes)
}

// maskArgs masks the values of secret-named keys and scrubs strings.
func maskArgs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if redact.SecretName(k) {
				out[k] = redact.Mask
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
		return redact.String(v)
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

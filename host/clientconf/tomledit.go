package clientconf

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in TOML, [mcp_servers.NAME] tables. No Go TOML
// library writes a document back with its bytes kept (comments, order,
// spacing: BurntSushi/toml and go-toml re-encode from values), so an edit
// is textual: the gateway's table is appended at the end of the file, or
// replaced or removed where it is; the rest of the file is not touched.
// Reading (what a table holds) goes through BurntSushi/toml.

const tomlServersKey = "mcp_servers"

var tomlHeader = regexp.MustCompile(`^\s*\[\s*([^\[\]]*?)\s*\]\s*(#.*)?$`)

// tomlKeyPath splits a table header's dotted key (bare, "basic" or
// 'literal' parts).
func tomlKeyPath(s string) []string {
	var parts []string
	for s = strings.TrimSpace(s); s != ""; {
		var p string
		switch s[0] {
		case '"':
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil
			}
			var v string
			if _, err := toml.Decode("k = "+s[:end+1], &struct{ K *string }{&v}); err != nil {
				return nil
			}
			p, s = v, s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil
			}
			p, s = s[1:end+1], s[end+2:]
		default:
			end := strings.IndexAny(s, ". \t")
			if end < 0 {
				end = len(s)
			}
			p, s = s[:end], s[end:]
		}
		parts = append(parts, p)
		s = strings.TrimLeft(s, " \t")
		if s != "" {
			if s[0] != '.' {
				return nil
			}
			s = strings.TrimLeft(s[1:], " \t")
		}
	}
	return parts
}

// lines splits data into lines, each with its line ending.
func lines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

// tomlTable finds server name's table: its byte range (the header to its
// last key line, subtables included) and line; ok false when there is no
// [mcp_servers.NAME] header.
func tomlTable(data []byte, name string) (start, end, line int, ok bool) {
	off := 0
	in := false
	for i, l := range lines(data) {
		if m := tomlHeader.FindStringSubmatch(strings.TrimRight(l, "\r\n")); m != nil && !strings.HasPrefix(strings.TrimSpace(l), "[[") {
			p := tomlKeyPath(m[1])
			ours := len(p) >= 2 && p[0] == tomlServersKey && p[1] == name
			switch {
			case ours && !in && !ok:
				in, ok, start, line, end = true, true, off, i+1, off+len(l)
			case ours && in:
				end = off + len(l)
			case in:
				in = false
			}
		} else if in {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				end = off + len(l)
			}
		}
		off += len(l)
	}
	return start, end, line, ok
}

// tomlDecode decodes a Codex file.
func tomlDecode(data []byte) (map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	return doc, nil
}

// tomlGet returns server name of a Codex file, decoded.
func tomlGet(data []byte, name string) (map[string]any, int, error) {
	doc, err := tomlDecode(data)
	if err != nil {
		return nil, 0, err
	}
	servers, _ := doc[tomlServersKey].(map[string]any)
	s, ok := servers[name]
	if !ok {
		return nil, 0, nil
	}
	m, ok := s.(map[string]any)
	if !ok {
		return nil, 0, fmt.Errorf("%w: %s.%s is not a table", ErrShape, tomlServersKey, name)
	}
	_, _, line, _ := tomlTable(data, name)
	return m, line, nil
}

// tomlSet returns data with server name's table set to e: replaced where
// it is, else appended.
func tomlSet(data []byte, name string, e Entry) ([]byte, error) {
	doc, err := tomlDecode(data)
	if err != nil {
		return nil, err
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	table := tomlRender(name, e, nl)
	start, end, _, ok := tomlTable(data, name)
	if ok {
		return splice(data, start, end, table), nil
	}
	if servers, _ := doc[tomlServersKey].(map[string]any); servers != nil {
		if _, defined := servers[name]; defined {
			return nil, fmt.Errorf("%w: %s.%s is not written as a [%s.%s] table; edit it by hand", ErrShape, tomlServersKey, name, tomlServersKey, tomlBareOrQuoted(name))
		}
	}
	var sep string
	switch s := string(data); {
	case s == "" || strings.HasSuffix(s, nl+nl):
	case strings.HasSuffix(s, "\n"):
		sep = nl
	default:
		sep = nl + nl
	}
	return append(append(append([]byte{}, data...), sep...), table...), nil
}

// tomlRemove returns data without server name's table, and whether it was
// there.
func tomlRemove(data []byte, name string) ([]byte, bool, error) {
	if _, err := tomlDecode(data); err != nil {
		return nil, false, err
	}
	start, end, _, ok := tomlTable(data, name)
	if !ok {
		return data, false, nil
	}
	// The blank line before the table, which an append added.
	before := data[:start]
	switch {
	case bytes.HasSuffix(before, []byte("\r\n\r\n")):
		start -= 2
	case bytes.HasSuffix(before, []byte("\n\n")):
		start--
	}
	return splice(data, start, end, ""), true, nil
}

func tomlRender(name string, e Entry, nl string) string {
	var b strings.Builder
	b.WriteString("[" + tomlServersKey + "." + tomlBareOrQuoted(name) + "]" + nl)
	if e.Command != "" {
		b.WriteString("command = " + tomlQuote(e.Command) + nl)
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = tomlQuote(a)
		}
		b.WriteString("args = [" + strings.Join(parts, ", ") + "]" + nl)
		return b.String()
	}
	b.WriteString("url = " + tomlQuote(e.URL) + nl)
	if e.TokenEnv != "" {
		b.WriteString("bearer_token_env_var = " + tomlQuote(e.TokenEnv) + nl)
	}
	return b.String()
}

var tomlBare = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlBareOrQuoted(k string) string {
	if tomlBare.MatchString(k) {
		return k
	}
	return tomlQuote(k)
}

// tomlQuote is a TOML basic string: JSON's escapes are TOML's, but for
// DEL, which TOML wants escaped.
func tomlQuote(s string) string {
	return strings.ReplaceAll(quote(s), "\x7f", `\u007f`)
}

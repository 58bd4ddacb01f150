package clientconf

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex keeps its servers in TOML, [mcp_servers.NAME] tables. No Go TOML
// library writes a document back with its bytes kept (comments, order,
// spacing: go-toml re-encodes from values), so an edit splices text: the
// table is located with go-toml's tokenizer (its unstable.Parser gives each
// expression — table header, array-table header, key/value, multi-line
// strings and arrays included — with its bytes in the file), then appended
// at the end of the file, or replaced or removed where it is; the rest of
// the file is not touched. Every edit is checked by decoding the file
// before and after: everything but the gateway's table must be equal.

const tomlServersKey = "mcp_servers"

// tomlSpan is where server name's table is in a Codex file.
type tomlSpan struct {
	start, end int // the header's line to the end of the table's last line
	line       int // the header's line (1-based)
	found      bool
	// inlineServers: mcp_servers is an inline table (mcp_servers = {…}),
	// which TOML does not let a [mcp_servers.NAME] header extend.
	inlineServers bool
}

// lineStart is the offset of the line holding off.
func lineStart(data []byte, off int) int {
	return bytes.LastIndexByte(data[:off], '\n') + 1
}

// lineEnd is the offset after the line ending of the line holding off.
func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// tomlTable finds server name's table with go-toml's tokenizer. The table
// is its [mcp_servers.NAME] header, its keys and its subtables
// ([mcp_servers.NAME.env]); they must be contiguous, else ErrShape.
func tomlTable(data []byte, name string) (tomlSpan, error) {
	var sp tomlSpan
	var p unstable.Parser
	p.Reset(data)
	var table []string
	in, done := false, false
	for p.NextExpression() {
		e := p.Expression()
		var keys []string
		var first, last *unstable.Node
		for it := e.Key(); it.Next(); {
			if first == nil {
				first = it.Node()
			}
			last = it.Node()
			keys = append(keys, string(it.Node().Data))
		}
		if first == nil {
			continue
		}
		var ours bool
		var from, to int
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keys
			ours = len(keys) >= 2 && keys[0] == tomlServersKey && keys[1] == name
			from = lineStart(data, int(first.Raw.Offset))
			to = lineEnd(data, int(last.Raw.Offset+last.Raw.Length))
			if len(keys) == 1 && keys[0] == tomlServersKey && e.Kind == unstable.ArrayTable {
				return sp, fmt.Errorf("%w: %s is an array of tables", ErrShape, tomlServersKey)
			}
		case unstable.KeyValue:
			path := append(append([]string{}, table...), keys...)
			if len(path) == 1 && path[0] == tomlServersKey {
				if e.Value().Kind == unstable.InlineTable {
					sp.inlineServers = true
				}
			}
			ours = in && len(table) >= 2
			from = lineStart(data, int(first.Raw.Offset))
			to = lineEnd(data, int(e.Raw.Offset+e.Raw.Length))
		default:
			continue
		}
		switch {
		case ours && done:
			return sp, fmt.Errorf("%w: the [%s.%s] table is split in parts; edit it by hand", ErrShape, tomlServersKey, tomlBareOrQuoted(name))
		case ours && !in:
			in, sp.found, sp.start = true, true, from
			sp.line = p.Shape(first.Raw).Start.Line
			sp.end = to
		case ours:
			sp.end = to
		case in:
			in, done = false, true
		}
	}
	if err := p.Error(); err != nil {
		return sp, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	return sp, nil
}

// tomlDecode decodes a Codex file.
func tomlDecode(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
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
	sp, _ := tomlTable(data, name)
	return m, sp.line, nil
}

// tomlSet returns data with server name's table set to e: replaced where
// it is, else appended.
func tomlSet(data []byte, name string, e Entry) ([]byte, error) {
	doc, err := tomlDecode(data)
	if err != nil {
		return nil, err
	}
	sp, err := tomlTable(data, name)
	if err != nil {
		return nil, err
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	table := tomlRender(name, e, nl)
	var out []byte
	switch {
	case sp.found:
		out = splice(data, sp.start, sp.end, table)
	case sp.inlineServers:
		return nil, fmt.Errorf("%w: %s is an inline table ({…}), which a [%s.%s] table cannot extend; write it as [%s.NAME] tables", ErrShape, tomlServersKey, tomlServersKey, tomlBareOrQuoted(name), tomlServersKey)
	default:
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
		out = append(append(append([]byte{}, data...), sep...), table...)
	}
	want, err := tomlDecode([]byte(table))
	if err != nil {
		return nil, fmt.Errorf("%w: the entry does not decode: %w", ErrBadEntry, err)
	}
	if err := tomlCheck(doc, out, name, want[tomlServersKey].(map[string]any)[name]); err != nil {
		return nil, err
	}
	return out, nil
}

// tomlRemove returns data without server name's table, and whether it was
// there.
func tomlRemove(data []byte, name string) ([]byte, bool, error) {
	doc, err := tomlDecode(data)
	if err != nil {
		return nil, false, err
	}
	sp, err := tomlTable(data, name)
	if err != nil {
		return nil, false, err
	}
	if !sp.found {
		if servers, _ := doc[tomlServersKey].(map[string]any); servers != nil {
			if _, defined := servers[name]; defined {
				return nil, false, fmt.Errorf("%w: %s.%s is not written as a [%s.%s] table; edit it by hand", ErrShape, tomlServersKey, name, tomlServersKey, tomlBareOrQuoted(name))
			}
		}
		return data, false, nil
	}
	start := sp.start
	// The blank line before the table, which an append added.
	before := data[:start]
	switch {
	case bytes.HasSuffix(before, []byte("\r\n\r\n")):
		start -= 2
	case bytes.HasSuffix(before, []byte("\n\n")):
		start--
	}
	out := splice(data, start, sp.end, "")
	if err := tomlCheck(doc, out, name, nil); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// tomlCheck verifies an edit: out decodes, its server name is want (absent
// when nil), and everything else is as in before.
func tomlCheck(before map[string]any, out []byte, name string, want any) error {
	after, err := tomlDecode(out)
	if err != nil {
		return fmt.Errorf("%w: the edit would break the file (%w); edit it by hand", ErrShape, err)
	}
	got, ok := withoutServer(after, name)
	if !reflect.DeepEqual(got, want) || (want == nil && ok) {
		return fmt.Errorf("%w: the edit would not write the %s entry as planned; edit it by hand", ErrShape, name)
	}
	withoutServer(before, name)
	if !reflect.DeepEqual(before, after) {
		return fmt.Errorf("%w: the edit would change more than the %s entry; edit it by hand", ErrShape, name)
	}
	return nil
}

// withoutServer removes server name from a decoded file (and the servers
// member when it is left empty), returning it.
func withoutServer(doc map[string]any, name string) (any, bool) {
	servers, _ := doc[tomlServersKey].(map[string]any)
	if servers == nil {
		return nil, false
	}
	s, ok := servers[name]
	delete(servers, name)
	if len(servers) == 0 {
		delete(doc, tomlServersKey)
	}
	return s, ok
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
	} else {
		b.WriteString("url = " + tomlQuote(e.URL) + nl)
		if e.TokenEnv != "" {
			b.WriteString("bearer_token_env_var = " + tomlQuote(e.TokenEnv) + nl)
		}
	}
	if len(e.Env) > 0 {
		b.WriteString("env = {")
		for i, kv := range e.Env {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" " + tomlBareOrQuoted(kv[0]) + " = " + tomlQuote(kv[1]))
		}
		b.WriteString(" }" + nl)
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

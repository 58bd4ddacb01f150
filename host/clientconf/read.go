package clientconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/tailscale/hujson"
)

// Reading the servers of a client's configuration file (`mcphost import`).
// JSON files are read as JSONC (comments and trailing commas, as VS Code and
// Cursor allow) with github.com/tailscale/hujson, whose Standardize keeps
// every byte offset (so an entry's line is the line in the file); Codex's
// config.toml with github.com/pelletier/go-toml/v2, whose parser gives each
// table's position.

// The formats of server entries: what the keys of an entry mean.
const (
	// FormatMCPServers is the mcpServers object of Claude Code (.mcp.json,
	// ~/.claude.json), Claude Desktop and Cursor.
	FormatMCPServers = "mcpServers"
	// FormatVSCode is VS Code's servers object (.vscode/mcp.json, or mcp
	// in settings.json), with its inputs.
	FormatVSCode = "vscode"
	// FormatGemini is the mcpServers object of Gemini CLI's settings.json
	// (url is SSE, httpUrl streamable HTTP).
	FormatGemini = "gemini"
	// FormatCodex is the [mcp_servers.NAME] tables of Codex's config.toml.
	FormatCodex = "codex"
)

// ErrFormat is returned for a file that is not a client configuration
// mcphost can read (not JSON or TOML, or without a servers object).
var ErrFormat = errors.New("not a client configuration file")

// Servers returns the server entries of data, client c's configuration
// file, in the order of the file. For Claude Code's ~/.claude.json those
// are its user-scope servers (top-level mcpServers); ProjectServers reads
// its local scope.
func Servers(c Client, data []byte) ([]Server, error) {
	switch c.ID {
	case "codex":
		return codexServers(data)
	case "vscode":
		root, std, err := parseJSONC(data)
		if err != nil {
			return nil, err
		}
		return vscodeServers(root, std)
	case "gemini":
		return jsonServers(data, FormatGemini, "mcpServers")
	case "claude-code", "claude-desktop", "cursor":
		return jsonServers(data, FormatMCPServers, "mcpServers")
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownClient, c.ID)
}

// ProjectServers returns the servers Claude Code keeps in data (its
// ~/.claude.json) for the project directory dir: projects[dir].mcpServers,
// Claude Code's local scope (private to you, in that project).
func ProjectServers(data []byte, dir string) ([]Server, error) {
	root, std, err := parseJSONC(data)
	if err != nil {
		return nil, err
	}
	projects := jsonMember(root, "projects")
	if projects == nil {
		return nil, nil
	}
	obj, ok := projects.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: \"projects\" is not an object", ErrFormat)
	}
	for i := range obj.Members {
		m := &obj.Members[i]
		key, ok := literalString(m.Name)
		if !ok || !sameDir(key, dir) {
			continue
		}
		return entries(jsonMember(&m.Value, "mcpServers"), std, FormatMCPServers, "projects."+key+".mcpServers")
	}
	return nil, nil
}

// sameDir reports whether key, a directory as Claude Code writes it (with
// forward slashes on Windows too), is dir. Windows paths (with a drive
// letter) are compared whatever their slashes and case.
func sameDir(key, dir string) bool {
	norm := func(p string) string {
		p = strings.ReplaceAll(p, `\`, "/")
		if len(p) > 1 && strings.HasSuffix(p, "/") && !strings.HasSuffix(p, ":/") {
			p = strings.TrimRight(p, "/")
		}
		return p
	}
	k, d := norm(key), norm(dir)
	if len(k) > 1 && k[1] == ':' && len(d) > 1 && d[1] == ':' {
		return strings.EqualFold(k, d)
	}
	return k == d || filepath.Clean(filepath.FromSlash(key)) == filepath.Clean(dir)
}

// ServersOfFile returns the server entries of a client configuration file
// named name (the name decides only between TOML and JSON): Codex's
// config.toml (.toml), or JSON with an mcpServers object (Claude Code,
// Claude Desktop, Cursor, Gemini CLI), a servers object (VS Code's
// mcp.json) or mcp.servers (VS Code's settings.json). A Gemini file is
// recognised by its directory (.gemini), an httpUrl, or its settings.
func ServersOfFile(name string, data []byte) ([]Server, error) {
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		return codexServers(data)
	}
	root, std, err := parseJSONC(data)
	if err != nil {
		return nil, err
	}
	if servers := jsonMember(root, "mcpServers"); servers != nil {
		format := FormatMCPServers
		if isGemini(name, root, servers) {
			format = FormatGemini
		}
		return entries(servers, std, format, "mcpServers")
	}
	if jsonMember(root, "servers") != nil || jsonMember(root, "mcp") != nil || jsonMember(root, "mcp.servers") != nil {
		return vscodeServers(root, std)
	}
	return nil, fmt.Errorf("%w: no \"mcpServers\", \"servers\" or \"mcp.servers\" object (nor a .toml file with [mcp_servers])", ErrFormat)
}

// geminiSettings are top-level keys only Gemini CLI's settings.json has.
var geminiSettings = []string{"general", "ui", "model", "context", "tools", "security", "selectedAuthType", "theme", "mcp", "advanced", "experimental"}

// isGemini reports whether a file with an mcpServers object is Gemini
// CLI's settings.json.
func isGemini(name string, root, servers *hujson.Value) bool {
	for _, dir := range strings.FieldsFunc(filepath.ToSlash(name), func(r rune) bool { return r == '/' }) {
		if dir == ".gemini" {
			return true
		}
	}
	if obj, ok := servers.Value.(*hujson.Object); ok {
		for _, m := range obj.Members {
			if jsonMember(&m.Value, "httpUrl") != nil {
				return true
			}
		}
	}
	for _, k := range geminiSettings {
		if jsonMember(root, k) != nil {
			return true
		}
	}
	return false
}

// vscodeServers reads VS Code's servers: mcp.json's "servers", or the
// "mcp" object (or "mcp.servers" key) of its settings.json.
func vscodeServers(root *hujson.Value, std []byte) ([]Server, error) {
	if s := jsonMember(root, "servers"); s != nil {
		return entries(s, std, FormatVSCode, "servers")
	}
	if s := jsonMember(root, "mcp.servers"); s != nil {
		return entries(s, std, FormatVSCode, "mcp.servers")
	}
	if mcp := jsonMember(root, "mcp"); mcp != nil {
		return entries(jsonMember(mcp, "servers"), std, FormatVSCode, "mcp.servers")
	}
	return nil, nil
}

// jsonServers returns the entries of the object key of a JSON file.
func jsonServers(data []byte, format, key string) ([]Server, error) {
	root, std, err := parseJSONC(data)
	if err != nil {
		return nil, err
	}
	return entries(jsonMember(root, key), std, format, key)
}

// parseJSONC parses data as JSON with comments and trailing commas. std is
// data as standard JSON, byte for byte at the same offsets.
func parseJSONC(data []byte) (root *hujson.Value, std []byte, err error) {
	if rest, ok := bytes.CutPrefix(data, bom); ok {
		// A byte order mark (Notepad) becomes spaces: offsets stay.
		data = append([]byte("   "), rest...)
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	v.Standardize()
	std = v.Pack()
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, nil, fmt.Errorf("%w: not a JSON object", ErrFormat)
	}
	return &v, std, nil
}

// jsonMember returns the value of the member key of object v (the last one,
// as encoding/json reads a repeated member), or nil.
func jsonMember(v *hujson.Value, key string) *hujson.Value {
	if v == nil {
		return nil
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	var found *hujson.Value
	for i := range obj.Members {
		if k, ok := literalString(obj.Members[i].Name); ok && k == key {
			found = &obj.Members[i].Value
		}
	}
	return found
}

// literalString returns the string a member name holds.
func literalString(v hujson.Value) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", false
	}
	return s, true
}

// entries returns the members of servers (an object of server objects) as
// Servers; where names the object in errors.
func entries(servers *hujson.Value, std []byte, format, where string) ([]Server, error) {
	if servers == nil {
		return nil, nil
	}
	obj, ok := servers.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not an object", ErrFormat, where)
	}
	var out []Server
	for i := range obj.Members {
		m := &obj.Members[i]
		name, ok := literalString(m.Name)
		if !ok {
			continue
		}
		s := Server{Name: name, Format: format, Line: lineAt(std, m.Name.StartOffset)}
		raw := std[m.Value.StartOffset:m.Value.EndOffset]
		if err := json.Unmarshal(raw, &s.Fields); err != nil || s.Fields == nil {
			s.Fields = nil
			s.Invalid = "the entry is not an object"
		}
		// A repeated name: the last one counts, as in encoding/json.
		out = slices.DeleteFunc(out, func(o Server) bool { return o.Name == name })
		out = append(out, s)
	}
	return out, nil
}

// lineAt is the 1-based line of offset in data.
func lineAt(data []byte, offset int) int {
	if offset < 0 || offset > len(data) {
		return 0
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// codexServers reads Codex's config.toml: the tables [mcp_servers.NAME]
// (or mcp_servers.NAME = { … }).
func codexServers(data []byte) ([]Server, error) {
	var doc struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	lines, order := codexLines(data)
	var out []Server
	names := make([]string, 0, len(doc.MCPServers))
	for name := range doc.MCPServers {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := order[a] - order[b]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		s := Server{Name: name, Format: FormatCodex, Line: lines[name]}
		if f, ok := doc.MCPServers[name].(map[string]any); ok {
			s.Fields = f
		} else {
			s.Invalid = "the entry is not a table"
		}
		out = append(out, s)
	}
	return out, nil
}

// codexLines returns the line where each server of a config.toml is first
// named, and the order in which they are.
func codexLines(data []byte) (lines, order map[string]int) {
	lines, order = map[string]int{}, map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var path []string
		var first *unstable.Node
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = table[:0]
			for it := e.Key(); it.Next(); {
				if first == nil {
					first = it.Node()
				}
				table = append(table, string(it.Node().Data))
			}
			path = table
		case unstable.KeyValue:
			path = slices.Clone(table)
			for it := e.Key(); it.Next(); {
				if first == nil {
					first = it.Node()
				}
				path = append(path, string(it.Node().Data))
			}
		default:
			continue
		}
		if len(path) < 2 || path[0] != "mcp_servers" {
			continue
		}
		if _, seen := lines[path[1]]; !seen && first != nil {
			lines[path[1]] = p.Shape(first.Raw).Start.Line
			order[path[1]] = len(order)
		}
	}
	return lines, order
}

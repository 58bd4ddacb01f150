package clientconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// JSON and JSONC files are edited as text: hujson parses the file (JSON
// with comments and trailing commas, as VS Code's and Gemini's files may
// be) and gives the byte offsets of its members, and an edit splices the
// entry's bytes in or out at those offsets. Every other byte stays as it
// was; hujson's own Patch/Format would re-indent the file.

// ErrSyntax is returned for a client file that cannot be parsed.
var ErrSyntax = errors.New("cannot parse the file")

// ErrShape is returned for a client file whose servers cannot be edited
// (its top level is not an object, its servers member not an object).
var ErrShape = errors.New("unexpected file shape")

// serversKey is the member of client c's JSON file holding its servers.
func serversKey(c Client) string {
	if c.ID == "vscode" {
		return "servers"
	}
	return "mcpServers"
}

// jsonDoc is a parsed JSON/JSONC file.
type jsonDoc struct {
	data []byte
	root hujson.Value
	nl   string // the file's line ending
}

func parseJSON(data []byte) (*jsonDoc, error) {
	d := &jsonDoc{data: data, nl: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		d.nl = "\r\n"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return d, nil
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("%w: the top level is not an object", ErrShape)
	}
	d.root = v
	return d, nil
}

func (d *jsonDoc) empty() bool { return d.root.Value == nil }

// member returns the index of member name in o, or -1.
func member(o *hujson.Object, name string) int {
	for i, m := range o.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// servers returns the servers object of the file (nil when absent).
func (d *jsonDoc) servers(key string) (*hujson.Value, error) {
	if d.empty() {
		return nil, nil
	}
	root := d.root.Value.(*hujson.Object)
	i := member(root, key)
	if i < 0 {
		return nil, nil
	}
	v := &root.Members[i].Value
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("%w: %q is not an object", ErrShape, key)
	}
	return v, nil
}

// jsonGet returns server name of the file's servers object key, decoded.
func jsonGet(data []byte, key, name string) (map[string]any, int, error) {
	d, err := parseJSON(bytes.TrimPrefix(data, bom))
	if err != nil {
		return nil, 0, err
	}
	sv, err := d.servers(key)
	if sv == nil || err != nil {
		return nil, 0, err
	}
	obj := sv.Value.(*hujson.Object)
	i := member(obj, name)
	if i < 0 {
		return nil, 0, nil
	}
	v := obj.Members[i].Value.Clone()
	v.BeforeExtra, v.AfterExtra = nil, nil
	v.Standardize()
	var out map[string]any
	if err := json.Unmarshal(v.Pack(), &out); err != nil {
		return nil, 0, fmt.Errorf("%w: server %q: %w", ErrShape, name, err)
	}
	line := 1 + bytes.Count(data[:obj.Members[i].Name.StartOffset], []byte("\n"))
	return out, line, nil
}

// bom is the UTF-8 byte order mark some editors (Notepad) put at the start
// of a file: it is kept, and the rest edited.
var bom = []byte("\xef\xbb\xbf")

// jsonSet returns data with server name of the servers object key set to
// val: replaced in place when it exists, else appended after the last
// server (the servers object is added to the top level when absent). The
// edit is checked: the file decodes to what it did but for the entry.
func jsonSet(data []byte, key, name string, val object) ([]byte, error) {
	body, hasBOM := bytes.CutPrefix(data, bom)
	out, err := jsonSetText(body, key, name, val)
	if err != nil {
		return nil, err
	}
	var want any
	if err := json.Unmarshal([]byte(renderCompact(val)), &want); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEntry, err)
	}
	if err := jsonCheck(body, out, key, name, want); err != nil {
		return nil, err
	}
	if hasBOM {
		out = append(append([]byte{}, bom...), out...)
	}
	return out, nil
}

// jsonRemove returns data without server name of the servers object key,
// and whether it was there; the edit is checked as jsonSet's.
func jsonRemove(data []byte, key, name string) ([]byte, bool, error) {
	body, hasBOM := bytes.CutPrefix(data, bom)
	out, found, err := jsonRemoveText(body, key, name)
	if err != nil || !found {
		return data, found, err
	}
	if err := jsonCheck(body, out, key, name, nil); err != nil {
		return nil, false, err
	}
	if hasBOM {
		out = append(append([]byte{}, bom...), out...)
	}
	return out, true, nil
}

// jsonDecode decodes a JSON/JSONC file (an empty one is an empty object).
func jsonDecode(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	v, err := hujson.Parse(bytes.Clone(data)) // Standardize writes into the bytes
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	v.Standardize()
	if err := json.Unmarshal(v.Pack(), &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrShape, err)
	}
	return doc, nil
}

// jsonCheck verifies an edit: out decodes, its server name is want (absent
// when nil), and everything else is as in before.
func jsonCheck(before, out []byte, key, name string, want any) error {
	b, err := jsonDecode(before)
	if err != nil {
		return err
	}
	a, err := jsonDecode(out)
	if err != nil {
		return fmt.Errorf("%w: the edit would break the file (%w); edit it by hand", ErrShape, err)
	}
	got, ok := withoutMember(a, key, name)
	if !reflect.DeepEqual(got, want) || (want == nil && ok) {
		return fmt.Errorf("%w: the edit would not write the %s entry as planned; edit it by hand", ErrShape, name)
	}
	withoutMember(b, key, name)
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("%w: the edit would change more than the %s entry; edit it by hand", ErrShape, name)
	}
	return nil
}

// withoutMember removes server name from the servers object key of a
// decoded file (and the servers object when it is left empty), returning it.
func withoutMember(doc map[string]any, key, name string) (any, bool) {
	servers, _ := doc[key].(map[string]any)
	if servers == nil {
		return nil, false
	}
	s, ok := servers[name]
	delete(servers, name)
	if len(servers) == 0 {
		delete(doc, key)
	}
	return s, ok
}

func jsonSetText(data []byte, key, name string, val object) ([]byte, error) {
	d, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	if d.empty() {
		nl := d.nl
		out := "{" + nl + "  " + quote(key) + ": {" + nl + "    " + quote(name) + ": " + render(val, "    ", "  ", nl) + nl + "  }" + nl + "}" + nl
		return []byte(out), nil
	}
	sv, err := d.servers(key)
	if err != nil {
		return nil, err
	}
	if sv == nil {
		return d.insert(&d.root, key, object{{name, val}}), nil
	}
	obj := sv.Value.(*hujson.Object)
	if i := member(obj, name); i >= 0 {
		m := obj.Members[i]
		indent, ok := lineIndent(data, m.Name.StartOffset)
		text := renderCompact(val)
		if ok {
			text = render(val, indent, d.unit(sv, indent), d.nl)
		}
		return splice(data, m.Value.StartOffset, m.Value.EndOffset, text), nil
	}
	return d.insert(sv, name, val), nil
}

func jsonRemoveText(data []byte, key, name string) ([]byte, bool, error) {
	d, err := parseJSON(data)
	if err != nil {
		return nil, false, err
	}
	sv, err := d.servers(key)
	if sv == nil || err != nil {
		return data, false, err
	}
	obj := sv.Value.(*hujson.Object)
	i := member(obj, name)
	if i < 0 {
		return data, false, nil
	}
	if len(obj.Members) == 1 && !hasComments(sv) {
		// The servers object would be left empty: it goes too (Connect
		// adds it to a file without one).
		root := d.root.Value.(*hujson.Object)
		return removeMember(data, &d.root, member(root, key)), true, nil
	}
	return removeMember(data, sv, i), true, nil
}

// removeMember returns data without member i of object ov.
func removeMember(data []byte, ov *hujson.Value, i int) []byte {
	obj := ov.Value.(*hujson.Object)
	switch {
	case len(obj.Members) == 1:
		// The braces' whole inside: the object becomes {}.
		return splice(data, ov.StartOffset+1, ov.EndOffset-1, "")
	case i == 0:
		// The member's lines up to the comma and the end of its line: the
		// next member's comments stay.
		m := obj.Members[0]
		start, end := m.Name.StartOffset, m.Value.EndOffset+len(m.Value.AfterExtra)+1
		for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
			end++
		}
		if _, ok := lineIndent(data, start); ok && end < len(data) && (data[end] == '\n' || data[end] == '\r') {
			start = bytes.LastIndexByte(data[:start], '\n') + 1
			end += bytes.IndexByte(data[end:], '\n') + 1
		}
		return splice(data, start, end, "")
	}
	// From the end of the previous value: its comma now ends this one's
	// (the inverse of insert).
	return splice(data, obj.Members[i-1].Value.EndOffset, obj.Members[i].Value.EndOffset, "")
}

// hasComments reports whether value v has comments (an Extra holds only
// whitespace and comments).
func hasComments(v *hujson.Value) bool {
	for x := range v.All() {
		var extras [][]byte
		extras = append(extras, x.BeforeExtra, x.AfterExtra)
		switch c := x.Value.(type) {
		case *hujson.Object:
			extras = append(extras, c.AfterExtra)
		case *hujson.Array:
			extras = append(extras, c.AfterExtra)
		}
		for _, e := range extras {
			if bytes.IndexByte(e, '/') >= 0 {
				return true
			}
		}
	}
	return false
}

// insert adds member name: val at the end of object ov.
func (d *jsonDoc) insert(ov *hujson.Value, name string, val any) []byte {
	data := d.data
	obj := ov.Value.(*hujson.Object)
	parent := leadingWS(data, ov.StartOffset)
	if n := len(obj.Members); n > 0 {
		last := obj.Members[n-1]
		indent, ok := lineIndent(data, last.Name.StartOffset)
		if !ok {
			return splice(data, last.Value.EndOffset, last.Value.EndOffset, ", "+quote(name)+": "+renderCompact(val))
		}
		text := "," + d.nl + indent + quote(name) + ": " + render(val, indent, d.unit(ov, indent), d.nl)
		return splice(data, last.Value.EndOffset, last.Value.EndOffset, text)
	}
	unit := d.fileUnit()
	indent := parent + unit
	text := d.nl + indent + quote(name) + ": " + render(val, indent, unit, d.nl)
	inside := data[ov.StartOffset+1 : ov.EndOffset-1]
	if len(bytes.TrimSpace(inside)) == 0 {
		return splice(data, ov.StartOffset+1, ov.EndOffset-1, text+d.nl+parent)
	}
	// Comments inside: they stay after the new member.
	return splice(data, ov.StartOffset+1, ov.StartOffset+1, text)
}

// unit is the indentation step of object ov, whose members are indented
// by indent.
func (d *jsonDoc) unit(ov *hujson.Value, indent string) string {
	parent := leadingWS(d.data, ov.StartOffset)
	if len(indent) > len(parent) && strings.HasPrefix(indent, parent) {
		return indent[len(parent):]
	}
	return d.fileUnit()
}

// fileUnit is the indentation of the top level's members ("  " when they
// have none).
func (d *jsonDoc) fileUnit() string {
	if root, ok := d.root.Value.(*hujson.Object); ok && len(root.Members) > 0 {
		if ind, ok := lineIndent(d.data, root.Members[0].Name.StartOffset); ok && ind != "" {
			return ind
		}
	}
	return "  "
}

// lineIndent returns the whitespace before offset off on its line, when
// only whitespace precedes it there.
func lineIndent(data []byte, off int) (string, bool) {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	ws := data[start:off]
	if len(bytes.Trim(ws, " \t")) != 0 {
		return "", false
	}
	return string(ws), true
}

// leadingWS returns the leading whitespace of the line holding offset off.
func leadingWS(data []byte, off int) string {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < off && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

func splice(data []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(text))
	out = append(out, data[:from]...)
	out = append(out, text...)
	return append(out, data[to:]...)
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// render writes v (string, []string, object) as indented JSON: members
// one a line at indent+unit, the closing bracket at indent.
func render(v any, indent, unit, nl string) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []string:
		if len(v) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[")
		for i, s := range v {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(nl + indent + unit + quote(s))
		}
		b.WriteString(nl + indent + "]")
		return b.String()
	case object:
		if len(v) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{")
		for i, f := range v {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(nl + indent + unit + quote(f.key) + ": " + render(f.val, indent+unit, unit, nl))
		}
		b.WriteString(nl + indent + "}")
		return b.String()
	}
	panic(fmt.Sprintf("clientconf: cannot render %T", v))
}

// renderCompact writes v on one line.
func renderCompact(v any) string {
	switch v := v.(type) {
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = quote(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case object:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = quote(f.key) + ": " + renderCompact(f.val)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return render(v, "", "", "")
}

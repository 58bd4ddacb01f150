package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on cleaning one schema. Schemas come from servers, which are not
// trusted to keep them small; a schema past a bound is refused (the tool
// is not exposed) rather than served uncleaned.
const (
	// MaxSchemaDepth is the deepest nesting of objects and arrays in a
	// tool's input or output schema.
	MaxSchemaDepth = 64
	// MaxSchemaNodes is the most values (objects, arrays, strings,
	// numbers, …; an object's keys included) in one schema.
	MaxSchemaNodes = 200_000
)

// ErrSchema is the class of a schema the registry refuses to serve (see
// CleanSchema).
var ErrSchema = errors.New("unusable schema")

// CleanSchema returns a tool schema with its descriptive text — the
// string values of the annotation keywords description, title and
// $comment (descriptiveKeywords), at any depth — sanitized as Sanitize
// does (control, format, bidi, zero-width, tag and private-use characters
// removed, NFKC). The schema itself is not modified: parts that change
// are copied.
//
// Every other string is data — enum, const, default and examples values
// (and all strings below them), pattern, format, any keyword's value — and
// is never altered: "µg" stays "µg", a pattern's control characters stay.
// A data string holding a hidden character (valueHidden: a format
// character — zero-width, bidi control, tag character —, a private-use or
// unassigned code point, U+FFFD) is refused with an error matching
// ErrSchema, as a key is: serving it would pass the hidden characters on,
// and cleaning it would make the model send a value the server does not
// know. A zero-width joiner between two emoji (a family "👨‍👩‍👧", a
// flag "🏳️‍🌈") is part of the value's visible text and allowed.
//
// An object key that cleaning would change (a property named with
// invisible characters, "pa\u200bth") is refused with an error matching
// ErrSchema: renaming it would make the tool's callers send a name the
// server does not know, and keeping it would serve the hidden characters.
// So is a schema nested deeper than MaxSchemaDepth or larger than
// MaxSchemaNodes. A schema that is not plain JSON values (maps, slices) is
// converted through its JSON encoding first.
func CleanSchema(schema any) (any, error) {
	if schema == nil {
		return nil, nil
	}
	switch schema.(type) {
	case map[string]any, []any, string, float64, bool, json.Number:
	default:
		b, err := json.Marshal(schema)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSchema, err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSchema, err)
		}
		schema = v
	}
	c := schemaCleaner{}
	out, _, err := c.clean(schema, 0, false)
	return out, err
}

// descriptiveKeywords are the schema keywords whose string value is text
// for a reader, not data a call sends or is checked against: JSON
// Schema's annotations of that kind.
var descriptiveKeywords = map[string]bool{"description": true, "title": true, "$comment": true}

// dataKeywords are the schema keywords whose value, whatever its shape, is
// data: a string below them is never descriptive, whatever its key.
var dataKeywords = map[string]bool{"enum": true, "const": true, "default": true, "examples": true}

// schemaCleaner cleans one schema. path is the keys and indexes leading to
// the value being cleaned, for errors.
type schemaCleaner struct {
	nodes int
	path  []string
}

// clean returns v cleaned, and whether it changed. data says v is below a
// data keyword (dataKeywords).
func (c *schemaCleaner) clean(v any, depth int, data bool) (any, bool, error) {
	c.nodes++
	if c.nodes > MaxSchemaNodes {
		return nil, false, fmt.Errorf("%w: more than %d values", ErrSchema, MaxSchemaNodes)
	}
	switch v := v.(type) {
	case string:
		if n := len(c.path); !data && n > 0 && descriptiveKeywords[c.path[n-1]] {
			s := Sanitize(v)
			return s, s != v, nil
		}
		if i := valueHidden(v); i >= 0 {
			r, _ := utf8.DecodeRuneInString(v[i:])
			if rs := []rune(v); len(rs) > maxQuoted {
				v = string(rs[:maxQuoted]) + "…"
			}
			return nil, false, fmt.Errorf("%w: the value %q at %s holds a hidden character (%U)", ErrSchema, v, c.pointer(), r)
		}
		return v, false, nil
	case map[string]any:
		if depth >= MaxSchemaDepth {
			return nil, false, fmt.Errorf("%w: nested deeper than %d at %s", ErrSchema, MaxSchemaDepth, c.pointer())
		}
		var out map[string]any
		for k, e := range v {
			c.nodes++
			if ck := Sanitize(k); ck != k {
				return nil, false, fmt.Errorf("%w: the key %q at %s holds hidden or non-canonical characters (it would read %q)", ErrSchema, k, c.pointer(), ck)
			}
			c.path = append(c.path, k)
			ce, changed, err := c.clean(e, depth+1, data || dataKeywords[k])
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = make(map[string]any, len(v))
				for k2, e2 := range v {
					out[k2] = e2
				}
			}
			if out != nil {
				out[k] = ce
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	case []any:
		if depth >= MaxSchemaDepth {
			return nil, false, fmt.Errorf("%w: nested deeper than %d at %s", ErrSchema, MaxSchemaDepth, c.pointer())
		}
		var out []any
		for i, e := range v {
			c.path = append(c.path, strconv.Itoa(i))
			ce, changed, err := c.clean(e, depth+1, data)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			if changed && out == nil {
				out = append([]any(nil), v...)
			}
			if out != nil {
				out[i] = ce
			}
		}
		if out == nil {
			return v, false, nil
		}
		return out, true, nil
	}
	return v, false, nil
}

// maxQuoted caps, in characters, a value an error quotes.
const maxQuoted = 64

// valueHidden returns the byte offset in a data string s of its first
// hidden character, or -1. Hidden are the characters Sanitize removes
// except the controls (U+0000–U+001F, U+007F–U+009F): JSON carries those
// escaped, visibly ("\u0000"), and a pattern's character class may well
// name them. A zero-width joiner (U+200D) is not hidden between two emoji
// (isEmoji; the first may carry a variation selector or a skin tone);
// anywhere else it is.
func valueHidden(s string) int {
	var prev rune = -1
	for i, r := range s { // (invalid UTF-8 reads as utf8.RuneError)
		switch {
		case r == zwj:
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(zwj):])
			if !isEmoji(prev) || !isEmoji(next) {
				return i
			}
		case unicode.Is(unicode.Cc, r):
		case unicode.In(r, unicode.Cf, unicode.Co), r == utf8.RuneError,
			!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z):
			return i
		}
		if r != variationSelector16 && !isSkinTone(r) {
			prev = r
		}
	}
	return -1
}

const (
	zwj                 = '\u200d'
	variationSelector16 = '\ufe0f'
)

// isEmoji approximates Unicode's Extended_Pictographic, which the unicode
// package lacks: the other symbols (So), where the emoji are.
func isEmoji(r rune) bool { return r > 0x7f && r != utf8.RuneError && unicode.Is(unicode.So, r) }

// isSkinTone reports whether r is an emoji skin-tone modifier.
func isSkinTone(r rune) bool { return r >= 0x1f3fb && r <= 0x1f3ff }

// pointer is the JSON pointer of the value being cleaned, quoted for an
// error message.
func (c *schemaCleaner) pointer() string {
	if len(c.path) == 0 {
		return "the top"
	}
	return strconv.Quote("/" + strings.Join(c.path, "/"))
}

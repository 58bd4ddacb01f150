package llmtools

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// size is the size of a decoded JSON value of the input schema as
// json.Marshal writes it. Objects are measured once: their sizes are
// kept, so that charging a definition every time it is inlined costs
// nothing more, and measuring every definition of a schema costs no more
// than measuring the schema.
func (c *converter) size(v any) int {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return len("null")
		}
		key := reflect.ValueOf(v).UnsafePointer()
		if m, ok := c.sizes[key]; ok {
			return m.n
		}
		n := len("{}") + max(len(v)-1, 0) // braces, commas
		for k, e := range v {
			n += stringSize(k) + len(":") + c.size(e)
		}
		if c.sizes == nil {
			c.sizes = map[unsafe.Pointer]measured{}
		}
		c.sizes[key] = measured{m: v, n: n}
		return n
	case []any:
		if v == nil {
			return len("null")
		}
		n := len("[]") + max(len(v)-1, 0)
		for _, e := range v {
			n += c.size(e)
		}
		return n
	}
	return scalarSize(v)
}

// textSize is stringSize for a string of the input schema, measured once:
// a plain schema (see plain) may stand in for the same target many times,
// and each must cost little more than the lookup.
func (c *converter) textSize(s string) int {
	key := textKey{unsafe.StringData(s), len(s)}
	if n, ok := c.texts[key]; ok {
		return n
	}
	n := stringSize(s)
	if c.texts == nil {
		c.texts = map[textKey]int{}
	}
	c.texts[key] = n
	return n
}

// textKey identifies a string of the input schema (which keeps its bytes).
type textKey struct {
	p *byte
	n int
}

// jsonSize is the size of a JSON value (decoded, or converted) as
// json.Marshal writes it, if it is at most limit; past limit it stops,
// and over is true.
func jsonSize(v any, limit int) (n int, over bool) {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if v == nil {
				n += len("null")
				break
			}
			n += len("{}") + max(len(v)-1, 0)
			for k, e := range v {
				n += stringSize(k) + len(":")
				if n > limit || !walk(e) {
					return false
				}
			}
		case []any:
			if v == nil {
				n += len("null")
				break
			}
			n += len("[]") + max(len(v)-1, 0)
			for _, e := range v {
				if n > limit || !walk(e) {
					return false
				}
			}
		default:
			n += scalarSize(v)
		}
		return n <= limit
	}
	if !walk(v) {
		return n, true
	}
	return n, false
}

// scalarSize is the size of a JSON scalar as json.Marshal writes it.
func scalarSize(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		if v {
			return len("true")
		}
		return len("false")
	case string:
		return stringSize(v)
	case json.Number:
		if v == "" {
			return 1 // "0"
		}
		return len(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// stringSize is the size of a JSON string as json.Marshal writes it:
// quoted, with its escapes (HTML characters included), and invalid UTF-8
// as \ufffd.
func stringSize(s string) int {
	n := len(`""`)
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += len(`\u0000`)
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1, r == '\u2028', r == '\u2029':
			n += len(`\ufffd`)
		default:
			n += w
		}
		i += w
	}
	return n
}

// plainType is the type of a plain schema (see plain), for notes.
func plainType(plain map[string]any) string {
	t, _ := plain["type"].(string)
	return strings.ToLower(t)
}

// Package rawjson scans JSON-RPC messages without decoding them: it finds the
// top-level members of an object as byte spans, so that a relay can read a
// message's method, id and tool name and splice in new values while passing
// every other byte through untouched.
//
// It is strict where encoding/json is lenient, because the relay decides on
// exactly the bytes it forwards: a duplicate member name, or two names that
// differ only in case (which encoding/json would match to the same field), is
// an error. It is written by hand because no dependency offers allocation-free
// member scanning with these checks; FuzzMembers holds it to encoding/json.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// linearNames is how many member names are compared pairwise before the
// duplicate check switches to a set.
const linearNames = 16

// MaxDepth bounds nesting while skipping values.
const MaxDepth = 512

// Errors returned by Members.
var (
	ErrSyntax    = errors.New("rawjson: invalid JSON")
	ErrNotObject = errors.New("rawjson: not a JSON object")
	ErrDuplicate = errors.New("rawjson: duplicate or case-variant member name")
	ErrTooDeep   = errors.New("rawjson: nesting too deep")
	// ErrName is a member name with an escape or a non-ASCII byte, which
	// could hide a case-variant duplicate (encoding/json folds "ſ" to "s").
	// It is also an ErrSyntax.
	ErrName = fmt.Errorf("%w: escaped or non-ASCII member name", ErrSyntax)
)

// Member is one top-level member of an object: Key is the raw name between
// the quotes (escapes not decoded), Value the raw value bytes.
type Member struct {
	Key   []byte
	Value []byte
	// Start and End are the offsets of Value in the scanned input.
	Start, End int
}

// Members scans a JSON object and returns its top-level members in order,
// appending to dst. Trailing white space is allowed; anything else after the
// object is an error. Member names with escapes or non-ASCII bytes are
// rejected, since they could hide a case-variant duplicate.
func Members(dst []Member, b []byte) ([]Member, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return dst, ErrNotObject
	}
	i = skipWS(b, i+1)
	first := len(dst)
	var seen map[string]struct{}
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return dst, ErrSyntax
			}
			ks := i + 1
			ke := ks
			for ke < len(b) && b[ke] != '"' {
				c := b[ke]
				if c == '\\' || c < 0x20 || c >= 0x80 {
					return dst, ErrName
				}
				ke++
			}
			if ke >= len(b) {
				return dst, ErrSyntax
			}
			key := b[ks:ke]
			if n := len(dst) - first; n < linearNames {
				for _, m := range dst[first:] {
					if bytes.EqualFold(m.Key, key) {
						return dst, ErrDuplicate
					}
				}
			} else {
				// Many members: a set of lower-cased names keeps the check
				// linear (names are ASCII, so lower-casing is exact folding).
				if seen == nil {
					seen = make(map[string]struct{}, 2*n)
					for _, m := range dst[first:] {
						seen[string(bytes.ToLower(m.Key))] = struct{}{}
					}
				}
				lk := string(bytes.ToLower(key))
				if _, dup := seen[lk]; dup {
					return dst, ErrDuplicate
				}
				seen[lk] = struct{}{}
			}
			i = skipWS(b, ke+1)
			if i >= len(b) || b[i] != ':' {
				return dst, ErrSyntax
			}
			vs := skipWS(b, i+1)
			ve, err := skipValue(b, vs, 0)
			if err != nil {
				return dst, err
			}
			dst = append(dst, Member{Key: key, Value: b[vs:ve], Start: vs, End: ve})
			i = skipWS(b, ve)
			if i >= len(b) {
				return dst, ErrSyntax
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] != '}' {
				return dst, ErrSyntax
			}
			i++
			break
		}
	}
	if skipWS(b, i) != len(b) {
		return dst, ErrSyntax
	}
	return dst, nil
}

// Find returns the member named key, if present.
func Find(ms []Member, key string) (Member, bool) {
	for _, m := range ms {
		if string(m.Key) == key {
			return m, true
		}
	}
	return Member{}, false
}

// String decodes a JSON string value. ok is false if v is not a string.
func String(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	// (A variable of its own: one whose address escapes is on the heap,
	// and only this path needs it.)
	var d string
	if err := json.Unmarshal(v, &d); err != nil {
		return "", false
	}
	return d, true
}

// Is reports whether v is the JSON string s, escaped or not; without
// allocating when v has no escapes.
func Is(v []byte, s string) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == s
	}
	d, ok := String(v)
	return ok && d == s
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the offset just past the value starting at i.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return 0, ErrTooDeep
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return 0, ErrSyntax
				}
				e, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = skipWS(b, e)
				if i >= len(b) || b[i] != ':' {
					return 0, ErrSyntax
				}
				i = skipWS(b, i+1)
			}
			e, err := skipValue(b, i, depth+1)
			if err != nil {
				return 0, err
			}
			i = skipWS(b, e)
			if i >= len(b) {
				return 0, ErrSyntax
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] == closer {
				return i + 1, nil
			}
			return 0, ErrSyntax
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	return 0, ErrSyntax
}

func literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, ErrSyntax
	}
	return i + len(lit), nil
}

func skipString(b []byte, i int) (int, error) {
	i++ // opening quote
	start := i
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			if !utf8.Valid(b[start:i]) {
				return 0, ErrSyntax
			}
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return 0, ErrSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, ErrSyntax
				}
				for _, h := range b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, ErrSyntax
					}
				}
				i += 6
			default:
				return 0, ErrSyntax
			}
		case c < 0x20:
			return 0, ErrSyntax
		default:
			i++
		}
	}
	return 0, ErrSyntax
}

func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, ErrSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, ErrSyntax
		}
	}
	return i, nil
}

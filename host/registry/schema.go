package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// CleanSchema returns a tool schema with every string in it — descriptions,
// titles, enum values, defaults, examples, at any depth — sanitized as
// Sanitize does (control, format, bidi, zero-width, tag and private-use
// characters removed, NFKC). The schema itself is not modified: parts
// that change are copied.
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
	out, _, err := c.clean(schema, 0)
	return out, err
}

// schemaCleaner cleans one schema. path is the keys and indexes leading to
// the value being cleaned, for errors.
type schemaCleaner struct {
	nodes int
	path  []string
}

// clean returns v cleaned, and whether it changed.
func (c *schemaCleaner) clean(v any, depth int) (any, bool, error) {
	c.nodes++
	if c.nodes > MaxSchemaNodes {
		return nil, false, fmt.Errorf("%w: more than %d values", ErrSchema, MaxSchemaNodes)
	}
	switch v := v.(type) {
	case string:
		s := Sanitize(v)
		return s, s != v, nil
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
			ce, changed, err := c.clean(e, depth+1)
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
			ce, changed, err := c.clean(e, depth+1)
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

// pointer is the JSON pointer of the value being cleaned, quoted for an
// error message.
func (c *schemaCleaner) pointer() string {
	if len(c.path) == 0 {
		return "the top"
	}
	return strconv.Quote("/" + strings.Join(c.path, "/"))
}

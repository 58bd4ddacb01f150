package llmtools

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Gemini's function parameters are a subset of OpenAPI 3.0's schema object:
// the fields of google.golang.org/genai's Schema. The converter keeps type,
// format, description, title, nullable, enum, items, properties, required,
// minItems, maxItems, minLength, maxLength, pattern, minimum, maximum,
// minProperties, maxProperties, anyOf and propertyOrdering, each only where
// it applies to the schema's type (geminiApplies). Everything else is
// dropped or rewritten, and noted:
//
//   - $ref is inlined (with $defs and definitions dropped); the
//     referring schema's keywords win over the target's (a different
//     value noted). A recursive reference, one nested deeper than
//     maxRefDepth, or one the byte cap (outputCap) has no room for, becomes
//     a plain schema of the target's type.
//   - allOf is merged into its schema; oneOf becomes anyOf; a null branch
//     of anyOf, null in a type list or in an enum becomes nullable. An
//     anyOf with one branch besides null is merged into its schema:
//     properties and required are joined, and a keyword whose value
//     differs from the schema's is dropped, noted.
//   - A type list ["string", "number"] becomes anyOf, one branch per type,
//     each with the keywords that apply to its type (and const or enum);
//     the other keywords stay on the schema, kept or dropped as anywhere
//     else, and an explicit nullable is kept.
//   - const becomes a one-value enum. Gemini enums are strings: an enum
//     with other values is dropped, its values listed in the description.
//   - format is kept only where Gemini accepts it: enum and date-time for
//     strings, float and double for numbers, int32 and int64 for integers.
//   - An array without items gets "items": {}; an object's empty
//     properties are left out (Gemini refuses empty ones).
//   - additionalProperties, patternProperties, not, if/then/else,
//     exclusiveMinimum, multipleOf, uniqueItems, $schema, $id, $comment and
//     any other keyword are dropped; so are default, example and examples,
//     although genai has default and example: they only document values,
//     and the export keeps to the smallest subset.
//
// Types are written in upper case (STRING, OBJECT, …), as genai spells them.

// geminiApplies lists the keywords that apply to some types only, with
// those types.
var geminiApplies = map[string][]string{
	"minLength":        {"string"},
	"maxLength":        {"string"},
	"pattern":          {"string"},
	"minimum":          {"number", "integer"},
	"maximum":          {"number", "integer"},
	"items":            {"array"},
	"minItems":         {"array"},
	"maxItems":         {"array"},
	"properties":       {"object"},
	"required":         {"object"},
	"minProperties":    {"object"},
	"maxProperties":    {"object"},
	"propertyOrdering": {"object"},
	"format":           {"string", "number", "integer"},
}

// geminiFormats are the formats Gemini accepts, by type.
var geminiFormats = map[string][]string{
	"string":  {"enum", "date-time"},
	"number":  {"float", "double"},
	"integer": {"int32", "int64"},
}

// jsonTypes are JSON Schema's type names.
var jsonTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// gem converts a subschema to Gemini's subset.
func (c *converter) gem(node any, ptr string, depth int) map[string]any {
	m, ok := node.(map[string]any)
	if !ok {
		switch node {
		case true:
		case false:
			c.note(ptr, Dropped, "the schema false (no value is valid): Gemini cannot say so; replaced by an unconstrained schema")
		default:
			c.note(ptr, Dropped, "a JSON %s is not a schema; replaced by an unconstrained schema", jsonKind(node))
		}
		return map[string]any{}
	}
	if !c.enter(ptr, depth, len(m)) {
		return map[string]any{}
	}
	if ref, ok := m["$ref"]; ok {
		return c.gemRef(m, ref, ptr, depth)
	}
	return c.gemNode(c.mergeAllOf(m, ptr, 0), ptr, depth)
}

// gemRef inlines a reference: the target with the referring schema's other
// keywords over it, converted where the target is (notes point into it).
func (c *converter) gemRef(m map[string]any, ref any, ptr string, depth int) map[string]any {
	p := pointerJoin(ptr, "$ref")
	siblings := withoutKey(m, "$ref")
	s, _ := ref.(string)
	target, tptr, ok := resolve(c.root, s)
	if _, isString := ref.(string); !isString || !ok {
		c.note(p, Dropped, "%s does not resolve within the schema; replaced by an unconstrained schema", compactJSON(ref))
		return c.gem(siblings, ptr, depth)
	}
	tm, isMap := target.(map[string]any)
	if !isMap {
		if target == true {
			c.note(p, Rewritten, "%q (the schema true) inlined (Gemini has no references)", s)
			return c.gem(siblings, ptr, depth)
		}
		c.note(p, Dropped, "%q is not a schema object; replaced by an unconstrained schema", s)
		return c.gem(siblings, ptr, depth)
	}
	if recursive := contains(c.refs, tptr); recursive || len(c.refs) > maxRefDepth {
		plain := c.plain(tm, siblings, p)
		why := "is recursive"
		if !recursive {
			why = fmt.Sprintf("is inlined more than %d references deep", maxRefDepth)
		}
		c.note(p, Dropped, "%q %s, and Gemini has no references: replaced by a plain %s", s, why, plainType(plain))
		return plain
	}
	if !c.spend(p, len(tm)) {
		return map[string]any{}
	}
	if !c.fits(c.size(tm)) {
		plain := c.plain(tm, siblings, p)
		c.note(p, Dropped, "%q not inlined: the schema would take more than %d bytes (each inlined copy counted); replaced by a plain %s", s, c.maxBytes, plainType(plain))
		return plain
	}
	c.note(p, Rewritten, "%q inlined (Gemini has no references)", s)
	merged := make(map[string]any, len(tm)+len(siblings))
	for k, v := range tm {
		merged[k] = v
	}
	for _, k := range sortedKeys(siblings) {
		if tv, ok := tm[k]; ok && !reflect.DeepEqual(tv, siblings[k]) {
			c.note(pointerJoin(tptr, k), Dropped, "%q conflicts with the referring schema's, which is kept", k)
		}
		merged[k] = siblings[k]
	}
	c.refs = append(c.refs, tptr)
	defer func() { c.refs = c.refs[:len(c.refs)-1] }()
	if _, again := merged["$ref"]; again {
		return c.gemRef(merged, merged["$ref"], tptr, depth)
	}
	return c.gemNode(c.mergeAllOf(merged, tptr, 0), tptr, depth)
}

// plain stands in for a reference that is not inlined: a schema of the
// target's type (object if it has none, or several), with the referring
// schema's description or else the target's. The target's description is
// a copy, charged against the byte cap: if it does not fit, it is left out
// (noted at ptr).
func (c *converter) plain(target, siblings map[string]any, ptr string) map[string]any {
	t := "object"
	if s, ok := target["type"].(string); ok && contains(jsonTypes, s) && s != "null" {
		t = s
	}
	out := map[string]any{"type": c.typeName(t)}
	if t == "array" {
		out["items"] = map[string]any{}
	}
	if d, ok := siblings["description"].(string); ok {
		out["description"] = d
	} else if d, ok := target["description"].(string); ok {
		if c.fits(c.textSize(d)) {
			out["description"] = d
		} else {
			c.note(ptr, Dropped, "the target's description (%d bytes) left out of the plain schema standing for it: the schema would take more than %d bytes", len(d), c.maxBytes)
		}
	}
	return out
}

// gemNode converts a schema without $ref or allOf.
func (c *converter) gemNode(m map[string]any, ptr string, depth int) map[string]any {
	types, nullable, onlyNull := c.gemTypes(m, ptr)
	_, hasAnyOf := m["anyOf"]
	_, hasOneOf := m["oneOf"]
	if len(types) > 1 && (hasAnyOf || hasOneOf) {
		c.note(pointerJoin(ptr, "type"), Dropped, "%s next to anyOf or oneOf: Gemini cannot have both", compactJSON(m["type"]))
		types = nil
	}
	if len(types) > 1 {
		return c.gemTypeList(m, types, nullable, ptr, depth)
	}
	t := ""
	if len(types) == 1 {
		t = types[0]
	}
	if t == "" {
		if _, ok := m["properties"]; ok {
			t = "object"
			c.note(ptr, Added, `"type": "OBJECT" (implied by properties)`)
		} else if _, ok := m["items"]; ok {
			t = "array"
			c.note(ptr, Added, `"type": "ARRAY" (implied by items)`)
		}
	}
	out := map[string]any{}
	var extra []string // appended to the description
	for _, k := range sortedKeys(m) {
		v, p := m[k], pointerJoin(ptr, k)
		if applies, ok := geminiApplies[k]; ok && t != "" && !contains(applies, t) {
			c.note(p, Dropped, "%q does not apply to type %q", k, t)
			continue
		}
		switch k {
		case "type", "const", "enum", "anyOf", "oneOf":
			// below
		default:
			c.gemKeyword(out, k, v, p, t, depth, &nullable)
		}
	}
	enum, kind := c.gemEnum(m, ptr, &nullable, &extra)
	if len(enum) > 0 {
		out["enum"] = enum
	}
	if t == "" {
		t = kind
	}
	switch {
	case t != "":
		out["type"] = strings.ToUpper(t)
	case onlyNull:
		out["type"] = "NULL"
	}
	c.gemAnyOf(m, ptr, depth, out, &nullable)
	if _, ok := out["required"]; ok {
		c.knownRequired(out, ptr)
	}
	if t == "array" {
		if _, ok := out["items"]; !ok {
			out["items"] = map[string]any{}
			c.note(ptr, Added, `"items": {} (Gemini refuses an array schema without items)`)
		}
	}
	if nullable && !onlyNull {
		out["nullable"] = true
	}
	if len(extra) > 0 {
		d, _ := out["description"].(string)
		if d != "" {
			d += " "
		}
		out["description"] = d + strings.Join(extra, " ")
	}
	return out
}

// gemKeyword converts keyword k (at p) of a schema of type t ("" if it has
// none, or several) into out. type, const, enum, anyOf and oneOf are
// converted apart (gemEnum, gemAnyOf), and keywords that apply to other
// types (geminiApplies) are left to the caller. What Gemini lacks is
// dropped, noted.
func (c *converter) gemKeyword(out map[string]any, k string, v any, p, t string, depth int, nullable *bool) {
	switch k {
	case "nullable":
		if b, ok := v.(bool); ok {
			*nullable = *nullable || b
		} else {
			c.note(p, Dropped, "nullable that is not a boolean")
		}
	case "description", "title", "pattern":
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			c.note(p, Dropped, "%s that is not a string", k)
		}
	case "format":
		s, _ := v.(string)
		if ok := c.gemFormat(s, t); ok {
			out[k] = s
		} else {
			c.note(p, Dropped, "format %s: %s", compactJSON(v), formatRule(t))
		}
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		if n, ok := count(v); ok {
			out[k] = n
		} else {
			c.note(p, Dropped, "%s %s is not a count Gemini can read", k, compactJSON(v))
		}
	case "minimum", "maximum":
		if n, ok := finite(v); ok {
			out[k] = n
		} else {
			c.note(p, Dropped, "%s %s is not a finite number", k, compactJSON(v))
		}
	case "properties":
		if props := c.gemProperties(v, p, depth); len(props) > 0 {
			out[k] = props
		}
	case "required":
		if r := c.required(v, p); len(r) > 0 {
			out[k] = r
		}
	case "items":
		out[k] = c.gemItems(v, p, depth)
	case "propertyOrdering":
		if list, ok := v.([]any); ok && allStrings(list) {
			out[k] = list
		} else {
			c.note(p, Dropped, "propertyOrdering that is not a list of names")
		}
	case "$defs", "definitions":
		c.note(p, Dropped, "Gemini has no definitions; each is inlined where it is referenced")
	case "additionalProperties", "patternProperties", "unevaluatedProperties", "propertyNames":
		c.note(p, Dropped, "%s: Gemini cannot describe keys beyond an object's properties", k)
	case "default", "examples", "example":
		c.note(p, Dropped, "%s %s: not kept for Gemini", k, compactJSON(v))
	default:
		c.note(p, Dropped, "%q: Gemini does not accept this keyword", k)
	}
}

// gemTypes reads a type keyword: the JSON types but null, whether null is
// among them, and whether it is the only one.
func (c *converter) gemTypes(m map[string]any, ptr string) (types []string, nullable, onlyNull bool) {
	v, ok := m["type"]
	if !ok {
		return nil, false, false
	}
	p := pointerJoin(ptr, "type")
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	default:
		c.note(p, Dropped, "a type that is a JSON %s", jsonKind(v))
		return nil, false, false
	}
	for _, n := range names {
		s, _ := n.(string)
		switch {
		case s == "null":
			nullable = true
		case !contains(jsonTypes, s):
			c.note(p, Dropped, "type %s is not a JSON type", compactJSON(n))
		case !contains(types, s):
			types = append(types, s)
		}
	}
	if nullable && len(types) == 0 {
		return nil, false, true
	}
	if _, list := v.([]any); list && nullable {
		c.note(p, Rewritten, "%s: null expressed as nullable", compactJSON(v))
	}
	return types, nullable, false
}

// gemTypeList rewrites a schema of several types as anyOf, one branch per
// type holding the keywords that apply to it (and const or enum). Its
// other keywords stay on the schema holding anyOf, converted (or dropped,
// noted) as gemNode converts them; an explicit nullable is kept.
func (c *converter) gemTypeList(m map[string]any, types []string, nullable bool, ptr string, depth int) map[string]any {
	c.note(pointerJoin(ptr, "type"), Rewritten, "%s → anyOf with one schema per type (Gemini takes one type per schema)", compactJSON(m["type"]))
	out := map[string]any{}
	for _, k := range sortedKeys(m) {
		v, p := m[k], pointerJoin(ptr, k)
		applies, typed := geminiApplies[k]
		switch {
		case k == "type":
		case k == "enum" || k == "const":
			// Every branch gets a copy: charged (capped checks the result).
			c.bytes += (len(types) - 1) * c.size(v)
		case typed:
			if !overlaps(applies, types) {
				c.note(p, Dropped, "%q applies to none of the types", k)
			}
		default:
			c.gemKeyword(out, k, v, p, "", depth, &nullable)
		}
	}
	var branches []any
	for _, t := range types {
		b := map[string]any{"type": t}
		for k, v := range m {
			if applies, ok := geminiApplies[k]; ok && contains(applies, t) || k == "enum" || k == "const" {
				b[k] = v
			}
		}
		branches = append(branches, c.gemNode(b, ptr, depth+1))
	}
	out["anyOf"] = branches
	if nullable {
		out["nullable"] = true
	}
	return out
}

// gemEnum reads const or enum: the string values, and the type they
// imply (if they are all of one). Null among them makes the schema
// nullable; other values are dropped and listed in the description.
func (c *converter) gemEnum(m map[string]any, ptr string, nullable *bool, extra *[]string) (enum []any, kind string) {
	var vals []any
	key := "enum"
	if cv, ok := m["const"]; ok {
		key = "const"
		vals = []any{cv}
		if _, both := m["enum"]; both {
			c.note(pointerJoin(ptr, "enum"), Dropped, "enum next to const: const is kept")
		}
	} else if ev, ok := m["enum"]; ok {
		list, isList := ev.([]any)
		if !isList {
			c.note(pointerJoin(ptr, "enum"), Dropped, "an enum that is a JSON %s, not an array", jsonKind(ev))
			return nil, ""
		}
		vals = list
	} else {
		return nil, ""
	}
	p := pointerJoin(ptr, key)
	var strs, shown []any
	kinds := map[string]bool{}
	for _, v := range vals {
		switch v := v.(type) {
		case nil:
			*nullable = true
			c.note(p, Rewritten, "null among the values expressed as nullable")
			continue
		case string:
			strs = append(strs, v)
			kinds["string"] = true
		case bool:
			kinds["boolean"] = true
		case json.Number:
			if _, err := v.Int64(); err == nil {
				kinds["integer"] = true
			} else {
				kinds["number"] = true
			}
		default:
			kinds[""] = true // an array or object
		}
		shown = append(shown, v)
	}
	if kinds["integer"] && kinds["number"] {
		delete(kinds, "integer")
	}
	if len(kinds) == 1 {
		for k := range kinds {
			kind = k
		}
	}
	if len(strs) < len(shown) {
		list := make([]string, len(shown))
		for i, v := range shown {
			list[i] = compactJSON(v)
		}
		text := "Allowed values: " + strings.Join(list, ", ") + "."
		if c.fits(stringSize(text)) {
			*extra = append(*extra, text)
			c.note(p, Dropped, "%s with values that are not strings: Gemini enums are strings; the values are listed in the description", key)
		} else {
			c.note(p, Dropped, "%s with values that are not strings: Gemini enums are strings; listing the values in the description would take the schema past %d bytes", key, c.maxBytes)
		}
		return nil, kind
	}
	if key == "const" && len(strs) > 0 {
		c.note(p, Rewritten, "const → an enum of one value")
	}
	return strs, kind
}

// gemAnyOf converts anyOf (or oneOf, which Gemini lacks) into out: null
// branches make the schema nullable, a single branch is merged into it.
func (c *converter) gemAnyOf(m map[string]any, ptr string, depth int, out map[string]any, nullable *bool) {
	key := "anyOf"
	list, ok := m[key]
	if one, hasOne := m["oneOf"]; hasOne {
		if ok {
			c.note(pointerJoin(ptr, "oneOf"), Dropped, "oneOf next to anyOf: Gemini has only anyOf")
		} else {
			key, list, ok = "oneOf", one, true
			c.note(pointerJoin(ptr, key), Rewritten, "oneOf → anyOf (Gemini has no oneOf; the model is no longer told only one branch may match)")
		}
	}
	if !ok {
		return
	}
	p := pointerJoin(ptr, key)
	arr, isList := list.([]any)
	if !isList {
		c.note(p, Dropped, "%s that is a JSON %s, not an array", key, jsonKind(list))
		return
	}
	var (
		branches []any
		at       []string // the branches' pointers
	)
	for i, b := range arr {
		bp := pointerJoin(p, strconv.Itoa(i))
		if b == false {
			c.note(bp, Dropped, "a branch that matches nothing (schema false)")
			continue
		}
		s := c.gem(b, bp, depth+1)
		if s["type"] == "NULL" {
			*nullable = true
			c.note(bp, Rewritten, "the null branch expressed as nullable")
			continue
		}
		branches = append(branches, s)
		at = append(at, bp)
	}
	switch len(branches) {
	case 0:
	case 1:
		c.note(p, Rewritten, "its one branch (besides null) merged into the schema that holds it")
		c.gemMerge(out, branches[0].(map[string]any), at[0])
	default:
		out["anyOf"] = branches
	}
}

// gemMerge merges a converted branch (at bp) into the converted schema
// holding it, out: both apply, so properties and required are joined;
// any other keyword is taken from the branch if out lacks it, and a value
// that differs from out's is dropped, noted.
func (c *converter) gemMerge(out, branch map[string]any, bp string) {
	for _, k := range sortedKeys(branch) {
		v, p := branch[k], pointerJoin(bp, k)
		have, has := out[k]
		switch {
		case !has:
			out[k] = v
		case reflect.DeepEqual(have, v):
		case k == "properties":
			merged := map[string]any{}
			for name, s := range have.(map[string]any) {
				merged[name] = s
			}
			add := v.(map[string]any)
			for _, name := range sortedKeys(add) {
				if prev, ok := merged[name]; ok && !reflect.DeepEqual(prev, add[name]) {
					c.note(pointerJoin(p, name), Dropped, "property %q conflicts with the one of the schema holding anyOf, which is kept", name)
					continue
				}
				merged[name] = add[name]
			}
			out[k] = merged
		case k == "required":
			mergeRequired(out, v)
		default:
			c.note(p, Dropped, "%q conflicts with the value of the schema holding anyOf, which is kept", k)
		}
	}
}

// gemProperties converts properties to Gemini's subset.
func (c *converter) gemProperties(v any, ptr string, depth int) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.note(ptr, Dropped, "properties that are a JSON %s, not an object", jsonKind(v))
		return nil
	}
	props := make(map[string]any, len(m))
	for _, name := range sortedKeys(m) {
		p := pointerJoin(ptr, name)
		if m[name] == false {
			c.note(p, Dropped, "a property that must be absent (schema false): Gemini cannot say so")
			continue
		}
		props[name] = c.gem(m[name], p, depth+1)
	}
	return props
}

// gemItems converts items: one schema for every item.
func (c *converter) gemItems(v any, ptr string, depth int) map[string]any {
	if _, tuple := v.([]any); tuple {
		c.note(ptr, Dropped, "items as a list (a tuple): Gemini has one schema for every item; replaced by an unconstrained schema")
		return map[string]any{}
	}
	return c.gem(v, ptr, depth+1)
}

// gemFormat reports whether Gemini accepts format s for type t (for a
// schema without a type: for any type).
func (c *converter) gemFormat(s, t string) bool {
	if t != "" {
		return contains(geminiFormats[t], s)
	}
	for _, fs := range geminiFormats {
		if contains(fs, s) {
			return true
		}
	}
	return false
}

// formatRule says which formats Gemini accepts for type t, for notes.
func formatRule(t string) string {
	if fs, ok := geminiFormats[t]; ok {
		return "Gemini accepts only " + strings.Join(fs, " and ") + " for type " + t
	}
	return "Gemini accepts formats only for strings (enum, date-time), numbers (float, double) and integers (int32, int64)"
}

// count reads a non-negative integer keyword (minLength, …) as Gemini's
// int64: 3, 3.0 and 3e0 are 3.
func count(v any) (json.Number, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return "", false
	}
	if i, err := n.Int64(); err == nil {
		return json.Number(strconv.FormatInt(i, 10)), i >= 0
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 0 || f >= math.MaxInt64 {
		return "", false
	}
	return json.Number(strconv.FormatInt(int64(f), 10)), true
}

// finite reads a number keyword (minimum, maximum) as Gemini's float64.
func finite(v any) (json.Number, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return "", false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
}

func allStrings(list []any) bool {
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

func overlaps(a, b []string) bool {
	for _, s := range a {
		if contains(b, s) {
			return true
		}
	}
	return false
}

package llmtools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// WrapProperty names the single property of the object schema that wraps
// an input schema which does not describe a JSON object (type "string", a
// top-level anyOf, …): every format requires an object schema at the top.
// The model then sends {"input": VALUE}; Export.ToolCall sends the server
// VALUE.
const WrapProperty = "input"

// Bounds on the work a server's schema can cause. Schemas come from
// servers, which are not trusted to keep them small.
const (
	// maxDepth is the deepest nesting of schemas converted; deeper ones
	// become unconstrained schemas.
	maxDepth = 32
	// maxRefDepth is the longest chain of $refs inlined inside one another
	// (Gemini); a longer chain, or a recursive one, ends in a plain schema.
	maxRefDepth = 8
	// maxWork bounds the work of converting one tool's schema, in
	// keywords visited, copies (inlining can copy a definition many times)
	// counted; past it, the rest becomes unconstrained schemas.
	maxWork = 50_000
	// minOutputCap and outputGrowth bound the size of one tool's converted
	// schema, as JSON: at most outputCap(size of the input schema) bytes.
	// A keyword is one unit of maxWork however large its value, so copies
	// are also charged in bytes: every inlined target ($ref, an allOf
	// branch that is a reference) is charged its size as JSON, measured
	// once, against the cap; a target that does not fit is replaced by a
	// plain schema (see plain). A converted schema that still ends up over
	// the cap is replaced by a plain object schema (see capped).
	minOutputCap = 1 << 20
	outputGrowth = 2
)

// outputCap is the most bytes of JSON one tool's converted schema may
// take, for an input schema of inputSize bytes: 1 MiB, or twice the input
// if that is more.
func outputCap(inputSize int) int {
	return max(minOutputCap, outputGrowth*inputSize)
}

// converter turns one tool's input schema into one format's parameters.
// It is used once, by one goroutine.
type converter struct {
	format Format
	tool   string
	root   any // the input schema as decoded, which local $refs point into

	rebase bool      // refs to the root must follow it into WrapProperty (OpenAI, Anthropic)
	refs   []string  // the $ref targets being inlined, outermost first (Gemini)
	kept   []keptRef // the $refs kept in the output (OpenAI, Anthropic), for fixRefs
	chain  []string  // the $ref targets fixRefs is inlining, outermost first

	notes    []Note
	noted    map[Note]bool
	work     int  // spent, against maxWork
	overflow bool // maxWork was reached (and noted)

	maxBytes int                         // outputCap for this tool's input
	bytes    int                         // the output's expected size: the input's, plus every copy charged
	sizes    map[unsafe.Pointer]measured // the sizes of the input's objects (see size)
	texts    map[textKey]int             // the sizes of the input's strings (see textSize)
}

// keptRef is a $ref that pass kept in the output: node is the output
// schema holding it, orig the reference as the server wrote it (before a
// rebase), ptr the schema's pointer in the input.
type keptRef struct {
	node  map[string]any
	orig  string
	ptr   string
	depth int
	chain []string // the targets being inlined around it (fixRefs)
}

// measured is an object's size as JSON; m keeps the object alive, so that
// its address (the key) is not reused while the sizes are kept.
type measured struct {
	m map[string]any
	n int
}

// convertSchema returns the parameters schema of a tool for format f,
// whether the input schema was wrapped (see WrapProperty), and the notes.
// For Gemini, a tool without parameters gets a nil schema (Gemini refuses
// an object schema without properties). It never fails: what cannot be
// converted is dropped and noted.
func convertSchema(f Format, tool string, input any) (schema map[string]any, wrapped bool, notes []Note) {
	c := &converter{format: f, tool: tool, noted: map[Note]bool{}}
	if f.gemini() {
		c.refs = []string{""} // the top is being converted: a "#" inside is recursive
	}
	schema, wrapped = c.top(input)
	if !f.gemini() {
		c.fixRefs(schema)
	}
	schema = c.capped(schema, wrapped)
	if f.gemini() {
		if props, _ := schema["properties"].(map[string]any); len(props) == 0 {
			if d, ok := schema["description"].(string); ok && d != "" {
				c.note("/description", Dropped, "Gemini is given no parameters for a tool without properties, so the schema's description has no place")
			}
			schema = nil
		}
	}
	return schema, wrapped, c.notes
}

// note records a change once.
func (c *converter) note(ptr string, ch Change, format string, args ...any) {
	n := Note{Tool: c.tool, Pointer: ptr, Change: ch, Detail: fmt.Sprintf(format, args...)}
	if !c.noted[n] {
		c.noted[n] = true
		c.notes = append(c.notes, n)
	}
}

// enter charges the conversion of a schema of size keywords and reports
// whether it may go ahead: false beyond maxDepth or maxWork (noted).
func (c *converter) enter(ptr string, depth, size int) bool {
	if depth > maxDepth {
		c.note(ptr, Dropped, "schema nested deeper than %d levels; replaced by an unconstrained schema", maxDepth)
		return false
	}
	return c.spend(ptr, 1+size)
}

// spend charges n units of work and reports whether maxWork allows them.
// The first time it does not, it notes where the schema was cut.
func (c *converter) spend(ptr string, n int) bool {
	c.work += n
	if c.work <= maxWork {
		return true
	}
	if !c.overflow {
		c.overflow = true
		c.note(ptr, Dropped, "the schema takes more than %d keywords to convert (each inlined copy counted); this part and the rest replaced by unconstrained schemas", maxWork)
	}
	return false
}

// fits charges n bytes of copied output against the cap and reports
// whether they fit; if not, nothing is charged.
func (c *converter) fits(n int) bool {
	if c.bytes+n > c.maxBytes {
		return false
	}
	c.bytes += n
	return true
}

// capped returns the converted schema, or, if its JSON is larger than the
// cap, the plain object schema that stands for it (noted): the schema's
// description, and for a wrapped schema its WrapProperty, unconstrained.
func (c *converter) capped(schema map[string]any, wrapped bool) map[string]any {
	if _, over := jsonSize(schema, c.maxBytes); !over {
		return schema
	}
	c.note("", Dropped, "the converted schema takes more than %d bytes (each inlined copy counted); replaced by a plain object schema", c.maxBytes)
	out := c.emptyObject()
	if d, ok := schema["description"].(string); ok {
		out["description"] = d
	}
	if wrapped {
		out["properties"] = map[string]any{WrapProperty: map[string]any{}}
		out["required"] = []any{WrapProperty}
	}
	return out
}

// schema converts a subschema for the format.
func (c *converter) schema(node any, ptr string, depth int) any {
	if c.format.gemini() {
		return c.gem(node, ptr, depth)
	}
	return c.pass(node, ptr, depth)
}

// top applies the rules for the whole input schema: none, empty, true, or
// not a JSON object → an empty object schema; an object schema keeps its
// properties, required and description (and, but for Gemini, the
// definitions its references need, additionalProperties and $schema);
// anything else is wrapped (WrapProperty).
func (c *converter) top(input any) (map[string]any, bool) {
	v, n, err := normalize(input)
	c.maxBytes, c.bytes = outputCap(n), n
	if err != nil {
		c.note("", Dropped, "the input schema is not JSON (%v); replaced by an empty object schema", err)
		return c.emptyObject(), false
	}
	c.root = v
	m, isMap := v.(map[string]any)
	switch {
	case v == nil || v == true || isMap && len(m) == 0:
		return c.emptyObject(), false
	case v == false:
		c.note("", Dropped, "the schema false (no arguments are valid) replaced by an empty object schema")
		return c.emptyObject(), false
	case !isMap:
		c.note("", Dropped, "a JSON %s is not a schema; replaced by an empty object schema", jsonKind(v))
		return c.emptyObject(), false
	}
	m = c.topRef(m)
	m = c.mergeAllOf(m, "", 0)
	if objectSchema(m) {
		return c.object(m), false
	}
	return c.wrap(m), true
}

func (c *converter) emptyObject() map[string]any {
	return map[string]any{"type": c.typeName("object"), "properties": map[string]any{}}
}

// typeName spells a JSON type for the format: Gemini's are upper case.
func (c *converter) typeName(t string) string {
	if c.format.gemini() {
		return strings.ToUpper(t)
	}
	return t
}

// objectSchema reports whether a top-level schema describes an object: its
// type is "object" (or "object" and "null"), or it has no type and no
// keyword that makes it something else.
func objectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case nil:
		for _, k := range []string{"anyOf", "oneOf", "enum", "const", "not"} {
			if _, ok := m[k]; ok {
				return false
			}
		}
		return true
	case string:
		return t == "object"
	case []any:
		object := false
		for _, e := range t {
			switch e {
			case "object":
				object = true
			case "null":
			default:
				return false
			}
		}
		return object
	}
	return false
}

// topKeysJSONSchema are the top-level keywords of an object schema that
// the formats taking JSON Schema (not Gemini) keep besides type,
// properties, required and description.
var topKeysJSONSchema = []string{"$defs", "definitions", "additionalProperties", "$schema"}

// object converts an object schema at the top.
func (c *converter) object(m map[string]any) map[string]any {
	out := map[string]any{"type": c.typeName("object")}
	switch t := m["type"].(type) {
	case nil:
		if len(m) > 0 {
			c.note("", Added, `"type": "object" (the arguments of a call are a JSON object)`)
		}
	case []any:
		c.note("/type", Rewritten, `%s → "object": the arguments of a call are always an object`, compactJSON(t))
	}
	for _, k := range sortedKeys(m) {
		v, p := m[k], pointerJoin("", k)
		switch {
		case k == "type":
		case k == "properties":
			out[k] = c.properties(v, p)
		case k == "required":
			if r := c.required(v, p); len(r) > 0 {
				out[k] = r
			}
		case k == "description":
			if s, ok := v.(string); ok {
				out[k] = s
			} else {
				c.note(p, Dropped, "a description that is not a string")
			}
		case !c.format.gemini() && contains(topKeysJSONSchema, k):
			switch k {
			case "$defs", "definitions":
				out[k] = c.definitions(v, p)
			case "additionalProperties":
				out[k] = c.pass(v, p, 1)
			default: // $schema
				if _, ok := v.(string); ok {
					out[k] = v
				} else {
					c.note(p, Dropped, "a $schema that is not a string")
				}
			}
		case k == "$defs" || k == "definitions":
			c.note(p, Dropped, "Gemini has no definitions; each is inlined where it is referenced")
		case k == "additionalProperties" && c.format.gemini():
			c.note(p, Dropped, "%s: Gemini cannot describe keys beyond an object's properties", k)
		default:
			c.note(p, Dropped, "%q at the top of the schema: %s", k, c.topRule())
		}
	}
	if _, ok := out["properties"]; !ok {
		out["properties"] = map[string]any{}
	}
	if c.format.gemini() {
		c.knownRequired(out, "")
	}
	return out
}

// topRule says what the top of an object schema keeps, for notes.
func (c *converter) topRule() string {
	if c.format.gemini() {
		return "only type, properties, required and description are kept there"
	}
	return "only type, properties, required, description, additionalProperties, $defs, definitions and $schema are kept there"
}

// properties converts a properties keyword.
func (c *converter) properties(v any, ptr string) map[string]any {
	props := map[string]any{}
	m, ok := v.(map[string]any)
	if !ok {
		c.note(ptr, Dropped, "properties that are a JSON %s, not an object", jsonKind(v))
		return props
	}
	for _, name := range sortedKeys(m) {
		p := pointerJoin(ptr, name)
		if m[name] == false && c.format.gemini() {
			c.note(p, Dropped, "a property that must be absent (schema false): Gemini cannot say so")
			continue
		}
		props[name] = c.schema(m[name], p, 1)
	}
	return props
}

// required converts a required keyword: its distinct strings.
func (c *converter) required(v any, ptr string) []any {
	list, ok := v.([]any)
	if !ok {
		c.note(ptr, Dropped, "required that is a JSON %s, not an array", jsonKind(v))
		return nil
	}
	var out []any
	seen := map[string]bool{}
	for i, e := range list {
		s, ok := e.(string)
		switch {
		case !ok:
			c.note(pointerJoin(ptr, strconv.Itoa(i)), Dropped, "a required entry that is not a string")
		case seen[s]:
			c.note(pointerJoin(ptr, strconv.Itoa(i)), Dropped, "%q listed twice", s)
		default:
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// knownRequired removes from a Gemini object's required the names that are
// not among its properties (Gemini refuses them).
func (c *converter) knownRequired(out map[string]any, ptr string) {
	req, _ := out["required"].([]any)
	if len(req) == 0 {
		return
	}
	props, _ := out["properties"].(map[string]any)
	var kept []any
	for _, r := range req {
		if _, ok := props[r.(string)]; ok {
			kept = append(kept, r)
		} else {
			c.note(pointerJoin(ptr, "required"), Dropped, "%q names no property Gemini is given", r)
		}
	}
	if len(kept) == 0 {
		delete(out, "required")
	} else {
		out["required"] = kept
	}
}

// definitions converts $defs or definitions (formats other than Gemini).
func (c *converter) definitions(v any, ptr string) any {
	m, ok := v.(map[string]any)
	if !ok {
		c.note(ptr, Dropped, "definitions that are a JSON %s, not an object", jsonKind(v))
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for _, k := range sortedKeys(m) {
		out[k] = c.pass(m[k], pointerJoin(ptr, k), 1)
	}
	return out
}

// wrap makes a schema that does not describe an object the single
// property WrapProperty of an object schema. For the formats that keep
// references, the definitions move to the new top, and references to
// other parts of the old top follow it into the property.
func (c *converter) wrap(m map[string]any) map[string]any {
	c.note("", Rewritten, "%s is not an object schema; wrapped as the property %q of one (Export.ToolCall unwraps the model's arguments)", describeTop(m), WrapProperty)
	out := map[string]any{"type": c.typeName("object"), "required": []any{WrapProperty}}
	inner := make(map[string]any, len(m))
	for k, v := range m {
		inner[k] = v
	}
	if id, ok := inner["$id"]; ok {
		c.note("/$id", Dropped, "%s: references are resolved within the schema", compactJSON(id))
		delete(inner, "$id")
	}
	if !c.format.gemini() {
		c.rebase = true
		for _, k := range []string{"$defs", "definitions", "$schema"} {
			v, ok := inner[k]
			if !ok {
				continue
			}
			delete(inner, k)
			switch _, isString := v.(string); {
			case k != "$schema":
				out[k] = c.definitions(v, pointerJoin("", k))
			case isString:
				out[k] = v
			default:
				c.note("/$schema", Dropped, "a $schema that is not a string")
			}
		}
	}
	out["properties"] = map[string]any{WrapProperty: c.schema(inner, "", 1)}
	return out
}

// describeTop names what makes a top-level schema not an object schema.
func describeTop(m map[string]any) string {
	if t, ok := m["type"]; ok {
		return "a schema of type " + compactJSON(t)
	}
	for _, k := range []string{"anyOf", "oneOf", "enum", "const", "not"} {
		if _, ok := m[k]; ok {
			return fmt.Sprintf("a schema with %q at the top", k)
		}
	}
	return "the schema"
}

// topRef inlines a $ref at the top (a vendor needs the object schema itself
// there). The top's own keywords win over the target's; its definitions
// stay where the references expect them.
func (c *converter) topRef(m map[string]any) map[string]any {
	for hops := 0; ; hops++ {
		ref, ok := m["$ref"]
		if !ok {
			return m
		}
		merged := withoutKey(m, "$ref")
		if hops == maxRefDepth {
			c.note("/$ref", Dropped, "more than %d references in a row at the top", maxRefDepth)
			return merged
		}
		s, _ := ref.(string)
		target, tptr, ok := resolve(c.root, s)
		tm, isMap := target.(map[string]any)
		if !ok || !isMap {
			c.note("/$ref", Dropped, "%s does not resolve to a schema within the schema", compactJSON(ref))
			return merged
		}
		if !c.fits(c.size(tm)) {
			c.note("/$ref", Dropped, "%q at the top not inlined: the schema would take more than %d bytes", s, c.maxBytes)
			return merged
		}
		c.note("/$ref", Rewritten, "%q at the top inlined (a vendor needs the object schema itself there)", s)
		c.mergeUnder(merged, tm, tptr)
		m = merged
	}
}

// mergeUnder adds to a schema that held a $ref the keywords of its target
// (at ptr) that it lacks; its own win over different values (noted).
func (c *converter) mergeUnder(m, target map[string]any, ptr string) {
	for _, k := range sortedKeys(target) {
		if have, has := m[k]; !has {
			m[k] = target[k]
		} else if !reflect.DeepEqual(have, target[k]) {
			c.note(pointerJoin(ptr, k), Dropped, "%q conflicts with the referring schema's, which is kept", k)
		}
	}
}

// mergeAllOf merges the branches of an allOf into the schema that holds it:
// their properties and required are added to the schema's, and any other
// keyword the schema lacks is taken from the first branch that has it (a
// conflicting value is dropped, noted). Branches that are references are
// resolved first. Used at the top for every format, and everywhere for
// Gemini, which has no allOf.
func (c *converter) mergeAllOf(m map[string]any, ptr string, depth int) map[string]any {
	all, ok := m["allOf"]
	if !ok {
		return m
	}
	p := pointerJoin(ptr, "allOf")
	out := withoutKey(m, "allOf")
	branches, ok := all.([]any)
	if !ok {
		c.note(p, Dropped, "allOf that is a JSON %s, not an array", jsonKind(all))
		return out
	}
	if depth >= maxRefDepth {
		c.note(p, Dropped, "allOf nested (through references) more than %d deep", maxRefDepth)
		return out
	}
	c.note(p, Rewritten, "the branches merged into the schema that holds them (%s)", c.allOfRule())
	for i, b := range branches {
		bp := pointerJoin(p, strconv.Itoa(i))
		bm := c.deref(b, bp)
		if bm == nil {
			continue
		}
		if !c.spend(bp, len(bm)) {
			break
		}
		bm = c.mergeAllOf(bm, bp, depth+1)
		for _, k := range sortedKeys(bm) {
			v := bm[k]
			switch k {
			case "properties":
				c.mergeProperties(out, v, pointerJoin(bp, k))
			case "required":
				mergeRequired(out, v)
			default:
				if have, ok := out[k]; !ok {
					out[k] = v
				} else if !reflect.DeepEqual(have, v) {
					c.note(pointerJoin(bp, k), Dropped, "%q conflicts with the value merged before it", k)
				}
			}
		}
	}
	return out
}

func (c *converter) allOfRule() string {
	if c.format.gemini() {
		return "Gemini has no allOf"
	}
	return "OpenAI and Anthropic refuse allOf at the top"
}

func (c *converter) mergeProperties(out map[string]any, v any, ptr string) {
	add, ok := v.(map[string]any)
	if !ok {
		c.note(ptr, Dropped, "properties that are a JSON %s, not an object", jsonKind(v))
		return
	}
	merged := map[string]any{} // a copy: the input is not changed
	if have, ok := out["properties"].(map[string]any); ok {
		for k, s := range have {
			merged[k] = s
		}
	}
	for _, name := range sortedKeys(add) {
		if prev, ok := merged[name]; ok && !reflect.DeepEqual(prev, add[name]) {
			c.note(pointerJoin(ptr, name), Dropped, "property %q conflicts with the one merged before it", name)
			continue
		}
		merged[name] = add[name]
	}
	out["properties"] = merged
}

// mergeRequired adds the names of a branch's required to the schema's
// (entries that are not strings are left to the required keyword's check).
func mergeRequired(out map[string]any, v any) {
	add, ok := v.([]any)
	if !ok {
		return
	}
	have, _ := out["required"].([]any)
	merged := append([]any{}, have...)
	for _, r := range add {
		if s, ok := r.(string); !ok || !containsValue(merged, s) {
			merged = append(merged, r)
		}
	}
	out["required"] = merged
}

// deref follows a subschema's $refs (bounded) and returns it as an object
// with the referring schema's other keywords merged over the target's; nil
// (noted) if it is not one.
func (c *converter) deref(v any, ptr string) map[string]any {
	for hops := 0; ; hops++ {
		if v == true {
			return map[string]any{}
		}
		m, ok := v.(map[string]any)
		if !ok {
			c.note(ptr, Dropped, "a JSON %s is not a schema", jsonKind(v))
			return nil
		}
		ref, ok := m["$ref"]
		if !ok {
			return m
		}
		if hops == maxRefDepth {
			c.note(pointerJoin(ptr, "$ref"), Dropped, "more than %d references in a row", maxRefDepth)
			return withoutKey(m, "$ref")
		}
		s, _ := ref.(string)
		target, tptr, ok := resolve(c.root, s)
		tm, isMap := target.(map[string]any)
		if !ok || !isMap {
			c.note(pointerJoin(ptr, "$ref"), Dropped, "%s does not resolve to a schema within the schema", compactJSON(ref))
			return withoutKey(m, "$ref")
		}
		if !c.spend(ptr, len(tm)) {
			return nil
		}
		merged := withoutKey(m, "$ref")
		if !c.fits(c.size(tm)) {
			plain := c.plain(tm, merged, pointerJoin(ptr, "$ref"))
			c.note(pointerJoin(ptr, "$ref"), Dropped, "%q not inlined: the schema would take more than %d bytes (each inlined copy counted); replaced by a plain %s", s, c.maxBytes, plainType(plain))
			for k, pv := range plain {
				if _, has := merged[k]; !has {
					merged[k] = pv
				}
			}
			return merged
		}
		c.mergeUnder(merged, tm, tptr)
		v = merged
	}
}

// subschemaMaps, subschemaLists and subschemaOne are the JSON Schema
// keywords whose values hold schemas: by name, as a list, as one.
var (
	subschemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	subschemaLists = []string{"prefixItems", "allOf", "anyOf", "oneOf"}
	subschemaOne   = []string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems",
		"not", "if", "then", "else", "contains", "propertyNames", "contentSchema"}
)

// pass converts a subschema for the formats that take JSON Schema (OpenAI,
// Anthropic): it is kept, but for references that cannot be resolved
// within the schema (dropped), references that must follow a wrapped
// schema, the bounds, and, for OpenAI, array schemas without items (which
// OpenAI refuses: "items": {} is added).
func (c *converter) pass(node any, ptr string, depth int) any {
	n, ok := node.(map[string]any)
	if !ok {
		if b, isBool := node.(bool); isBool {
			return b
		}
		c.note(ptr, Dropped, "a JSON %s is not a schema; replaced by an unconstrained schema", jsonKind(node))
		return map[string]any{}
	}
	if !c.enter(ptr, depth, len(n)) {
		return map[string]any{}
	}
	out := make(map[string]any, len(n))
	for _, k := range sortedKeys(n) {
		v, p := n[k], pointerJoin(ptr, k)
		switch {
		case k == "$ref":
			if ref, ok := c.passRef(v, p); ok {
				out[k] = ref
				c.kept = append(c.kept, keptRef{node: out, orig: v.(string), ptr: ptr, depth: depth, chain: c.chain})
			}
		case k == "items":
			if list, ok := v.([]any); ok {
				out[k] = c.passList(list, p, depth)
			} else {
				out[k] = c.pass(v, p, depth+1)
			}
		case contains(subschemaMaps, k):
			m, ok := v.(map[string]any)
			if !ok {
				c.note(p, Dropped, "%q that is a JSON %s, not an object", k, jsonKind(v))
				continue
			}
			sub := make(map[string]any, len(m))
			for _, name := range sortedKeys(m) {
				sub[name] = c.pass(m[name], pointerJoin(p, name), depth+1)
			}
			out[k] = sub
		case contains(subschemaLists, k):
			list, ok := v.([]any)
			if !ok {
				c.note(p, Dropped, "%q that is a JSON %s, not an array", k, jsonKind(v))
				continue
			}
			out[k] = c.passList(list, p, depth)
		case contains(subschemaOne, k):
			out[k] = c.pass(v, p, depth+1)
		case !readable(v):
			c.note(p, Dropped, "%q holds a number beyond what vendors read (a float64)", k)
		default:
			out[k] = v
		}
	}
	if (c.format == OpenAI || c.format == OpenAIResponses) && hasType(n["type"], "array") {
		_, items := n["items"]
		_, prefix := n["prefixItems"]
		if !items && !prefix {
			out["items"] = map[string]any{}
			c.note(ptr, Added, `"items": {} (OpenAI refuses an array schema without items)`)
		}
	}
	return out
}

func (c *converter) passList(list []any, ptr string, depth int) []any {
	out := make([]any, len(list))
	for i, e := range list {
		out[i] = c.pass(e, pointerJoin(ptr, strconv.Itoa(i)), depth+1)
	}
	return out
}

// passRef checks a $ref for the formats that keep references: it must
// resolve within the schema (a vendor resolves nothing else). References
// to the old top of a wrapped schema are moved into WrapProperty.
func (c *converter) passRef(v any, ptr string) (string, bool) {
	s, isString := v.(string)
	_, target, ok := resolve(c.root, s)
	if !isString || !ok {
		c.note(ptr, Dropped, "%s does not resolve within the schema; the vendor resolves nothing else", compactJSON(v))
		return "", false
	}
	if c.rebase && !strings.HasPrefix(target, "/$defs/") && !strings.HasPrefix(target, "/definitions/") {
		return "#" + pointerJoin("/properties", WrapProperty) + strings.TrimPrefix(s, "#"), true
	}
	return s, true
}

// fixRefs makes every $ref kept in a converted schema (OpenAI, Anthropic)
// resolve within it. passRef checked each against the server's schema,
// but the export does not keep all of it: the top keeps only some
// keywords and merges allOf away, and what is not a schema is replaced.
// A reference into what was left out is inlined (its target converted in
// its place, bounded as Gemini's inlining is) or, if that cannot be done,
// dropped; either is noted. References inside an inlined target are
// checked in turn.
func (c *converter) fixRefs(root map[string]any) {
	for i := 0; i < len(c.kept); i++ {
		r := c.kept[i]
		if r.node == nil { // in a part of an inlined target that was not kept
			continue
		}
		s, _ := r.node["$ref"].(string)
		if v, _, ok := resolve(root, s); ok && isSchema(v) {
			continue
		}
		delete(r.node, "$ref")
		p := pointerJoin(r.ptr, "$ref")
		target, tptr, _ := resolve(c.root, r.orig)
		tm, isMap := target.(map[string]any)
		const why = "points into a part of the schema the export leaves out"
		switch {
		case target == true:
			c.note(p, Rewritten, "%q %s; it is the schema true, so the reference is dropped", r.orig, why)
			continue
		case !isMap:
			c.note(p, Dropped, "%q %s, and is not a schema object; replaced by an unconstrained schema", r.orig, why)
			continue
		case contains(r.chain, tptr) || len(r.chain) >= maxRefDepth:
			plain := c.plain(tm, r.node, p)
			c.note(p, Dropped, "%q %s, and inlining it would not end (recursive, or more than %d deep): replaced by a plain %s", r.orig, why, maxRefDepth, plainType(plain))
			c.mergeUnder(r.node, plain, p)
			continue
		}
		if !c.spend(p, len(tm)) {
			continue
		}
		if !c.fits(c.size(tm)) {
			plain := c.plain(tm, r.node, p)
			c.note(p, Dropped, "%q %s; inlining it would take the schema past %d bytes (each inlined copy counted): replaced by a plain %s", r.orig, why, c.maxBytes, plainType(plain))
			c.mergeUnder(r.node, plain, p)
			continue
		}
		c.note(p, Rewritten, "%q %s; its target inlined", r.orig, why)
		first := len(c.kept)
		c.chain = append(append([]string{}, r.chain...), tptr)
		conv, _ := c.pass(tm, tptr, r.depth).(map[string]any)
		c.chain = nil
		// The referring schema's keywords win over the target's; the $refs
		// in what is not kept are not checked.
		var left []any
		for _, k := range sortedKeys(conv) {
			have, has := r.node[k]
			if !has {
				r.node[k] = conv[k]
				continue
			}
			if !reflect.DeepEqual(have, conv[k]) {
				c.note(pointerJoin(tptr, k), Dropped, "%q conflicts with the referring schema's, which is kept", k)
			}
			left = append(left, conv[k])
		}
		dead := mapsIn(left)
		for j := first; j < len(c.kept); j++ {
			switch n := c.kept[j].node; {
			case sameMap(n, conv): // its $ref moved into r.node
				c.kept[j].node = r.node
			case dead[reflect.ValueOf(n).UnsafePointer()]:
				c.kept[j].node = nil
			}
		}
	}
}

// mapsIn returns the identities of the objects within values.
func mapsIn(values []any) map[unsafe.Pointer]bool {
	set := map[unsafe.Pointer]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			set[reflect.ValueOf(v).UnsafePointer()] = true
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, v := range values {
		walk(v)
	}
	return set
}

// isSchema reports whether a decoded JSON value can be a schema.
func isSchema(v any) bool {
	switch v.(type) {
	case map[string]any, bool:
		return true
	}
	return false
}

// sameMap reports whether a and b are the same map (not equal ones).
func sameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// normalize decodes a schema as JSON, whatever Go value holds it, with
// numbers as json.Number (no precision lost), and returns the size of the
// JSON it decoded.
func normalize(schema any) (any, int, error) {
	var b []byte
	switch s := schema.(type) {
	case nil:
		return nil, 0, nil
	case json.RawMessage:
		b = s
	case []byte:
		b = s
	default:
		var err error
		if b, err = json.Marshal(schema); err != nil {
			return nil, 0, err
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, len(b), nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, len(b), err
	}
	if dec.More() {
		return nil, len(b), errors.New("more than one JSON value")
	}
	return v, len(b), nil
}

// resolve finds the target of a $ref within the schema: a URI fragment
// holding a JSON pointer ("#", "#/$defs/x"). target is the pointer,
// unescaped. ok is false for anything else (another document, an anchor)
// and for a pointer to nothing.
func resolve(root any, ref string) (v any, target string, ok bool) {
	frag, local := strings.CutPrefix(ref, "#")
	if !local {
		return nil, "", false
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if frag == "" {
		return root, "", true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, "", false
	}
	v = root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := v.(type) {
		case map[string]any:
			if v, ok = n[tok]; !ok {
				return nil, "", false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) || tok != strconv.Itoa(i) {
				return nil, "", false
			}
			v = n[i]
		default:
			return nil, "", false
		}
	}
	return v, frag, true
}

// readable reports whether every number in a decoded JSON value is a
// finite float64, as vendors read numbers.
func readable(v any) bool {
	switch v := v.(type) {
	case json.Number:
		_, err := v.Float64()
		return err == nil
	case []any:
		for _, e := range v {
			if !readable(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range v {
			if !readable(e) {
				return false
			}
		}
	}
	return true
}

// hasType reports whether a type keyword names t.
func hasType(typ any, t string) bool {
	switch v := typ.(type) {
	case string:
		return v == t
	case []any:
		return containsValue(v, t)
	}
	return false
}

// jsonKind names the JSON kind of a decoded value, for notes.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// compactJSON renders a decoded value for a note (long values cut). Its
// text comes from servers and ends up on terminals: every character that
// is not printable (controls, C1 controls, bidi and other format
// characters, private use, …) is escaped, as JSON escapes it, so that a
// note cannot reorder or hide the text around it.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return escapeInvisible(fmt.Sprintf("%v", v))
	}
	const max = 80
	if len(b) > max {
		return escapeInvisible(string(bytes.ToValidUTF8(b[:max], nil))) + "…"
	}
	return escapeInvisible(string(b))
}

// escapeInvisible writes each rune of s that unicode.IsPrint refuses
// (the ASCII space is kept) as a JSON \u escape (a surrogate pair beyond
// the BMP); invalid UTF-8 becomes U+FFFD.
func escapeInvisible(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, invisible) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s { // invalid UTF-8 comes as utf8.RuneError, printable
		switch {
		case !invisible(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// invisible reports whether a rune is one escapeInvisible escapes.
func invisible(r rune) bool { return !unicode.IsPrint(r) }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withoutKey returns a copy of m without key.
func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// containsValue reports whether list holds the string s.
func containsValue(list []any, s string) bool {
	for _, e := range list {
		if v, ok := e.(string); ok && v == s {
			return true
		}
	}
	return false
}

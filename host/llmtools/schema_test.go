package llmtools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcphost/mcphost/host/registry"
)

// schemaCase is one input schema and what each format makes of it. want
// holds the parameters schema by format (JSON; "null" for none); a format
// not in want is not checked by that case. notes are the notes expected
// for every checked format, as "POINTER CHANGE", by format.
type schemaCase struct {
	name    string
	schema  any
	want    map[Format]string
	wrapped bool
	notes   map[Format][]string
}

// jsonSchemaFormats are the formats that take JSON Schema.
var jsonSchemaFormats = []Format{OpenAI, OpenAIResponses, Anthropic}

// all returns want for every format that takes JSON Schema, and gemini.
func all(jsonSchema, gemini string) map[Format]string {
	m := map[Format]string{Gemini: gemini}
	for _, f := range jsonSchemaFormats {
		m[f] = jsonSchema
	}
	return m
}

// same returns the same notes for every format that takes JSON Schema, and
// Gemini's.
func same(jsonSchema, gemini []string) map[Format][]string {
	m := map[Format][]string{Gemini: gemini}
	for _, f := range jsonSchemaFormats {
		m[f] = jsonSchema
	}
	return m
}

const emptyObject = `{"type":"object","properties":{}}`

var schemaCases = []schemaCase{
	{name: "nil schema", schema: nil, want: all(emptyObject, "null")},
	{name: "empty schema", schema: map[string]any{}, want: all(emptyObject, "null")},
	{name: "schema true", schema: true, want: all(emptyObject, "null")},
	{
		name: "schema false", schema: false, want: all(emptyObject, "null"),
		notes: same([]string{" dropped"}, []string{" dropped"}),
	},
	{
		name: "not JSON", schema: json.RawMessage(`{"type":`), want: all(emptyObject, "null"),
		notes: same([]string{" dropped"}, []string{" dropped"}),
	},
	{
		name: "a JSON array", schema: json.RawMessage(`[{"type":"object"}]`), want: all(emptyObject, "null"),
		notes: same([]string{" dropped"}, []string{" dropped"}),
	},
	{
		name:   "object schema with a description only",
		schema: json.RawMessage(`{"type":"object","description":"No arguments."}`),
		want:   all(`{"type":"object","properties":{},"description":"No arguments."}`, "null"),
		notes:  same(nil, []string{"/description dropped"}),
	},
	{
		name:    "type string is wrapped",
		schema:  json.RawMessage(`{"type":"string","description":"The text."}`),
		wrapped: true,
		want: all(`{"type":"object","properties":{"input":{"type":"string","description":"The text."}},"required":["input"]}`,
			`{"type":"OBJECT","properties":{"input":{"type":"STRING","description":"The text."}},"required":["input"]}`),
		notes: same([]string{" rewritten"}, []string{" rewritten"}),
	},
	{
		name:    "oneOf at the top is wrapped",
		schema:  json.RawMessage(`{"oneOf":[{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},{"type":"object","properties":{"email":{"type":"string"}},"required":["email"]}]}`),
		wrapped: true,
		want: all(`{"type":"object","required":["input"],"properties":{"input":{"oneOf":[{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},{"type":"object","properties":{"email":{"type":"string"}},"required":["email"]}]}}}`,
			`{"type":"OBJECT","required":["input"],"properties":{"input":{"anyOf":[{"type":"OBJECT","properties":{"id":{"type":"INTEGER"}},"required":["id"]},{"type":"OBJECT","properties":{"email":{"type":"STRING"}},"required":["email"]}]}}}`),
		notes: same([]string{" rewritten"}, []string{" rewritten", "/oneOf rewritten"}),
	},
	{
		name:    "anyOf at the top is wrapped, its references follow it",
		schema:  json.RawMessage(`{"$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}}}},"anyOf":[{"$ref":"#/$defs/P"},{"type":"array","items":{"$ref":"#/anyOf/0"}}]}`),
		wrapped: true,
		want: all(`{"type":"object","required":["input"],"$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}}}},"properties":{"input":{"anyOf":[{"$ref":"#/$defs/P"},{"type":"array","items":{"$ref":"#/properties/input/anyOf/0"}}]}}}`,
			`{"type":"OBJECT","required":["input"],"properties":{"input":{"anyOf":[{"type":"OBJECT","properties":{"x":{"type":"NUMBER"}}},{"type":"ARRAY","items":{"type":"OBJECT","properties":{"x":{"type":"NUMBER"}}}}]}}}`),
		notes: same([]string{" rewritten"}, []string{" rewritten", "/$defs dropped", "/anyOf/0/$ref rewritten", "/anyOf/1/items/$ref rewritten"}),
	},
	{
		name:   "$ref and $defs: kept, or inlined for Gemini",
		schema: json.RawMessage(`{"type":"object","properties":{"home":{"$ref":"#/$defs/Address"},"work":{"$ref":"#/$defs/Address","description":"Work."}},"required":["home"],"$defs":{"Address":{"type":"object","properties":{"street":{"type":"string"}},"required":["street"]}}}`),
		want: all(`{"type":"object","properties":{"home":{"$ref":"#/$defs/Address"},"work":{"$ref":"#/$defs/Address","description":"Work."}},"required":["home"],"$defs":{"Address":{"type":"object","properties":{"street":{"type":"string"}},"required":["street"]}}}`,
			`{"type":"OBJECT","properties":{"home":{"type":"OBJECT","properties":{"street":{"type":"STRING"}},"required":["street"]},"work":{"type":"OBJECT","description":"Work.","properties":{"street":{"type":"STRING"}},"required":["street"]}},"required":["home"]}`),
		notes: same(nil, []string{"/$defs dropped", "/properties/home/$ref rewritten", "/properties/work/$ref rewritten"}),
	},
	{
		name:   "recursive $ref: a plain object for Gemini",
		schema: json.RawMessage(`{"type":"object","properties":{"root":{"$ref":"#/definitions/Node"}},"definitions":{"Node":{"type":"object","description":"A node.","properties":{"children":{"type":"array","items":{"$ref":"#/definitions/Node"}}}}}}`),
		want: all(`{"type":"object","properties":{"root":{"$ref":"#/definitions/Node"}},"definitions":{"Node":{"type":"object","description":"A node.","properties":{"children":{"type":"array","items":{"$ref":"#/definitions/Node"}}}}}}`,
			`{"type":"OBJECT","properties":{"root":{"type":"OBJECT","description":"A node.","properties":{"children":{"type":"ARRAY","items":{"type":"OBJECT","description":"A node."}}}}}}`),
		notes: same(nil, []string{"/definitions dropped", "/properties/root/$ref rewritten", "/definitions/Node/properties/children/items/$ref dropped"}),
	},
	{
		name:   "recursion through the top",
		schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"parent":{"$ref":"#"}}}`),
		want: all(`{"type":"object","properties":{"name":{"type":"string"},"parent":{"$ref":"#"}}}`,
			`{"type":"OBJECT","properties":{"name":{"type":"STRING"},"parent":{"type":"OBJECT"}}}`),
		notes: same(nil, []string{"/properties/parent/$ref dropped"}),
	},
	{
		name:   "a reference's own keywords win over its target's (noted for Gemini)",
		schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"Mine."},"n":{"$ref":"#/$defs/N","description":"Node."}},"$defs":{"A":{"type":"string","description":"Theirs."},"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N","description":"Next."}}}}}`),
		want: all(`{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"Mine."},"n":{"$ref":"#/$defs/N","description":"Node."}},"$defs":{"A":{"type":"string","description":"Theirs."},"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N","description":"Next."}}}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING","description":"Mine."},"n":{"type":"OBJECT","description":"Node.","properties":{"next":{"type":"OBJECT","description":"Next."}}}}}`),
		notes: same(nil, []string{"/$defs dropped", "/properties/a/$ref rewritten", "/$defs/A/description dropped", "/properties/n/$ref rewritten", "/$defs/N/properties/next/$ref dropped"}),
	},
	{
		name:   "$ref at the top is inlined",
		schema: json.RawMessage(`{"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"x":{"type":"integer"}}}}}`),
		want: all(`{"type":"object","properties":{"x":{"type":"integer"}},"$defs":{"Args":{"type":"object","properties":{"x":{"type":"integer"}}}}}`,
			`{"type":"OBJECT","properties":{"x":{"type":"INTEGER"}}}`),
		notes: same([]string{"/$ref rewritten"}, []string{"/$ref rewritten", "/$defs dropped"}),
	},
	{
		name:   "references that do not resolve are dropped",
		schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"},"b":{"$ref":"#/$defs/missing","description":"B."}}}`),
		want: all(`{"type":"object","properties":{"a":{},"b":{"description":"B."}}}`,
			`{"type":"OBJECT","properties":{"a":{},"b":{"description":"B."}}}`),
		notes: same([]string{"/properties/a/$ref dropped", "/properties/b/$ref dropped"}, []string{"/properties/a/$ref dropped", "/properties/b/$ref dropped"}),
	},
	{
		name:   "a reference into a top-level keyword the export drops is inlined",
		schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/x"}},"x":{"type":"string"}}`),
		want: all(`{"type":"object","properties":{"a":{"type":"string"}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`),
		notes: same([]string{"/x dropped", "/properties/a/$ref rewritten"}, []string{"/x dropped", "/properties/a/$ref rewritten"}),
	},
	{
		name:   "a reference into an allOf merged at the top is inlined",
		schema: json.RawMessage(`{"allOf":[{"type":"object","properties":{"a":{"type":"string"},"b":{"$ref":"#/allOf/0/properties/a","description":"B."}}}]}`),
		want: all(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string","description":"B."}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"STRING","description":"B."}}}`),
		notes: same([]string{"/allOf rewritten", "/properties/b/$ref rewritten"}, []string{"/allOf rewritten", "/properties/b/$ref rewritten"}),
	},
	{
		name:   "an inlined target's keywords the referring schema overrides are left out, with their references",
		schema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/x","properties":{"q":{"type":"string"}}}},"x":{"properties":{"b":{"$ref":"#/y"}}},"y":{"type":"string"}}`),
		want: all(`{"type":"object","properties":{"a":{"properties":{"q":{"type":"string"}}}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"q":{"type":"STRING"}}}}}`),
		notes: same([]string{"/x dropped", "/y dropped", "/properties/a/$ref rewritten", "/x/properties dropped"},
			[]string{"/x dropped", "/y dropped", "/properties/a/$ref rewritten", "/x/properties dropped", "/x added"}),
	},
	{
		name:   "allOf at the top is merged",
		schema: json.RawMessage(`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"b":{"type":"integer"}},"required":["a","b"]}]}`),
		want: all(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","b"]}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER"}},"required":["a","b"]}`),
		notes: same([]string{"/allOf rewritten"}, []string{"/allOf rewritten"}),
	},
	{
		name:   "allOf inside: kept, or merged for Gemini",
		schema: json.RawMessage(`{"type":"object","properties":{"pet":{"description":"A dog.","allOf":[{"$ref":"#/$defs/Base"},{"properties":{"barks":{"type":"boolean"}}}]}},"$defs":{"Base":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`),
		want: all(`{"type":"object","properties":{"pet":{"description":"A dog.","allOf":[{"$ref":"#/$defs/Base"},{"properties":{"barks":{"type":"boolean"}}}]}},"$defs":{"Base":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
			`{"type":"OBJECT","properties":{"pet":{"type":"OBJECT","description":"A dog.","properties":{"name":{"type":"STRING"},"barks":{"type":"BOOLEAN"}},"required":["name"]}}}`),
		notes: same(nil, []string{"/$defs dropped", "/properties/pet/allOf rewritten"}),
	},
	{
		name:   "type object with anyOf at the top: anyOf dropped",
		schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`),
		want: all(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"STRING"}}}`),
		notes: same([]string{"/anyOf dropped"}, []string{"/anyOf dropped"}),
	},
	{
		name:   "the top keeps properties, required, description (and what references need)",
		schema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","title":"Args","type":["object","null"],"description":"D.","properties":{"a":{"type":"string"}},"required":["a","a"],"additionalProperties":false,"examples":[{"a":"x"}]}`),
		want: all(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"D.","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			`{"type":"OBJECT","description":"D.","properties":{"a":{"type":"STRING"}},"required":["a"]}`),
		notes: same([]string{"/type rewritten", "/$id dropped", "/title dropped", "/examples dropped", "/required/1 dropped"},
			[]string{"/type rewritten", "/$id dropped", "/title dropped", "/examples dropped", "/required/1 dropped", "/$schema dropped", "/additionalProperties dropped"}),
	},
	{
		name:   "properties without a type",
		schema: json.RawMessage(`{"properties":{"a":{"properties":{"b":{"type":"boolean"}}}}}`),
		want: all(`{"type":"object","properties":{"a":{"properties":{"b":{"type":"boolean"}}}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"b":{"type":"BOOLEAN"}}}}}`),
		notes: same([]string{" added"}, []string{" added", "/properties/a added"}),
	},
	{
		name:   "anyOf inside, with null",
		schema: json.RawMessage(`{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"integer"}]},"maybe":{"anyOf":[{"type":"string","maxLength":10},{"type":"null"}]}}}`),
		want: all(`{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"integer"}]},"maybe":{"anyOf":[{"type":"string","maxLength":10},{"type":"null"}]}}}`,
			`{"type":"OBJECT","properties":{"id":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]},"maybe":{"type":"STRING","maxLength":10,"nullable":true}}}`),
		notes: same(nil, []string{"/properties/maybe/anyOf/1 rewritten", "/properties/maybe/anyOf rewritten"}),
	},
	{
		name:   "oneOf inside",
		schema: json.RawMessage(`{"type":"object","properties":{"shape":{"oneOf":[{"type":"object","properties":{"r":{"type":"number"}}},{"type":"object","properties":{"side":{"type":"number"}}}]}}}`),
		want: map[Format]string{
			Anthropic: `{"type":"object","properties":{"shape":{"oneOf":[{"type":"object","properties":{"r":{"type":"number"}}},{"type":"object","properties":{"side":{"type":"number"}}}]}}}`,
			Gemini:    `{"type":"OBJECT","properties":{"shape":{"anyOf":[{"type":"OBJECT","properties":{"r":{"type":"NUMBER"}}},{"type":"OBJECT","properties":{"side":{"type":"NUMBER"}}}]}}}`,
		},
		notes: map[Format][]string{Anthropic: nil, Gemini: {"/properties/shape/oneOf rewritten"}},
	},
	{
		name:   "enums and const",
		schema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string","enum":["red","green"]},"level":{"type":"integer","enum":[1,2,3],"description":"How loud."},"mode":{"const":"fast"},"choice":{"enum":["a",null]},"flag":{"const":true}}}`),
		want: all(`{"type":"object","properties":{"color":{"type":"string","enum":["red","green"]},"level":{"type":"integer","enum":[1,2,3],"description":"How loud."},"mode":{"const":"fast"},"choice":{"enum":["a",null]},"flag":{"const":true}}}`,
			`{"type":"OBJECT","properties":{"color":{"type":"STRING","enum":["red","green"]},"level":{"type":"INTEGER","description":"How loud. Allowed values: 1, 2, 3."},"mode":{"type":"STRING","enum":["fast"]},"choice":{"type":"STRING","enum":["a"],"nullable":true},"flag":{"type":"BOOLEAN","description":"Allowed values: true."}}}`),
		notes: same(nil, []string{"/properties/level/enum dropped", "/properties/mode/const rewritten", "/properties/choice/enum rewritten", "/properties/flag/const dropped"}),
	},
	{
		name:   "type lists with null",
		schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":["string","null"]},"either":{"type":["string","number","null"],"minLength":1,"minimum":0,"description":"E."}}}`),
		want: all(`{"type":"object","properties":{"name":{"type":["string","null"]},"either":{"type":["string","number","null"],"minLength":1,"minimum":0,"description":"E."}}}`,
			`{"type":"OBJECT","properties":{"name":{"type":"STRING","nullable":true},"either":{"description":"E.","nullable":true,"anyOf":[{"type":"STRING","minLength":1},{"type":"NUMBER","minimum":0}]}}}`),
		notes: same(nil, []string{"/properties/name/type rewritten", "/properties/either/type rewritten", "/properties/either/type rewritten"}),
	},
	{
		name: "nested objects and arrays of objects",
		schema: json.RawMessage(`{"type":"object","properties":{
			"user":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","default":"anon"},"email":{"type":"string","format":"email"},"born":{"type":"string","format":"date-time"}},"required":["name"]},
			"items":{"type":"array","minItems":1,"uniqueItems":true,"items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1}},"required":["sku","qty"]}},
			"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`),
		want: map[Format]string{
			OpenAI: `{"type":"object","properties":{
				"user":{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","default":"anon"},"email":{"type":"string","format":"email"},"born":{"type":"string","format":"date-time"}},"required":["name"]},
				"items":{"type":"array","minItems":1,"uniqueItems":true,"items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1}},"required":["sku","qty"]}},
				"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`,
			Gemini: `{"type":"OBJECT","properties":{
				"user":{"type":"OBJECT","properties":{"name":{"type":"STRING"},"email":{"type":"STRING"},"born":{"type":"STRING","format":"date-time"}},"required":["name"]},
				"items":{"type":"ARRAY","minItems":1,"items":{"type":"OBJECT","properties":{"sku":{"type":"STRING"},"qty":{"type":"INTEGER","minimum":1}},"required":["sku","qty"]}},
				"labels":{"type":"OBJECT"}}}`,
		},
		notes: map[Format][]string{OpenAI: nil, Gemini: {"/properties/user/additionalProperties dropped", "/properties/user/properties/name/default dropped",
			"/properties/user/properties/email/format dropped", "/properties/items/uniqueItems dropped", "/properties/labels/additionalProperties dropped"}},
	},
	{
		name:   "array without items",
		schema: json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array"}}}`),
		want: map[Format]string{
			OpenAI:          `{"type":"object","properties":{"tags":{"type":"array","items":{}}}}`,
			OpenAIResponses: `{"type":"object","properties":{"tags":{"type":"array","items":{}}}}`,
			Anthropic:       `{"type":"object","properties":{"tags":{"type":"array"}}}`,
			Gemini:          `{"type":"OBJECT","properties":{"tags":{"type":"ARRAY","items":{}}}}`,
		},
		notes: map[Format][]string{OpenAI: {"/properties/tags added"}, OpenAIResponses: {"/properties/tags added"}, Anthropic: nil, Gemini: {"/properties/tags added"}},
	},
	{
		name:   "formats and numbers (Gemini reads fewer)",
		schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","format":"int64","minimum":1.0,"maximum":1e3},"s":{"type":"string","format":"uri","minLength":2.0,"maxLength":-1,"minimum":3},"d":{"type":"number","format":"double","maximum":1e999}}}`),
		want: map[Format]string{
			OpenAI: `{"type":"object","properties":{"n":{"type":"integer","format":"int64","minimum":1,"maximum":1000},"s":{"type":"string","format":"uri","minLength":2,"maxLength":-1,"minimum":3},"d":{"type":"number","format":"double"}}}`,
			Gemini: `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","format":"int64","minimum":1,"maximum":1000},"s":{"type":"STRING","minLength":2},"d":{"type":"NUMBER","format":"double"}}}`,
		},
		notes: map[Format][]string{
			OpenAI: {"/properties/d/maximum dropped"},
			Gemini: {"/properties/s/format dropped", "/properties/s/maxLength dropped", "/properties/s/minimum dropped", "/properties/d/maximum dropped"},
		},
	},
	{
		name:   "Gemini: properties that must be absent, tuples, unknown required names, null",
		schema: json.RawMessage(`{"type":"object","properties":{"gone":false,"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]},"nothing":{"type":"null"},"weird":{"type":"file"}},"required":["pair","gone","zz"]}`),
		want: map[Format]string{
			Gemini: `{"type":"OBJECT","properties":{"pair":{"type":"ARRAY","items":{}},"nothing":{"type":"NULL"},"weird":{}},"required":["pair"]}`,
		},
		notes: map[Format][]string{Gemini: {"/properties/gone dropped", "/properties/pair/items dropped", "/properties/weird/type dropped", "/required dropped", "/required dropped"}},
	},
	{
		name: "Go values: a map with float64 numbers",
		schema: map[string]any{"type": "object", "properties": map[string]any{
			"n": map[string]any{"type": "integer", "minimum": float64(1), "maximum": 1e6}}},
		want: all(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":1000000}}}`,
			`{"type":"OBJECT","properties":{"n":{"type":"INTEGER","minimum":1,"maximum":1000000}}}`),
	},
	{
		name: "Go values: a *jsonschema.Schema",
		schema: &jsonschema.Schema{Type: "object", Required: []string{"q"}, Properties: map[string]*jsonschema.Schema{
			"q": {Type: "string", Description: "Query."}, "k": {Types: []string{"integer", "null"}}}},
		want: all(`{"type":"object","required":["q"],"properties":{"q":{"type":"string","description":"Query."},"k":{"type":["integer","null"]}}}`,
			`{"type":"OBJECT","required":["q"],"properties":{"q":{"type":"STRING","description":"Query."},"k":{"type":"INTEGER","nullable":true}}}`),
		notes: same(nil, []string{"/properties/k/type rewritten"}),
	},
}

func TestConvertSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range schemaCases {
		for _, f := range Formats() {
			want, ok := tc.want[f]
			if !ok {
				continue
			}
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				t.Parallel()
				params, wrapped, notes := convertOne(t, f, tc.schema)
				if diff := cmp.Diff(decodeJSON(t, []byte(want)), params); diff != "" {
					t.Errorf("parameters (-want +got):\n%s", diff)
				}
				if wrapped != tc.wrapped {
					t.Errorf("wrapped = %v, want %v", wrapped, tc.wrapped)
				}
				wantNotes := append([]string{}, tc.notes[f]...)
				sort.Strings(wantNotes)
				if diff := cmp.Diff(wantNotes, notes, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("notes (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// convertOne exports one tool with the given input schema and returns its
// parameters (decoded JSON; nil for none), whether they were wrapped, and
// its notes as sorted "POINTER CHANGE" strings.
func convertOne(t *testing.T, f Format, schema any) (params any, wrapped bool, notes []string) {
	t.Helper()
	e, err := Convert([]*registry.Tool{{Name: "mcp__s__t", Server: "s", InputSchema: schema}}, f)
	if err != nil {
		t.Fatal(err)
	}
	list := decodeJSON(t, mustMarshal(t, e.Tools)).([]any)
	tool := list[0].(map[string]any)
	switch f {
	case OpenAI:
		params = tool["function"].(map[string]any)["parameters"]
	case OpenAIResponses:
		params = tool["parameters"]
	case Anthropic:
		params = tool["input_schema"]
	case Gemini:
		params = tool["functionDeclarations"].([]any)[0].(map[string]any)["parameters"]
	}
	for _, n := range e.Notes {
		if n.Tool != "mcp__s__t" {
			t.Errorf("note for tool %q: %s", n.Tool, n)
		}
		if n.Detail == "" {
			t.Errorf("note without detail: %#v", n)
		}
		notes = append(notes, n.Pointer+" "+string(n.Change))
	}
	sort.Strings(notes)
	return params, e.wrapped["mcp__s__t"], notes
}

// TestConvertBounds: schemas built to be deep, wide or self-multiplying
// give bounded exports, and say where they were cut.
func TestConvertBounds(t *testing.T) {
	t.Parallel()
	deep := map[string]any{"type": "string"}
	for range 200 {
		deep = map[string]any{"type": "object", "properties": map[string]any{"a": deep}}
	}
	// Each definition refers to the next one twice, through 30 properties:
	// inlining all of it would be 60^12 schemas.
	defs := map[string]any{}
	for i := range 12 {
		props := map[string]any{}
		for j := range 30 {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/D%d", i+1)}
			props[fmt.Sprintf("q%d", j)] = map[string]any{"type": "array", "items": map[string]any{"$ref": fmt.Sprintf("#/$defs/D%d", i+1)}}
		}
		defs[fmt.Sprintf("D%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	defs["D12"] = map[string]any{"type": "string"}
	wide := map[string]any{"type": "object", "properties": map[string]any{"root": map[string]any{"$ref": "#/$defs/D0"}}, "$defs": defs}
	// A chain of references, each definition only a reference to the next.
	chain := map[string]any{}
	for i := range 20 {
		chain[fmt.Sprintf("C%d", i)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/C%d", i+1)}
	}
	chain["C20"] = map[string]any{"type": "string"}
	long := map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/C0"}}, "$defs": chain}

	// A large definition, referred to by many properties.
	bigDef := map[string]any{}
	for i := range 20_000 {
		bigDef[fmt.Sprintf("k%d", i)] = map[string]any{"type": "string", "x-unknown": i}
	}
	refs := map[string]any{}
	for i := range 200 {
		refs[fmt.Sprintf("r%d", i)] = map[string]any{"$ref": "#/$defs/Big"}
	}
	big := map[string]any{"type": "object", "properties": refs, "$defs": map[string]any{"Big": map[string]any{"type": "object", "properties": bigDef}}}

	tests := []struct {
		name     string
		schema   any
		formats  []Format
		wantNote string
	}{
		{"a large definition referred to often", big, []Format{Gemini}, "more than 50000 keywords"},
		{"200 levels deep", deep, Formats(), "deeper than 32 levels"},
		{"references that multiply", wide, []Format{Gemini}, "more than 50000 keywords"},
		{"a chain of 20 references", long, []Format{Gemini}, "more than 8 references deep"},
	}
	for _, tc := range tests {
		for _, f := range tc.formats {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				t.Parallel()
				e, err := Convert([]*registry.Tool{{Name: "mcp__s__t", InputSchema: tc.schema}}, f)
				if err != nil {
					t.Fatal(err)
				}
				out := mustMarshal(t, e.Tools)
				if n := countSchemas(decodeJSON(t, out)); n > maxWork {
					t.Errorf("the export holds %d objects, want at most %d", n, maxWork)
				}
				if d := depth(decodeJSON(t, out)); d > 2*maxDepth+8 {
					t.Errorf("the export is %d levels deep", d)
				}
				var found bool
				for _, n := range e.Notes {
					found = found || strings.Contains(n.Detail, tc.wantNote)
				}
				if !found {
					t.Errorf("no note says %q: %v", tc.wantNote, e.Notes)
				}
			})
		}
	}
}

func countSchemas(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n++
		for _, e := range v {
			n += countSchemas(e)
		}
	case []any:
		for _, e := range v {
			n += countSchemas(e)
		}
	}
	return n
}

func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// TestConvertDeterministic: the same tools give the same export and notes,
// whatever order Go's maps are walked in.
func TestConvertDeterministic(t *testing.T) {
	t.Parallel()
	tools := sdkTools(t)
	for _, f := range Formats() {
		first, err := Convert(tools, f)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			again, _ := Convert(tools, f)
			if diff := cmp.Diff(string(mustMarshal(t, first.Tools)), string(mustMarshal(t, again.Tools))); diff != "" {
				t.Fatalf("%s: the export changed between runs:\n%s", f, diff)
			}
			if diff := cmp.Diff(first.Notes, again.Notes); diff != "" {
				t.Fatalf("%s: the notes changed between runs:\n%s", f, diff)
			}
		}
	}
}

// TestConvertLeavesInputAlone: converting does not change the registry's
// schema (it is shared with every other reader of the registry).
func TestConvertLeavesInputAlone(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/schemas/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var schema any
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		before := string(mustMarshal(t, schema))
		for _, f := range Formats() {
			if _, err := Convert([]*registry.Tool{{Name: "mcp__s__t", InputSchema: schema}}, f); err != nil {
				t.Fatal(err)
			}
		}
		if after := string(mustMarshal(t, schema)); after != before {
			t.Errorf("%s changed:\n%s\n%s", file, before, after)
		}
	}
}

func TestConvertToolList(t *testing.T) {
	t.Parallel()
	tools := []*registry.Tool{
		{Name: "mcp__a__one", Server: "a", Description: "One."},
		nil,
		{Name: "mcp__a__two", Server: "a"},
		{Name: "mcp__a__one", Server: "b", Description: "A second one."},
	}
	for _, f := range Formats() {
		e, err := Convert(tools, f)
		if err != nil {
			t.Fatal(err)
		}
		if e.Names.Len() != 2 {
			t.Errorf("%s: %d names, want 2", f, e.Names.Len())
		}
		var dup bool
		for _, n := range e.Notes {
			dup = dup || n.Tool == "mcp__a__one" && n.Change == Dropped && strings.Contains(n.Detail, `server "b"`)
		}
		if !dup {
			t.Errorf("%s: the duplicate is not noted: %v", f, e.Notes)
		}
		out := string(mustMarshal(t, e.Tools))
		if strings.Contains(out, "A second one.") || !strings.Contains(out, `"description":"One."`) {
			t.Errorf("%s: %s", f, out)
		}
	}
	for _, f := range Formats() {
		e, _ := Convert(nil, f)
		if got := string(mustMarshal(t, e.Tools)); got != "[]" {
			t.Errorf("%s: no tools export as %s, want []", f, got)
		}
	}
	if _, err := Convert(nil, "mistral"); err == nil {
		t.Error("an unknown format is accepted")
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	for _, f := range Formats() {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	_, err := ParseFormat("OpenAI")
	if err == nil || !strings.Contains(err.Error(), "openai, openai-responses, anthropic, gemini") {
		t.Errorf("ParseFormat(OpenAI) = %v, want an error listing the formats", err)
	}
}

func TestNoteString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		note Note
		want string
	}{
		{Note{Tool: "mcp__a__b", Pointer: "/properties/x/format", Change: Dropped, Detail: `format "uri"`}, `mcp__a__b: #/properties/x/format: dropped: format "uri"`},
		{Note{Tool: "mcp__a__b", Pointer: "", Change: Rewritten, Detail: "wrapped"}, `mcp__a__b: #: rewritten: wrapped`},
		{Note{Tool: "mcp__a__b", Pointer: "/properties/a\nb", Change: Dropped, Detail: "x"}, `mcp__a__b: "#/properties/a\nb": dropped: x`},
		{Note{Tool: "a.b", Change: Renamed, Detail: `exported as "a_b"`}, `a.b: renamed: exported as "a_b"`},
	}
	for _, tc := range tests {
		if got := tc.note.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	if got := pointerJoin("/a", "b/c~d"); got != "/a/b~1c~0d" {
		t.Errorf("pointerJoin = %q", got)
	}
}

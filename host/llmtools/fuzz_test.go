package llmtools

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/mcphost/mcphost/host/registry"
)

// geminiKeys are the keywords a Gemini schema may hold after conversion.
var geminiKeys = []string{"type", "format", "description", "title", "nullable", "enum", "items", "properties", "required",
	"minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum", "minProperties", "maxProperties",
	"anyOf", "propertyOrdering"}

// FuzzConvert feeds arbitrary bytes as a tool's input schema (servers are
// not trusted) through every format. It must never panic, and every export
// must be JSON whose top is an object schema (or, for Gemini, no
// parameters), that genai decodes strictly, with no keyword Gemini lacks
// anywhere; its parameters must fit outputCap; every $ref an OpenAI or
// Anthropic export keeps must resolve within it; the tool's name must map
// back, a wrapped schema's input must come back unwrapped, and no note may
// hold a character that is not printable.
func FuzzConvert(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/schemas/*.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{``, `null`, `false`, `"x"`, `[]`, `1e999`, `{"$ref":"#"}`, `{"allOf":[{"$ref":"#"}]}`,
		`{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`, `{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"type":["array","object","null"],"items":[true,false],"enum":[1,"a",null,{}]}`, `{"type":"object","properties":{"a":{"minLength":1e30,"maximum":-0}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/x"}},"x":{"properties":{"b":{"$ref":"#/x"}}}}`,
		`{"allOf":[{"properties":{"a":{"type":"string"},"b":{"$ref":"#/allOf/0/properties/a"}}}]}`,
		`{"properties":{"a":{"type":["string","null"],"nullable":true,"default":"\u202e","anyOf":[{"description":"x"}]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		tools := []*registry.Tool{{Name: "mcp__s__t", InputSchema: json.RawMessage(schema)}}
		for _, format := range Formats() {
			e, err := Convert(tools, format)
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(e.Tools)
			if err != nil {
				t.Fatalf("%s: the export does not marshal: %v", format, err)
			}
			var decoded []map[string]any
			if err := json.Unmarshal(out, &decoded); err != nil || len(decoded) != 1 {
				t.Fatalf("%s: the export is not a list of one tool (%v): %s", format, err, out)
			}
			var params any
			switch format {
			case OpenAI:
				params = decoded[0]["function"].(map[string]any)["parameters"]
			case OpenAIResponses:
				params = decoded[0]["parameters"]
			case Anthropic:
				params = decoded[0]["input_schema"]
			case Gemini:
				params = decoded[0]["functionDeclarations"].([]any)[0].(map[string]any)["parameters"]
				var sdk []*genai.Tool
				dec := json.NewDecoder(bytes.NewReader(out))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&sdk); err != nil {
					t.Fatalf("genai refuses the export: %v\n%s", err, out)
				}
			}
			if n := len(mustMarshal(t, params)); n > outputCap(len(schema)) {
				t.Fatalf("%s: the parameters take %d bytes from a %d-byte schema, over %d", format, n, len(schema), outputCap(len(schema)))
			}
			top, ok := params.(map[string]any)
			switch {
			case format == Gemini && params == nil:
			case !ok:
				t.Fatalf("%s: the parameters are not an object: %s", format, out)
			case format == Gemini:
				if top["type"] != "OBJECT" || len(mapOf(top["properties"])) == 0 {
					t.Fatalf("gemini: the top is not an object schema with properties: %s", out)
				}
				checkGemini(t, top, "")
			default:
				if top["type"] != "object" || top["properties"] == nil {
					t.Fatalf("%s: the top is not an object schema: %s", format, out)
				}
				for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "not", "const", "$ref"} {
					if _, ok := top[k]; ok {
						t.Fatalf("%s: %q at the top: %s", format, k, out)
					}
				}
				if bad := unresolvedRefs(top); len(bad) > 0 {
					t.Fatalf("%s: references that do not resolve in the export %v: %s", format, bad, out)
				}
			}
			if _, ok := e.Names.Canonical("mcp__s__t"); !ok {
				t.Fatalf("%s: the name does not map back", format)
			}
			if e.wrapped["mcp__s__t"] {
				call, err := e.ToolCall("mcp__s__t", json.RawMessage(`{"input":[1]}`))
				if err != nil || string(call.Arguments) != "[1]" {
					t.Fatalf("%s: a wrapped call comes back as %v, %v", format, call, err)
				}
			}
			for _, n := range e.Notes {
				if strings.IndexFunc(n.String(), invisible) >= 0 {
					t.Fatalf("a note holds a character that is not printable: %q", n.String())
				}
			}
		}
	})
}

// checkGemini fails if a Gemini schema holds anything but geminiKeys, a
// type genai lacks, or an enum value that is not a string.
func checkGemini(t *testing.T, s map[string]any, ptr string) {
	t.Helper()
	for k, v := range s {
		p := ptr + "/" + k
		if !contains(geminiKeys, k) {
			t.Fatalf("gemini: %s: a keyword Gemini lacks", p)
		}
		switch k {
		case "type":
			if !contains([]string{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}, v.(string)) {
				t.Fatalf("gemini: %s: type %v", p, v)
			}
		case "enum":
			for _, e := range v.([]any) {
				if _, ok := e.(string); !ok {
					t.Fatalf("gemini: %s: an enum value %v that is not a string", p, e)
				}
			}
		case "properties":
			for name, sub := range mapOf(v) {
				checkGemini(t, sub.(map[string]any), p+"/"+name)
			}
		case "items":
			checkGemini(t, v.(map[string]any), p)
		case "anyOf":
			for _, sub := range v.([]any) {
				checkGemini(t, sub.(map[string]any), p)
			}
		}
	}
	if s["type"] == "ARRAY" && s["items"] == nil {
		t.Fatalf("gemini: %s: an array without items", ptr)
	}
	if props, ok := s["properties"]; ok && len(mapOf(props)) == 0 {
		t.Fatalf("gemini: %s: empty properties", ptr)
	}
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

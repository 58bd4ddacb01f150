package llmtools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/mcphost/mcphost/host/registry"
)

// fanOut is a schema of n properties, each a $ref to L1, which has n
// properties, each a $ref to Big: inlining it (Gemini) copies Big n*n
// times.
func fanOut(n int, big map[string]any) json.RawMessage {
	props := func(ref string) map[string]any {
		p := map[string]any{}
		for i := range n {
			p[fmt.Sprintf("p%d", i)] = map[string]any{"$ref": ref}
		}
		return p
	}
	return mustJSON(map[string]any{
		"type":       "object",
		"properties": props("#/$defs/L1"),
		"$defs": map[string]any{
			"L1":  map[string]any{"type": "object", "properties": props("#/$defs/Big")},
			"Big": big,
		},
	})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestConvertOutputBounded: a small schema whose references multiply a
// large description or enum (the review's repro shapes, smaller) gives a
// tool whose parameters stay within outputCap, in every format, and the
// cut is noted. Before the byte budget, Gemini's export of the first
// shape held n*n copies of the description: 3.4 MB from a 4 KB schema.
func TestConvertOutputBounded(t *testing.T) {
	t.Parallel()
	longText := strings.Repeat("Lorem ipsum dolor sit amet. ", 75) // 2.1 KB
	var strEnum, numEnum []any
	for i := range 400 {
		strEnum = append(strEnum, fmt.Sprintf("value-%04d", i))
		numEnum = append(numEnum, i*1000+i)
	}
	// A definition with a large description that refers to itself through
	// many properties: each recursive reference becomes a plain schema
	// that used to carry the description.
	selfProps := map[string]any{}
	for i := range 60 {
		selfProps[fmt.Sprintf("s%d", i)] = map[string]any{"$ref": "#/$defs/Node"}
	}
	recursive := mustJSON(map[string]any{
		"type":       "object",
		"properties": map[string]any{"root": map[string]any{"$ref": "#/$defs/Node"}},
		"$defs": map[string]any{"Node": map[string]any{
			"type": "object", "description": strings.Repeat("N", 40_000), "properties": selfProps}},
	})
	// The same shape through allOf, which every format merges at the top.
	var branches []any
	for range 40 {
		branches = append(branches, map[string]any{"$ref": "#/$defs/Big"})
	}
	allOf := mustJSON(map[string]any{
		"allOf": branches,
		"$defs": map[string]any{"Big": map[string]any{"type": "object", "description": strings.Repeat("A", 30_000),
			"properties": map[string]any{"x": map[string]any{"type": "string", "description": strings.Repeat("B", 30_000)}}}},
	})
	// A reference into a part of the schema no format keeps (x at the
	// top), many times over: OpenAI and Anthropic inline it.
	dropped := map[string]any{}
	for i := range 200 {
		dropped[fmt.Sprintf("d%d", i)] = map[string]any{"$ref": "#/x"}
	}
	unkept := mustJSON(map[string]any{"type": "object", "properties": dropped,
		"x": map[string]any{"type": "string", "description": strings.Repeat("X", 20_000)}})

	tests := []struct {
		name   string
		schema json.RawMessage
	}{
		{"a long description, 40x40 copies", fanOut(40, map[string]any{"type": "string", "description": longText})},
		{"a 400-value string enum, 40x40 copies", fanOut(40, map[string]any{"type": "string", "enum": strEnum})},
		{"a 400-value number enum, 40x40 copies", fanOut(40, map[string]any{"type": "integer", "enum": numEnum})},
		{"a 200 KB description, 8x8 copies", fanOut(8, map[string]any{"type": "string", "description": strings.Repeat("d", 200_000)})},
		{"a type list with a large enum, 20x20 copies", fanOut(20, map[string]any{"type": []any{"string", "integer", "boolean", "number"}, "enum": strEnum})},
		{"recursion with a large description", recursive},
		{"allOf of one large definition, 40 times", allOf},
		{"a reference to a dropped keyword, 200 times", unkept},
	}
	for _, tc := range tests {
		for _, f := range Formats() {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				t.Parallel()
				e, err := Convert([]*registry.Tool{{Name: "mcp__s__t", InputSchema: tc.schema}}, f)
				if err != nil {
					t.Fatal(err)
				}
				out := mustMarshal(t, e.Tools)
				limit := outputCap(len(tc.schema))
				if len(out) > limit+1024 {
					t.Fatalf("the export takes %d bytes from a %d-byte schema; want at most %d", len(out), len(tc.schema), limit)
				}
				if f == Gemini {
					var noted bool
					for _, n := range e.Notes {
						noted = noted || strings.Contains(n.Detail, "bytes")
					}
					if !noted {
						t.Errorf("no note says where the schema was cut: %v", e.Notes)
					}
				}
			})
		}
	}
}

// TestRefsResolveInOutput: a reference the formats keep (OpenAI,
// Anthropic) must resolve in the exported schema, not only in the
// server's: one into a top-level keyword the export drops, or into an
// allOf the export merges, is inlined.
func TestRefsResolveInOutput(t *testing.T) {
	t.Parallel()
	schemas := []string{
		`{"type":"object","properties":{"a":{"$ref":"#/x"}},"x":{"type":"string"}}`,
		`{"allOf":[{"type":"object","properties":{"a":{"type":"string","description":"A."}}}],"properties":{"b":{"$ref":"#/allOf/0/properties/a"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/x","description":"Mine."}},"x":{"type":"object","description":"X.","properties":{"self":{"$ref":"#/x"},"d":{"$ref":"#/$defs/D"}}},"$defs":{"D":{"type":"integer"}}}`,
		`{"type":"string","x":{"type":"integer"},"not":{"$ref":"#/x"}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/x"}},"x":{"$ref":"#/y"},"y":{"$ref":"#/$defs/Z"},"$defs":{"Z":{"type":"boolean"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/title"}},"title":"T"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/x/items/0"}},"x":{"items":[{"type":"string"}]}}`,
	}
	for _, s := range schemas {
		for _, f := range jsonSchemaFormats {
			params, _, _ := convertOne(t, f, json.RawMessage(s))
			if bad := unresolvedRefs(params.(map[string]any)); len(bad) > 0 {
				t.Errorf("%s: %s: references that do not resolve in the export: %v\n%s", f, s, bad, mustMarshal(t, params))
			}
		}
	}
}

// unresolvedRefs lists the $refs of a JSON Schema (as exported for OpenAI
// or Anthropic) that do not resolve within it to a schema.
func unresolvedRefs(root map[string]any) []string {
	var bad []string
	var walk func(v any)
	walk = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, sub := range m {
			switch {
			case k == "$ref":
				s, _ := sub.(string)
				if t, _, ok := resolve(root, s); !ok || !isSchema(t) {
					bad = append(bad, fmt.Sprint(sub))
				}
			case k == "items" || contains(subschemaLists, k):
				if list, ok := sub.([]any); ok {
					for _, e := range list {
						walk(e)
					}
				} else {
					walk(sub)
				}
			case contains(subschemaMaps, k):
				for _, e := range mapOf(sub) {
					walk(e)
				}
			case contains(subschemaOne, k):
				walk(sub)
			}
		}
	}
	walk(root)
	return bad
}

// TestGeminiTypeListKeywords: the keywords of a schema with a type list
// that apply to no single type are kept, dropped or noted as in any other
// schema, and an explicit nullable is kept.
func TestGeminiTypeListKeywords(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"p":{"type":["string","integer"],"nullable":true,"default":"x","not":{"const":"y"},
		"description":"P.","title":"Tp","additionalProperties":false,"maxLength":3,"$comment":"c"}}}`
	params, _, notes := convertOne(t, Gemini, json.RawMessage(schema))
	want := `{"type":"OBJECT","properties":{"p":{"description":"P.","title":"Tp","nullable":true,
		"anyOf":[{"type":"STRING","maxLength":3},{"type":"INTEGER"}]}}}`
	if got, w := string(mustMarshal(t, params)), string(mustMarshal(t, decodeJSON(t, []byte(want)))); got != w {
		t.Errorf("parameters:\n got %s\nwant %s", got, w)
	}
	for _, n := range []string{"/properties/p/default dropped", "/properties/p/not dropped", "/properties/p/additionalProperties dropped",
		"/properties/p/$comment dropped", "/properties/p/type rewritten"} {
		if !contains(notes, n) {
			t.Errorf("no note %q: %v", n, notes)
		}
	}
}

// TestGeminiAnyOfMerge: when anyOf has one branch besides null, the branch
// is merged into the schema holding it; what conflicts with the holder's
// is noted, properties and required are joined.
func TestGeminiAnyOfMerge(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{
		"p":{"description":"Outer.","anyOf":[{"type":"string","description":"Inner.","maxLength":4},{"type":"null"}]},
		"q":{"type":"string","anyOf":[{"type":"integer"}]},
		"r":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"anyOf":[{"properties":{"b":{"type":"integer"},"a":{"type":"number"}},"required":["b"]}]}}}`
	params, _, notes := convertOne(t, Gemini, json.RawMessage(schema))
	want := `{"type":"OBJECT","properties":{
		"p":{"type":"STRING","description":"Outer.","maxLength":4,"nullable":true},
		"q":{"type":"STRING"},
		"r":{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER"}},"required":["a","b"]}}}`
	if got, w := string(mustMarshal(t, params)), string(mustMarshal(t, decodeJSON(t, []byte(want)))); got != w {
		t.Errorf("parameters:\n got %s\nwant %s", got, w)
	}
	for _, n := range []string{"/properties/p/anyOf/0/description dropped", "/properties/q/anyOf/0/type dropped",
		"/properties/r/anyOf/0/properties/a dropped"} {
		if !contains(notes, n) {
			t.Errorf("no note %q: %v", n, notes)
		}
	}
}

// TestToolCountLimit: an export holding more tools than the vendor
// documents it takes says so in one export-level note.
func TestToolCountLimit(t *testing.T) {
	t.Parallel()
	tools := func(n int) []*registry.Tool {
		var list []*registry.Tool
		for i := range n {
			list = append(list, &registry.Tool{Name: fmt.Sprintf("mcp__s__t%d", i), Server: "s"})
		}
		return list
	}
	tests := []struct {
		f    Format
		n    int
		note bool
	}{
		{OpenAI, 128, false}, {OpenAI, 129, true},
		{Gemini, 512, false}, {Gemini, 513, true},
		{Anthropic, 600, false}, {OpenAIResponses, 600, false}, // no documented limit
	}
	for _, tc := range tests {
		e, err := Convert(tools(tc.n), tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var over []Note
		for _, n := range e.Notes {
			if n.Change == OverLimit {
				over = append(over, n)
			}
		}
		if got := len(over) == 1; got != tc.note || len(over) > 1 {
			t.Errorf("%s with %d tools: over-limit notes %v, want one: %v", tc.f, tc.n, over, tc.note)
			continue
		}
		if tc.note {
			s := over[0].String()
			if over[0].Tool != "" || !strings.HasPrefix(s, "over-limit: ") || !strings.Contains(s, fmt.Sprint(tc.n)) {
				t.Errorf("%s: the note reads %q", tc.f, s)
			}
		}
	}
}

// TestNotesEscapeInvisible: server text quoted in a note cannot carry
// bidi, C1 or other control characters to the terminal.
func TestNotesEscapeInvisible(t *testing.T) {
	t.Parallel()
	evil := "a\u202eexe.txt\u2066\u0085\u009b31m\u200b\U000e0041\ue000b"
	schema := mustJSON(map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "string", "format": evil, "default": evil},
		"b": map[string]any{"enum": []any{1, evil}},
		"c": map[string]any{"type": []any{"string", evil}},
	}, "x-" + evil: true})
	for _, f := range Formats() {
		e, err := Convert([]*registry.Tool{{Name: "mcp__s__t", InputSchema: schema}}, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Notes) == 0 {
			t.Fatalf("%s: no notes", f)
		}
		for _, n := range e.Notes {
			for _, s := range []string{n.String(), n.Detail} {
				if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
					t.Errorf("%s: a note holds %U: %q", f, []rune(s[i:])[0], s)
				}
			}
		}
	}
	if got, want := compactJSON("x\u202ey\u0085\U000e0041"), `"x\u202ey\u0085\udb40\udc41"`; got != want {
		t.Errorf("compactJSON = %s, want %s", got, want)
	}
	// A note from elsewhere (a tool name, a detail) is escaped when printed.
	n := Note{Tool: "t\u202e", Pointer: "/a", Change: Dropped, Detail: "d\u0085"}
	if got, want := n.String(), `t\u202e: #/a: dropped: d\u0085`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

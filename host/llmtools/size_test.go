package llmtools

import (
	"encoding/json"
	"testing"
)

// TestConvertOutputCapFallback: a tool whose converted schema would still
// exceed its cap (here: an enum copied into each branch of a type list,
// beyond what the inlining budget foresees) gets a plain object schema.
func TestConvertOutputCapFallback(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}
	c := &converter{format: OpenAI, tool: "t", noted: map[Note]bool{}, maxBytes: 10}
	got := c.capped(schema, false)
	if want := `{"properties":{},"type":"object"}`; string(mustMarshal(t, got)) != want {
		t.Errorf("capped = %s, want %s", mustMarshal(t, got), want)
	}
	if len(c.notes) != 1 || c.notes[0].Pointer != "" || c.notes[0].Change != Dropped {
		t.Errorf("notes = %v", c.notes)
	}
	c = &converter{format: Gemini, tool: "t", noted: map[Note]bool{}, maxBytes: 10}
	if got := mustMarshal(t, c.capped(schema, true)); string(got) != `{"properties":{"input":{}},"required":["input"],"type":"OBJECT"}` {
		t.Errorf("capped, wrapped = %s", got)
	}
}

func TestJSONSize(t *testing.T) {
	t.Parallel()
	values := []string{`null`, `true`, `"a<b>&c\u2028\u0001\"\\é😀\b\f\t\r\n\u007f\u0085"`, `[1,2.5e10,"x",{}]`, `{"a":{"b":[]},"<":"\u00ff"}`, `{}`, `[]`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/b","description":"日本語"}},"$defs":{"b":{"enum":[1,"2",null,true]}}}`}
	for _, s := range values {
		v, _, err := normalize(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		want := len(mustMarshal(t, v))
		c := &converter{}
		if got := c.size(v); got != want {
			t.Errorf("size(%s) = %d, want %d", s, got, want)
		}
		if got, over := jsonSize(v, want); got != want || over {
			t.Errorf("jsonSize(%s, %d) = %d, %v", s, want, got, over)
		}
		if _, over := jsonSize(v, want-1); !over {
			t.Errorf("jsonSize(%s, %d) is not over", s, want-1)
		}
	}
	// Invalid UTF-8 is written as \ufffd.
	if got, _ := jsonSize("a\xffb", 100); got != len(`"a\ufffdb"`) {
		t.Errorf("jsonSize of invalid UTF-8 = %d", got)
	}
}

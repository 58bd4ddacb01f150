package intercept

import (
	"encoding/json"
	"testing"
)

// FuzzResultRewrite feeds an untrusted result (from an upstream) and an
// untrusted updatedMCPToolOutput (from a hook) to the rewrites of
// Response: they must not panic, and what they return is a JSON object.
func FuzzResultRewrite(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"hi"}],"_meta":{"a":1e400}}`, `"new"`)
	f.Add(`{"content":null}`, `[{"type":"text","text":"a"}]`)
	f.Add(`{"content":{}}`, `{"structuredContent":{}}`)
	f.Add(`[]`, `1`)
	f.Fuzz(func(t *testing.T, result, output string) {
		isObject := func(b []byte) bool {
			var m map[string]json.RawMessage
			return json.Unmarshal(b, &m) == nil && m != nil
		}
		if r, ok := appendText(json.RawMessage(result), []string{"ctx"}); ok && !isObject(r) {
			t.Fatalf("appendText(%s) = %s", result, r)
		}
		if r, ok := toolOutput(json.RawMessage(output)); ok && !isObject(r) {
			t.Fatalf("toolOutput(%s) = %s", output, r)
		}
		resultIsError(json.RawMessage(result))
	})
}

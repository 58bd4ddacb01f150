package intercept

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// MaxContext is the most characters of hooks' additionalContext (in all)
// and of one reason the engine passes on: Claude Code's cap.
const MaxContext = 10000

// capString returns s cut to at most n characters.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i]
}

// capContexts returns the contexts cut to MaxContext characters in all,
// in order; nil for none.
func capContexts(ctxs []string) []string {
	if len(ctxs) == 0 {
		return nil
	}
	out := make([]string, 0, len(ctxs))
	left := MaxContext
	for _, s := range ctxs {
		if left <= 0 {
			break
		}
		s = capString(s, left)
		left -= utf8.RuneCountInString(s)
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

type textItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// errorResult is a tools/call error result whose one text item is text.
func errorResult(text string) json.RawMessage {
	b, err := json.Marshal(struct {
		Content []textItem `json:"content"`
		IsError bool       `json:"isError"`
	}{[]textItem{{"text", text}}, true})
	if err != nil { // a struct of strings always marshals
		panic(err)
	}
	return b
}

// resultIsError reports whether the tools/call result says isError.
func resultIsError(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// decodeObject decodes a JSON object's members as given, so members the
// engine does not model (_meta, extensions) survive a rewrite byte for
// byte.
func decodeObject(b json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// appendText returns the tools/call result with one more text content
// item per text; false when result is not a JSON object (left as is).
func appendText(result json.RawMessage, texts []string) (json.RawMessage, bool) {
	m, ok := decodeObject(result)
	if !ok {
		return nil, false
	}
	var content []json.RawMessage
	if c, ok := m["content"]; ok && json.Unmarshal(c, &content) != nil {
		return nil, false
	}
	for _, t := range texts {
		b, err := json.Marshal(textItem{"text", t})
		if err != nil {
			return nil, false
		}
		content = append(content, b)
	}
	b, err := json.Marshal(content)
	if err != nil {
		return nil, false
	}
	m["content"] = b
	if b, err = json.Marshal(m); err != nil {
		return nil, false
	}
	return b, true
}

// toolOutput returns the tools/call result a hook's updatedMCPToolOutput
// stands for: a string is one text item, an array the content, an object
// the whole result (an object without content gets an empty one). false:
// none of those.
func toolOutput(p json.RawMessage) (json.RawMessage, bool) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return nil, false
	}
	switch p[0] {
	case '"':
		var s string
		if json.Unmarshal(p, &s) != nil {
			return nil, false
		}
		b, err := json.Marshal(struct {
			Content []textItem `json:"content"`
		}{[]textItem{{"text", s}}})
		return b, err == nil
	case '[':
		var content []json.RawMessage
		if json.Unmarshal(p, &content) != nil {
			return nil, false
		}
		if content == nil {
			content = []json.RawMessage{}
		}
		b, err := json.Marshal(struct {
			Content []json.RawMessage `json:"content"`
		}{content})
		return b, err == nil
	case '{':
		m, ok := decodeObject(p)
		if !ok {
			return nil, false
		}
		if _, ok := m["content"]; ok {
			return p, true
		}
		m["content"] = json.RawMessage("[]")
		b, err := json.Marshal(m)
		return b, err == nil
	}
	return nil, false
}

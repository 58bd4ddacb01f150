// Package jsonredact walks decoded JSON values (as encoding/json decodes
// into any, preferably with UseNumber) to find and mask regular expression
// matches in their strings: a helper for interceptor plugins (guard-regex
// uses it), also used by the host's secrets built-in. It reads untrusted
// input: values from clients, upstreams and plugins of any shape.
//
// Objects are walked in key order, so that "the first match" is the same
// on every run. Only string values are looked at, never object keys.
package jsonredact

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Mask is what a match is replaced with.
const Mask = "[REDACTED]"

// Find returns the JSON Pointer (RFC 6901) of the first string in v that
// one of res matches, with the index of the first expression that matches
// it; ok is false when none does. The root's pointer is "".
func Find(v any, res []*regexp.Regexp) (path string, i int, ok bool) {
	return findWith(v, res, walk)
}

// FindResult is Find over the text of an MCP result only (see
// RedactResult); the pointer is the string's within the result.
func FindResult(v any, res []*regexp.Regexp) (path string, i int, ok bool) {
	return findWith(v, res, walkResult)
}

func findWith(v any, res []*regexp.Regexp, w func(any, *[]string, visit) (any, bool)) (string, int, bool) {
	if len(res) == 0 {
		return "", 0, false
	}
	var p []string
	i := -1
	w(v, &p, func(s string) (string, bool) {
		for j, re := range res {
			if re.MatchString(s) {
				i = j
				return s, true
			}
		}
		return s, false
	})
	if i < 0 {
		return "", 0, false
	}
	return pointer(p), i, true
}

// Redact replaces every match of res in every string of v with mask and
// returns the new value and the number of replacements. It changes v's
// arrays and objects in place. Empty matches are left alone (an expression
// that can match nothing does not sprinkle masks between characters).
func Redact(v any, res []*regexp.Regexp, mask string) (any, int) {
	return redactWith(v, res, mask, walk)
}

// RedactResult redacts the text an MCP result carries and nothing else
// (not URIs, MIME types, names or _meta): a tool result's content[].text,
// content[].resource.text and every string of structuredContent; a
// prompt's messages[].content.text and .resource.text; a resource's
// contents[].text. It returns the result and the number of replacements,
// changing v in place.
func RedactResult(v any, res []*regexp.Regexp, mask string) (any, int) {
	return redactWith(v, res, mask, walkResult)
}

func redactWith(v any, res []*regexp.Regexp, mask string, w func(any, *[]string, visit) (any, bool)) (any, int) {
	if len(res) == 0 {
		return v, 0
	}
	n := 0
	v, _ = w(v, nil, func(s string) (string, bool) { return String(s, res, mask, &n), false })
	return v, n
}

// String replaces the non-empty matches of res in s with mask, adding the
// number of replacements to *n.
func String(s string, res []*regexp.Regexp, mask string, n *int) string {
	for _, re := range res {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if m == "" {
				return m
			}
			*n++
			return mask
		})
	}
	return s
}

// visit is called on a string; it returns the string's new value and
// whether the walk stops there.
type visit func(s string) (string, bool)

// walk calls f on every string of v, replacing each with f's result, until
// f stops the walk. When p is not nil the walk is in order (arrays by index,
// objects by key) and p holds the pointer tokens of the string it stopped
// at.
func walk(v any, p *[]string, f visit) (any, bool) {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i, e := range x {
			push(p, strconv.Itoa(i))
			var stop bool
			if x[i], stop = walk(e, p, f); stop {
				return v, true
			}
			pop(p)
		}
	case map[string]any:
		if p == nil { // no pointer wanted: any order will do
			for k, e := range x {
				var stop bool
				if x[k], stop = walk(e, p, f); stop {
					return v, true
				}
			}
			return v, false
		}
		for _, k := range sortedKeys(x) {
			push(p, k)
			var stop bool
			if x[k], stop = walk(x[k], p, f); stop {
				return v, true
			}
			pop(p)
		}
	}
	return v, false
}

// walkResult is walk over the text of an MCP result (see RedactResult).
func walkResult(v any, p *[]string, f visit) (any, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return v, false
	}
	// content[].text, content[].resource.text (tools/call)
	if stop := items(obj, "content", p, func(it any) bool { return content(it, p, f) }); stop {
		return v, true
	}
	// structuredContent, every string
	if sc, ok := obj["structuredContent"]; ok {
		push(p, "structuredContent")
		var stop bool
		if obj["structuredContent"], stop = walk(sc, p, f); stop {
			return v, true
		}
		pop(p)
	}
	// messages[].content.text, .resource.text (prompts/get)
	if stop := items(obj, "messages", p, func(m any) bool {
		mo, ok := m.(map[string]any)
		if !ok {
			return false
		}
		push(p, "content")
		if content(mo["content"], p, f) {
			return true
		}
		pop(p)
		return false
	}); stop {
		return v, true
	}
	// contents[].text (resources/read)
	if stop := items(obj, "contents", p, func(c any) bool { return text(c, p, f) }); stop {
		return v, true
	}
	return v, false
}

// items calls each on the elements of the array obj[key], with their
// pointer tokens pushed, until it returns true.
func items(obj map[string]any, key string, p *[]string, each func(any) bool) bool {
	arr, ok := obj[key].([]any)
	if !ok {
		return false
	}
	push(p, key)
	for i, it := range arr {
		push(p, strconv.Itoa(i))
		if each(it) {
			return true
		}
		pop(p)
	}
	pop(p)
	return false
}

// content visits one content item's text, then its embedded resource's.
func content(it any, p *[]string, f visit) bool {
	o, ok := it.(map[string]any)
	if !ok {
		return false
	}
	if text(o, p, f) {
		return true
	}
	push(p, "resource")
	if text(o["resource"], p, f) {
		return true
	}
	pop(p)
	return false
}

// text visits the "text" member of an object.
func text(v any, p *[]string, f visit) bool {
	o, ok := v.(map[string]any)
	if !ok {
		return false
	}
	s, ok := o["text"].(string)
	if !ok {
		return false
	}
	push(p, "text")
	ns, stop := f(s)
	o["text"] = ns
	if stop {
		return true
	}
	pop(p)
	return false
}

func push(p *[]string, t string) {
	if p != nil {
		*p = append(*p, t)
	}
}

func pop(p *[]string) {
	if p != nil {
		*p = (*p)[:len(*p)-1]
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pointer joins reference tokens into a JSON Pointer, escaping '~' and '/'.
func pointer(tokens []string) string {
	var b strings.Builder
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, t := range tokens {
		b.WriteByte('/')
		esc.WriteString(&b, t)
	}
	return b.String()
}

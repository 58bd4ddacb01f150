package jsonredact

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func res(exprs ...string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, e := range exprs {
		out = append(out, regexp.MustCompile(e))
	}
	return out
}

func TestFind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json string
		res        []string
		path       string
		i          int
		ok         bool
	}{
		{"root string", `"drop table x"`, []string{`(?i)drop\s+table`}, "", 0, true},
		{"nested, keys in order", `{"b":{"z":"ok","y":"rm -rf /"},"a":["fine",1,"DROP TABLE"]}`, []string{`rm -rf`, `(?i)drop\s+table`}, "/a/2", 1, true},
		{"second expression first", `{"q":"rm -rf /"}`, []string{`nomatch`, `rm -rf`}, "/q", 1, true},
		{"escaped key", `{"a/b~c":["x","secret"]}`, []string{`secret`}, "/a~1b~0c/1", 0, true},
		{"keys are not looked at", `{"secret":"value"}`, []string{`secret`}, "", 0, false},
		{"numbers are not strings", `{"n":12345}`, []string{`123`}, "", 0, false},
		{"no match", `{"q":"hello"}`, []string{`bye`}, "", 0, false},
		{"no expressions", `{"q":"hello"}`, nil, "", 0, false},
		{"null", `null`, []string{`.`}, "", 0, false},
	}
	for _, tt := range tests {
		path, i, ok := Find(decode(t, tt.json), res(tt.res...))
		if path != tt.path || i != tt.i || ok != tt.ok {
			t.Errorf("%s: Find = %q, %d, %v; want %q, %d, %v", tt.name, path, i, ok, tt.path, tt.i, tt.ok)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json string
		res        []string
		want       string
		n          int
	}{
		{"every string", `{"a":"key AKIA1234567890ABCDEF here","b":["AKIA1234567890ABCDEF",{"c":"x"}],"n":1.50}`, []string{`AKIA[0-9A-Z]{16}`}, `{"a":"key [REDACTED] here","b":["[REDACTED]",{"c":"x"}],"n":1.50}`, 2},
		{"several expressions, several matches", `"a1 b22 a3"`, []string{`a\d`, `b\d+`}, `"[REDACTED] [REDACTED] [REDACTED]"`, 3},
		{"empty matches are left alone", `"abc"`, []string{`x*`}, `"abc"`, 0},
		{"nothing to do", `{"a":"b"}`, []string{`z`}, `{"a":"b"}`, 0},
	}
	for _, tt := range tests {
		v, n := Redact(decode(t, tt.json), res(tt.res...), Mask)
		if got := encode(t, v); got != tt.want || n != tt.n {
			t.Errorf("%s: Redact = %s, %d; want %s, %d", tt.name, got, n, tt.want, tt.n)
		}
	}
}

func TestRedactResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, want string
		n                int
		path             string
	}{
		{"tool result: text, embedded resource, structuredContent; not uri, mimeType, _meta or other items",
			`{"content":[{"type":"text","text":"tok=sk-1"},{"type":"resource","resource":{"uri":"file:///sk-1","mimeType":"text/plain","text":"sk-1"}},{"type":"image","data":"sk-1"}],"structuredContent":{"k":["sk-1"],"n":1},"_meta":{"m":"sk-1"},"isError":false}`,
			`{"_meta":{"m":"sk-1"},"content":[{"text":"tok=[REDACTED]","type":"text"},{"resource":{"mimeType":"text/plain","text":"[REDACTED]","uri":"file:///sk-1"},"type":"resource"},{"data":"sk-1","type":"image"}],"isError":false,"structuredContent":{"k":["[REDACTED]"],"n":1}}`,
			3, "/content/0/text"},
		{"structuredContent a string", `{"structuredContent":"sk-1"}`, `{"structuredContent":"[REDACTED]"}`, 1, "/structuredContent"},
		{"prompt messages", `{"messages":[{"role":"user","content":{"type":"text","text":"sk-1"}},{"role":"user","content":{"type":"resource","resource":{"uri":"u","text":"x sk-1"}}}]}`,
			`{"messages":[{"content":{"text":"[REDACTED]","type":"text"},"role":"user"},{"content":{"resource":{"text":"x [REDACTED]","uri":"u"},"type":"resource"},"role":"user"}]}`, 2, "/messages/0/content/text"},
		{"resource contents", `{"contents":[{"uri":"sk-1","blob":"sk-1"},{"uri":"u","text":"sk-1"}]}`, `{"contents":[{"blob":"sk-1","uri":"sk-1"},{"text":"[REDACTED]","uri":"u"}]}`, 1, "/contents/1/text"},
		{"odd shapes are left alone", `{"content":"sk-1","messages":[1,"sk-1",{"content":"sk-1"}],"contents":{"text":"sk-1"}}`, `{"content":"sk-1","contents":{"text":"sk-1"},"messages":[1,"sk-1",{"content":"sk-1"}]}`, 0, ""},
		{"not an object", `["sk-1"]`, `["sk-1"]`, 0, ""},
	}
	for _, tt := range tests {
		path, _, ok := FindResult(decode(t, tt.json), res(`sk-\d`))
		if path != tt.path || ok != (tt.n > 0) {
			t.Errorf("%s: FindResult = %q, %v; want %q", tt.name, path, ok, tt.path)
		}
		v, n := RedactResult(decode(t, tt.json), res(`sk-\d`), Mask)
		if got := encode(t, v); got != tt.want || n != tt.n {
			t.Errorf("%s: RedactResult = %s, %d; want %s, %d", tt.name, got, n, tt.want, tt.n)
		}
	}
}

// FuzzRedact: any JSON, redacted, still encodes; no match of the
// expressions is left in what was redacted; nothing changes when nothing
// was replaced; Find agrees with Redact.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{`{"a":"secret 12345"}`, `{"content":[{"type":"text","text":"secret"}],"structuredContent":{"x":["999"]}}`, `[1,"2",{"3":null}]`, `"x"`, `{"messages":[{"content":{"text":"secret"}}],"contents":[{"text":"1234"}]}`} {
		f.Add([]byte(s))
	}
	exprs := res(`[0-9]{3,}`, `secret`)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return
		}
		orig, _ := json.Marshal(v)
		for _, result := range []bool{false, true} {
			var in any
			d := json.NewDecoder(bytes.NewReader(orig))
			d.UseNumber()
			d.Decode(&in)
			var out any
			var n int
			var found bool
			if result {
				_, _, found = FindResult(in, exprs)
				out, n = RedactResult(in, exprs, Mask)
				if _, _, ok := FindResult(out, exprs); ok {
					t.Fatalf("a match is left after RedactResult of %s", orig)
				}
			} else {
				_, _, found = Find(in, exprs)
				out, n = Redact(in, exprs, Mask)
				if _, _, ok := Find(out, exprs); ok {
					t.Fatalf("a match is left after Redact of %s", orig)
				}
			}
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatalf("the redacted value does not encode: %v", err)
			}
			if found != (n > 0) {
				t.Fatalf("Find says %v, Redact replaced %d in %s", found, n, orig)
			}
			if n == 0 && !reflect.DeepEqual(b, orig) {
				t.Fatalf("nothing replaced, but %s became %s", orig, b)
			}
		}
	})
}

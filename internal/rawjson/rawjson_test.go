package rawjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		keys    []string
		vals    []string
		wantErr error
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
			keys: []string{"jsonrpc", "id", "method", "params"},
			vals: []string{`"2.0"`, `1`, `"tools/call"`, `{"name":"x","arguments":{"a":[1,2,{"b":null}]}}`}},
		{in: " { \"a\" : -1.5e+3 , \"b\":\"q\\\"\\u00e9\" }\n", keys: []string{"a", "b"}, vals: []string{`-1.5e+3`, `"q\"\u00e9"`}},
		{in: `{}`, keys: nil},
		{in: `{"params":{"name":"ok"},"Params":{}}`, wantErr: ErrDuplicate},
		{in: `{"a":1,"a":2}`, wantErr: ErrDuplicate},
		{in: `{"paramſ":1}`, wantErr: ErrSyntax}, // non-ASCII names are refused (ſ folds to s)
		{in: `{"p\u0061rams":1}`, wantErr: ErrSyntax},
		{in: `[1,2]`, wantErr: ErrNotObject},
		{in: `{"a":1}{"b":2}`, wantErr: ErrSyntax},
		{in: "\x00\xff{}", wantErr: ErrNotObject},
		{in: `{"a":01}`, wantErr: ErrSyntax},
		{in: `{"a":tru}`, wantErr: ErrSyntax},
		{in: `{"a":"\x"}`, wantErr: ErrSyntax},
		{in: `{"a":[1,]}`, wantErr: ErrSyntax},
		{in: `{"a":1,}`, wantErr: ErrSyntax},
		{in: `{"a" 1}`, wantErr: ErrSyntax},
		{in: `{"a":"` + "\x01" + `"}`, wantErr: ErrSyntax},
		{in: `{"a":` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + `}`, wantErr: ErrTooDeep},
	}
	for _, tc := range tests {
		ms, err := Members(nil, []byte(tc.in))
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("Members(%.40q) error = %v, want %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if len(ms) != len(tc.keys) {
			t.Fatalf("Members(%q) = %d members, want %d", tc.in, len(ms), len(tc.keys))
		}
		for i, m := range ms {
			if string(m.Key) != tc.keys[i] || string(m.Value) != tc.vals[i] || tc.in[m.Start:m.End] != tc.vals[i] {
				t.Errorf("member %d = %q: %q, want %q: %q", i, m.Key, m.Value, tc.keys[i], tc.vals[i])
			}
		}
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`"plain"`: "plain", `"esc\"aped\n"`: "esc\"aped\n", `"\u00e9"`: "é"} {
		if got, ok := String([]byte(in)); !ok || got != want {
			t.Errorf("String(%s) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{`1`, `"unterminated`, `null`, `""x`} {
		if _, ok := String([]byte(in)); ok {
			t.Errorf("String(%s) accepted", in)
		}
	}
}

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		v, s string
		want bool
	}{
		{`"complete"`, "complete", true},
		{`"compl\u0065te"`, "complete", true},
		{`"complete "`, "complete", false},
		{`"input_required"`, "complete", false},
		{`complete`, "complete", false},
		{`"complete`, "complete", false},
		{`""`, "", true},
		{`"\"`, `"`, false}, // (not a whole string)
	} {
		if got := Is([]byte(tc.v), tc.s); got != tc.want {
			t.Errorf("Is(%s, %q) = %v, want %v", tc.v, tc.s, got, tc.want)
		}
	}
	v := []byte(`"complete"`)
	if n := testing.AllocsPerRun(100, func() { Is(v, "complete") }); n != 0 {
		t.Errorf("Is allocates %v times for an unescaped string", n)
	}
}

// FuzzMembers: whatever Members accepts, encoding/json accepts too and
// decodes to the same members; no panic on any input.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{}}}`))
	f.Add([]byte(`{"params":{"name":"ok","Name":"denied"}}`))
	f.Add([]byte(`{"a":1}{"b":2}`))
	f.Add([]byte("\x00\xff{}"))
	f.Add([]byte(`{"a":[1,{"b":"\u00e9\ud83d\ude00"}],"c":-0.5E-7}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := Members(nil, b)
		if err != nil {
			return
		}
		var ref map[string]json.RawMessage
		if jerr := json.Unmarshal(b, &ref); jerr != nil {
			t.Fatalf("Members accepted what encoding/json rejects (%v): %q", jerr, b)
		}
		if len(ref) != len(ms) {
			t.Fatalf("%d members, encoding/json found %d: %q", len(ms), len(ref), b)
		}
		for _, m := range ms {
			v, ok := ref[string(m.Key)]
			if !ok {
				t.Fatalf("member %q not found by encoding/json", m.Key)
			}
			var a, c any
			if json.Unmarshal(v, &a) != nil || json.Unmarshal(m.Value, &c) != nil {
				t.Fatalf("member %q value does not decode", m.Key)
			}
		}
	})
}

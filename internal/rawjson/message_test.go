package rawjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestIDKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
		err  bool
	}{
		{in: `50`, want: "n50"},
		{in: `50.0`, want: "n50"},
		{in: `5e1`, want: "n50"},
		{in: `500e-1`, want: "n50"},
		{in: `-0`, want: "n0"},
		{in: `"50"`, want: "s50"},
		{in: `"\u0035\u0030"`, want: "s50"},
		{in: `50.5`, err: true},
		{in: `9007199254740993`, err: true},
		{in: `1e300`, err: true},
		{in: `null`, err: true},
		{in: `{}`, err: true},
		{in: `true`, err: true},
	}
	for _, tc := range tests {
		got, err := IDKey([]byte(tc.in))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("IDKey(%s) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// FuzzMessage holds Message, Elements and IDKey to encoding/json: what
// Message accepts is one valid JSON object, and an id IDKey accepts is a
// string or an integral number within ±2^53, keyed by its value.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1,"ProgressToken":2}}}`,
		`{"paramſ":1}`, `{"a":1}{"b":2}`, "\x00\xff{}", `[{"id":1},{"id":2}]`, `{"id":5e1}`, `{"id":"\u0035"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, _, err := Message(nil, nil, b)
		if err == nil {
			var v map[string]json.RawMessage
			if json.Unmarshal(b, &v) != nil {
				t.Fatalf("Message accepted invalid JSON %q", b)
			}
			if id, ok := Find(ms, "id"); ok {
				key, err := IDKey(id.Value)
				var x any
				if json.Unmarshal(id.Value, &x) != nil {
					t.Fatalf("id %q is not JSON", id.Value)
				}
				switch x := x.(type) {
				case string:
					if err != nil || key != "s"+x {
						t.Fatalf("IDKey(%s) = %q, %v", id.Value, key, err)
					}
				case float64:
					if ok := x == math.Trunc(x) && math.Abs(x) <= 1<<53; ok != (err == nil) {
						t.Fatalf("IDKey(%s) = %q, %v", id.Value, key, err)
					}
				default:
					if !errors.Is(err, ErrInvalidID) {
						t.Fatalf("IDKey(%s) = %q, %v; want ErrInvalidID", id.Value, key, err)
					}
				}
			}
		}
		if elems, err := Elements(nil, b); err == nil {
			var v []json.RawMessage
			if json.Unmarshal(b, &v) != nil || len(v) != len(elems) {
				t.Fatalf("Elements accepted %q as %d elements", b, len(elems))
			}
		}
	})
}

// TestManyMembersAreLinear: a 4 MiB object of distinct names (a body any
// client with the token may send) is scanned with a linear number of name
// comparisons; a late case-variant duplicate is still found.
func TestManyMembersAreLinear(t *testing.T) {
	t.Parallel()
	var b []byte
	b = append(b, `{"jsonrpc":"2.0","id":1,"method":"x","params":{`...)
	const n = 200000
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, fmt.Sprintf(`"k%d":1`, i)...)
	}
	dup := append(append([]byte(nil), b...), `,"K7":2}}`...)
	b = append(b, `}}`...)
	if _, _, err := Message(nil, nil, b); err != nil {
		t.Fatalf("distinct names: %v", err)
	}
	if _, _, err := Message(nil, nil, dup); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("late case-variant duplicate: %v", err)
	}
}

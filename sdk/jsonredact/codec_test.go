package jsonredact

import "testing"

// TestCodec: numbers come back as written, nothing is HTML-escaped, and
// data after the value or invalid JSON is an error.
func TestCodec(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{in: `{"n":1.50,"big":12345678901234567890,"s":"<a&b>"}`, want: `{"big":12345678901234567890,"n":1.50,"s":"<a&b>"}`},
		{in: ` [1, "x"] `, want: `[1,"x"]`},
		{in: `{"a":1} {"b":2}`, err: true},
		{in: `{"a":`, err: true},
		{in: ``, err: true},
	} {
		v, err := Decode([]byte(tc.in))
		if tc.err {
			if err == nil {
				t.Errorf("Decode(%q): no error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("Decode(%q): %v", tc.in, err)
			continue
		}
		out, err := Encode(v)
		if err != nil || string(out) != tc.want {
			t.Errorf("Encode(Decode(%q)) = %s, %v; want %s", tc.in, out, err, tc.want)
		}
	}
}

package conn

import (
	"errors"
	"mime"
	"testing"
)

// parsedMediaType is what mime.ParseMediaType makes of v's media type, as
// the relay read it before mediaType: the type when only the parameters
// are invalid, "" when the type is.
func parsedMediaType(v string) string {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return ""
	}
	return mt
}

// TestMediaType: mediaType reads a Content-Type as mime.ParseMediaType
// does.
func TestMediaType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"application/json", "application/json"},
		{"text/event-stream", "text/event-stream"},
		{"application/json; charset=utf-8", "application/json"},
		{" Text/Event-Stream ;charset=utf-8", "text/event-stream"},
		{"application/json; charset", "application/json"}, // (an invalid parameter only)
		{"", ""},
		{"application", "application"},
		{"application/", ""},
		{"/json", ""},
		{"application/json/x", ""},
		{"application / json", ""},
		{"application/js\"on", ""},
		{"appl\x7fication/json", ""},
		{"text/html", "text/html"},
	} {
		if got := mediaType(tc.in); got != tc.want {
			t.Errorf("mediaType(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := parsedMediaType(tc.in); got != tc.want {
			t.Errorf("mime.ParseMediaType(%q) = %q, want %q (the test's expectation is wrong)", tc.in, got, tc.want)
		}
	}
}

// FuzzMediaType: mediaType agrees with mime.ParseMediaType on any
// Content-Type a server sends.
func FuzzMediaType(f *testing.F) {
	for _, s := range []string{"application/json", "text/event-stream; charset=utf-8", "A/B;c=d", "a/b/c", " x/y ", "a\x80/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := mediaType(v), parsedMediaType(v); got != want {
			t.Fatalf("mediaType(%q) = %q, mime.ParseMediaType: %q", v, got, want)
		}
	})
}

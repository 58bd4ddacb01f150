package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckAuthorizationURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://as.example/authorize?client_id=c&state=s&code_challenge=x", true},
		{"http://127.0.0.1:8080/authorize", true},
		{"http://localhost/authorize", true},
		{"http://[::1]:9/a", true},
		{"http://as.example/authorize", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"data:text/html,<script>", false},
		{"vbscript:msgbox", false},
		{"https://x/$(touch /tmp/p)", false}, // a space: not a URI character
		{"https://x/`id`", false},
		{"--upload-pack=x", false},
		{"-https://x", false},
		{"https://x/\x00", false},
		{"https://x/\nfoo", false},
		{"https:///nohost", false},
		{"", false},
	} {
		err := CheckAuthorizationURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAuthorizationURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrUnsafeURL) {
			t.Errorf("%q: error %v is not ErrUnsafeURL", tc.url, err)
		}
	}
}

// FuzzCheckAuthorizationURL: whatever passes starts with https:// or http://,
// has no space, control character or leading '-'.
func FuzzCheckAuthorizationURL(f *testing.F) {
	f.Add("https://as.example/a")
	f.Add("file:///etc/passwd")
	f.Add("http://127.0.0.1/x")
	f.Fuzz(func(t *testing.T, s string) {
		if CheckAuthorizationURL(s) != nil {
			return
		}
		if l := strings.ToLower(s); !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://") {
			t.Fatalf("accepted %q", s)
		}
		for _, r := range s {
			if r <= ' ' || r == 0x7f {
				t.Fatalf("accepted %q with %q", s, r)
			}
		}
	})
}

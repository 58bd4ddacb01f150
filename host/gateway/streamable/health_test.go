package streamable

import "testing"

// TestBaseNames: /readyz names files by base name: no absolute path, Unix
// or Windows, survives; URLs and relative names are left alone.
func TestBaseNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/home/alice/.config/mcphost/config.hcl:3:5: Invalid gateway url", "config.hcl:3:5: Invalid gateway url"},
		{`C:\Users\alice\AppData\mcphost\config.hcl:3:5: Invalid url`, "config.hcl:3:5: Invalid url"},
		{`\\server\share\mcphost.hcl:1:1: x`, "mcphost.hcl:1:1: x"},
		{`plugin directory "/opt/mcphost/plugins" is writable by others`, `plugin directory "plugins" is writable by others`},
		{"starting a: exec /usr/local/bin/weather-mcp: no such file", "starting a: exec weather-mcp: no such file"},
		{"two: /a/b/c.hcl and (/d/e/f.hcl)", "two: c.hcl and (f.hcl)"},
		{"dir=/var/lib/mcphost/", "dir=mcphost"},
		{"fetching https://as.example/jwks: HTTP 500", "fetching https://as.example/jwks: HTTP 500"},
		{"relative/path.hcl:1:1: x and/or y", "relative/path.hcl:1:1: x and/or y"},
		{"naming", "naming"},
	}
	for _, tc := range tests {
		if got := baseNames(tc.in); got != tc.want {
			t.Errorf("baseNames(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

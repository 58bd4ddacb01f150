package cli

import "testing"

// TestConcerns: a change of a configuration file, of a file in a watched
// directory, or of the symlink a Kubernetes ConfigMap volume swaps beside
// a configuration file, reloads; anything else does not.
func TestConcerns(t *testing.T) {
	watch := []string{"/etc/mcphost/config.hcl", "/home/u/.config/mcphost/plugins"}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/etc/mcphost/config.hcl", true},
		{"/etc/mcphost/..data", true},
		{"/etc/mcphost/..2026_11_23_07_00_00.123/config.hcl", false},
		{"/etc/mcphost/other.hcl", false},
		{"/etc/..data", false},
		{"/home/u/.config/mcphost/plugins/ws", true},
	} {
		if got := concerns(watch, tc.path); got != tc.want {
			t.Errorf("concerns(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

package cli

import "testing"

// TestMaskDiffLine: every diff line is masked, whichever side; a value
// that only refers to an environment variable stays (review 37a finding 1).
func TestMaskDiffLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`+        "Authorization": "Bearer ${env:MCPHOST_SERVE_TOKEN}"`, `+        "Authorization": "Bearer ${env:MCPHOST_SERVE_TOKEN}"`},
		{`+        "Authorization": "Bearer ${MCPHOST_SERVE_TOKEN}"`, `+        "Authorization": "Bearer ${MCPHOST_SERVE_TOKEN}"`},
		{`-        "Authorization": "Bearer tok-8c1f0e5d2b7a4c39"`, `-        "Authorization": "[REDACTED]"`},
		{`+    "gh": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz012345"}},`, `+    "gh": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "[REDACTED]"}},`},
		{`+{"mcpServers":{"gh":{"env":{"API_KEY":"s3cr3t"}},"mcphost":{"headers":{"Authorization":"Bearer ${env:X}"}}}}`, `+{"mcpServers":{"gh":{"env":{"API_KEY":"[REDACTED]"}},"mcphost":{"headers":{"Authorization":"[REDACTED]"}}}}`},
		{`+      "command": "/usr/bin/mcphost",`, `+      "command": "/usr/bin/mcphost",`},
		{`+bearer_token_env_var = "MCPHOST_SERVE_TOKEN"`, `+bearer_token_env_var = "MCPHOST_SERVE_TOKEN"`},
	} {
		if got := maskDiffLine(tt.in); got != tt.want {
			t.Errorf("maskDiffLine(%s)\n = %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestHTTPPathWarning(t *testing.T) {
	for in, warn := range map[string]bool{"http://127.0.0.1:8080": true, "http://h:1/": true, "http://h:1/mcp": false, "https://gw.example/x/mcp": false} {
		if got := httpPathWarning(in) != ""; got != warn {
			t.Errorf("httpPathWarning(%s) = %v, want %v", in, got, warn)
		}
	}
}

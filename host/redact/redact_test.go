package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Authorization: Bearer eyJhbGciOi.abc-def_ghi", "Authorization: " + Mask},
		{`{"authorization":"Basic dXNlcjpwYXNz"}`, `{"authorization":"` + Mask + `"}`},
		{"got bearer s3cr3t-TOKEN from helper", "got bearer " + Mask + " from helper"},
		{`{"access_token":"at-1","refresh_token":"rt-2","expires_in":3600}`, `{"access_token":"` + Mask + `","refresh_token":"` + Mask + `","expires_in":3600}`},
		{"https://as/callback?code=AUTHCODE&state=xyz", "https://as/callback?code=" + Mask + "&state=xyz"},
		{"client_secret=hunter2 code_verifier=abc", "client_secret=" + Mask + " code_verifier=" + Mask},
		{"Cookie: sid=1; other=2", "Cookie: " + Mask + "; other=2"},
		{"Mcp-Session-Id: 0123456789abcdef", "Mcp-Session-Id: " + Mask},
		{"connected to wss://example.com/mcp", "connected to wss://example.com/mcp"},
		{"decoding the code path", "decoding the code path"},
	}
	for _, tc := range tests {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLoggerScrubsMessagesArgsAndChildren(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := Logger(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace}))
	l.Named("plugin.x").With("password", "pw1").Error("token refresh failed: Bearer abc123",
		"refresh_token", "rt-secret", "url", "https://x/cb?code=c0de", "err", errors.New("client_secret=s3"))
	out := buf.String()
	for _, secret := range []string{"pw1", "abc123", "rt-secret", "c0de", "s3\n", "=s3 "} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "plugin.x") || !strings.Contains(out, Mask) {
		t.Errorf("log lost its shape:\n%s", out)
	}
}

package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// TestServeBannerKeepsSecrets: the HTTP serve banner prints the bearer token
// only when it generated it; a token the user supplied in
// MCPHOST_SERVE_TOKEN is never echoed. A crashed server's stderr in the
// banner is scrubbed like everywhere else.
func TestServeBannerKeepsSecrets(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.hcl")
	os.WriteFile(filepath.Join(dir, "stderr.txt"), []byte("password=hunter2 token=ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6\n"), 0o600)
	os.WriteFile(cfg, []byte(`server "leaky" {
  command = "sh"
  args    = ["-c", "cat `+filepath.Join(dir, "stderr.txt")+` >&2; exit 3"]
}
`), 0o600)
	t.Setenv("HOME", dir)
	t.Setenv("MCPHOST_CONFIG_DIR", filepath.Join(dir, "config"))
	t.Setenv("MCPHOST_MANAGED_CONFIG", filepath.Join(dir, "managed.hcl"))

	tests := []struct {
		name      string
		envToken  string
		wantToken *regexp.Regexp
	}{
		{"token from the environment", "CANARY-serve-token-0123456789", regexp.MustCompile(`(?m)^  Authorization: Bearer <the token in \$MCPHOST_SERVE_TOKEN>$`)},
		{"generated token", "", regexp.MustCompile(`(?m)^  Authorization: Bearer [0-9a-f]{64}$`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MCPHOST_SERVE_TOKEN", tc.envToken)
			out := serveBanner(t, "--config", cfg, "serve", "--http", "127.0.0.1:0")
			if !tc.wantToken.MatchString(out) {
				t.Errorf("banner lacks %s:\n%s", tc.wantToken, out)
			}
			for _, secret := range []string{"CANARY", "hunter2"} {
				if strings.Contains(out, secret) {
					t.Errorf("banner shows %q:\n%s", secret, out)
				}
			}
			if !strings.Contains(out, "password=[REDACTED]") {
				t.Errorf("banner lacks the scrubbed stderr:\n%s", out)
			}
		})
	}
}

// TestServeTokenTooWeak: an MCPHOST_SERVE_TOKEN too short to resist
// guessing, or one a header cannot carry, stops serve before it listens,
// with an error that says what to do and does not quote the token.
func TestServeTokenTooWeak(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.hcl")
	os.WriteFile(cfg, []byte(""), 0o600)
	t.Setenv("HOME", dir)
	t.Setenv("MCPHOST_CONFIG_DIR", filepath.Join(dir, "config"))
	t.Setenv("MCPHOST_MANAGED_CONFIG", filepath.Join(dir, "managed.hcl"))
	tests := []struct {
		name, token, want string
	}{
		{"one character", "Q", "it has 1 characters, at least 16 are required"},
		{"fifteen characters", "QQQQQQQQQQQQQQQ", "it has 15 characters"},
		{"a space", "QQQQQQQQ QQQQQQQQ", "a space, control or non-ASCII character"},
		{"non-ASCII", "QQQQQQQQQQQQQQQé", "non-ASCII"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MCPHOST_SERVE_TOKEN", tc.token)
			var stdout, stderr syncbuf.Buffer
			code := Run(context.Background(), []string{"--config", cfg, "serve", "--http", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code == 0 || !strings.Contains(out, tc.want) || !strings.Contains(out, "openssl rand -hex 32") {
				t.Fatalf("exit %d, output:\n%s\nwant an error about %q", code, out, tc.want)
			}
			if strings.Contains(out, tc.token) {
				t.Errorf("the error quotes the token:\n%s", out)
			}
			if strings.Contains(out, "Serving") {
				t.Errorf("served anyway:\n%s", out)
			}
		})
	}
}

// serveBanner runs the CLI until it has printed its serve banner, then stops
// it and returns everything it wrote.
func serveBanner(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, strings.NewReader(""), &stdout, &stderr) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stdout.String(), "Authorization: Bearer") {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d:\n%s\n%s", code, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner after 10s:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	return stdout.String() + stderr.String()
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testing/fakeas"
)

// browserStderr is stderr for a CLI run: it keeps what is written and,
// like a user's browser, follows every login URL printed on it.
type browserStderr struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line []byte
}

func (w *browserStderr) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		l := strings.TrimSpace(string(w.line[:i]))
		w.line = w.line[i+1:]
		if strings.HasPrefix(l, "http://127.0.0.1:") && strings.Contains(l, "/authorize?") {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
	}
}

func (w *browserStderr) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runCLI runs the CLI with dir as its config directory and home, the way
// Run does, with stderr followed by a browser.
func runCLI(ctx context.Context, dir string, args ...string) (code int, stdout, stderr string) {
	var out bytes.Buffer
	errw := &browserStderr{}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: errw, workDir: dir,
		lookupEnv: func(k string) (string, bool) {
			switch k {
			case "MCPHOST_CONFIG_DIR", "HOME":
				return dir, true
			case "MCPHOST_MANAGED_CONFIG":
				return filepath.Join(dir, "managed.hcl"), true
			}
			return "", false
		}}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(errw)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(errw, "Error: %v\n", err)
		code = exitError
	}
	return code, out.String(), errw.String()
}

func writeConfig(t *testing.T, hcl string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.hcl"), []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAuthLoginSaysWhatFailedOnce: `mcphost auth login` against an
// authorization server whose answer fails the RFC 9207 check runs the
// browser flow once, sends no token request, and says what failed, without
// telling the user to run the command they are running.
func TestAuthLoginSaysWhatFailedOnce(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	as.Callback = func(q url.Values) { q.Set("iss", "https://evil.example") }
	dir := writeConfig(t, fmt.Sprintf("server \"prot\" {\n  transport = \"http\"\n  url = %q\n  oauth {\n    allow_loopback = true\n  }\n}\n", as.URL()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, _, stderr := runCLI(ctx, dir, "auth", "login", "prot", "--no-browser")
	if code == 0 {
		t.Fatalf("login succeeded:\n%s", stderr)
	}
	if n := len(as.Requests("/authorize")); n != 1 {
		t.Errorf("%d authorization requests, want 1", n)
	}
	if n := len(as.Requests("/token")); n != 0 {
		t.Errorf("%d token requests, want 0", n)
	}
	if n := strings.Count(stderr, "open this URL"); n != 1 {
		t.Errorf("login URL shown %d times, want 1", n)
	}
	if !strings.Contains(stderr, "not from the expected issuer") || strings.Contains(stderr, "auth login") {
		t.Errorf("stderr does not say what failed, or advises to log in:\n%s", stderr)
	}
}

// TestAuthStatusMachineGrant: after `mcphost auth login` of a
// client-credentials server, status does not claim it is logged out: the
// grant needs no login, tokens come on demand.
func TestAuthStatusMachineGrant(t *testing.T) {
	t.Parallel()
	as := fakeas.New()
	defer as.Close()
	dir := writeConfig(t, fmt.Sprintf(`
server "svc" {
  transport = "http"
  url = %q
  oauth {
    grant = "client_credentials"
    client_id = "svc"
    client_secret = "s3cret"
    allow_loopback = true
  }
}
`, as.URL()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, out, stderr := runCLI(ctx, dir, "auth", "login", "svc")
	if code != 0 || !strings.Contains(out, "needs no login") {
		t.Fatalf("login: %d\n%s%s", code, out, stderr)
	}
	if n := len(as.Requests("/token")); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	code, out, stderr = runCLI(ctx, dir, "auth", "status")
	if code != 0 || !regexp.MustCompile(`(?m)^svc\s+oauth \(client_credentials\)\s+not needed \(token on demand\)`).MatchString(out) {
		t.Errorf("status:\n%s%s", out, stderr)
	}
	code, out, _ = runCLI(ctx, dir, "auth", "status", "--json")
	if code != 0 || !strings.Contains(out, `"on_demand": true`) {
		t.Errorf("status --json:\n%s", out)
	}
	if strings.Contains(out+stderr, "s3cret") {
		t.Error("the client secret was printed")
	}
}

package headershelper_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/plugins/headers-helper/headershelper"
	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "helper.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHelper runs real helper commands through the real gRPC shims.
func TestHelper(t *testing.T) {
	t.Parallel()
	h := sdktest.Headers(t, &sdk.ServeOpts{Info: headershelper.Info, Headers: &headershelper.Helper{Timeout: 500 * time.Millisecond}})
	tests := []struct {
		name        string
		command     []string
		wantHeaders map[string]string
		wantDiag    []string
	}{
		{name: "ok, with the server's name and url", command: []string{script(t, `printf '{"Authorization":"Bearer %s","X-Url":"%s"}' "$MCP_SERVER_NAME" "$MCP_SERVER_URL"`)},
			wantHeaders: map[string]string{"Authorization": "Bearer api", "X-Url": "https://api.example/mcp"}},
		{name: "args are argv, not shell", command: []string{"/bin/echo", `{"X-Arg":"a;b $(x)"}`},
			wantHeaders: map[string]string{"X-Arg": "a;b $(x)"}},
		{name: "non-zero exit", command: []string{script(t, `echo "token expired" >&2; exit 3`)},
			wantDiag: []string{"Headers helper failed", `for server "api" failed: exit status 3; stderr: token expired`}},
		{name: "not JSON", command: []string{script(t, `echo 'Authorization: Bearer x'`)},
			wantDiag: []string{"Invalid headers helper output", "did not print a JSON object of headers"}},
		{name: "JSON array", command: []string{script(t, `echo '["a"]'`)},
			wantDiag: []string{"did not print a JSON object"}},
		{name: "non-string value", command: []string{script(t, `echo '{"X-Count": 3}'`)},
			wantDiag: []string{`printed a non-string value for header "X-Count"`}},
		{name: "trailing output", command: []string{script(t, `echo '{"A":"b"} extra'`)},
			wantDiag: []string{"printed something after the JSON object"}},
		{name: "header injection", command: []string{script(t, `printf '{"A":"b\\r\\nX-Evil: 1"}'`)},
			wantDiag: []string{`printed an invalid header "A"`}},
		{name: "timeout, with a grandchild holding the pipe", command: []string{script(t, `sleep 30 & echo starting >&2; sleep 30`)},
			wantDiag: []string{"Headers helper timed out", "did not finish within 500ms", "stderr: starting"}},
		{name: "output over the cap", command: []string{script(t, `head -c 2097152 /dev/zero | tr '\\0' a`)},
			wantDiag: []string{"Headers helper output too large", "wrote more than 1048576 bytes"}},
		{name: "missing command", command: []string{"/nonexistent/helper"},
			wantDiag: []string{"Headers helper failed", "no such file or directory"}},
		{name: "empty command", command: nil, wantDiag: []string{"No headers helper command"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, _ := json.Marshal(map[string]any{"command": tc.command})
			start := time.Now()
			resp, err := h.GetHeaders(context.Background(), &sdk.HeadersRequest{ServerName: "api", ServerURL: "https://api.example/mcp", Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s: the helper's timeout did not hold", took)
			}
			if tc.wantDiag == nil {
				if resp.Diagnostics.HasErrors() {
					t.Fatal(resp.Diagnostics.Err())
				}
				if diff := cmp.Diff(tc.wantHeaders, resp.Headers); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				return
			}
			msg := resp.Diagnostics.Err()
			if msg == nil {
				t.Fatalf("no error; headers %v", resp.Headers)
			}
			for _, w := range tc.wantDiag {
				if !strings.Contains(msg.Error(), w) {
					t.Errorf("diagnostic %q lacks %q", msg, w)
				}
			}
			if len(resp.Headers) > 0 {
				t.Errorf("headers returned with an error: %v", resp.Headers)
			}
		})
	}
}

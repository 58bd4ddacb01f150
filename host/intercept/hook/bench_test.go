package hook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// BenchmarkHookSpawn measures one PreToolUse hook run, input encoding to
// verdict: a command hook through sh (exit 0, and a python3 hook that
// parses its input), and an HTTP hook on 127.0.0.1 for comparison.
func BenchmarkHookSpawn(b *testing.B) {
	needShell(b, true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	// python3 may be a launcher (a pyenv shim costs ~0.4 s a run): the
	// interpreter itself is measured too.
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		h    config.Hook
	}{
		{"sh-exit0", config.Hook{Event: PreToolUse, Command: "exit 0"}},
		{"python3", config.Hook{Event: PreToolUse, Command: `python3 -c 'import json, sys; json.load(sys.stdin)'`}},
		{"python3-interpreter", config.Hook{Event: PreToolUse, Command: `'` + strings.TrimSpace(string(exe)) + `' -c 'import json, sys; json.load(sys.stdin)'`}},
		{"http", config.Hook{Event: PreToolUse, URL: srv.URL}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := newHook(b, bc.h, nil)
			c := toolCall(`{"query":"SELECT 1","limit":10}`)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := f.entry.Checker.Check(ctx, c, intercept.Request)
				if err != nil || v.Action != intercept.Pass {
					b.Fatal(v, err)
				}
			}
		})
	}
}

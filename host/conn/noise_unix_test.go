//go:build !windows

package conn

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testing/demotest"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// (A shell prints the banner: not on Windows.)
// bannered is the demo server run by a shell that first prints banner on
// its stdout.
func bannered(name, banner string) *config.Server {
	s := demotest.Server(name)
	s.Args = append([]string{"-c", `printf '%b' "$BANNER"; exec "$0" "$@"`, s.Command}, s.Args...)
	s.Command = "/bin/sh"
	s.Env["BANNER"] = banner
	return s
}

// A stdio server that prints lines that are not JSON-RPC on its stdout (a
// banner, a warning) is connected, the lines skipped and logged (the first
// noiseLogged, then counted), escaped, cut and scrubbed; a line that looks
// like JSON-RPC but is not valid still fails the connection.
func TestStdioServerNonJSONLinesSkipped(t *testing.T) {
	t.Parallel()
	many := strings.Repeat("progress...\n", noiseLogged+5)
	for _, tc := range []struct {
		name, banner string
		fails        bool
		logged, not  []string
	}{
		{name: "banner", banner: "Starting server v1.2 on stdio\n[INFO] ready\n\n   \n",
			logged: []string{`"Starting server v1.2 on stdio"`, `"[INFO] ready"`}},
		{name: "control characters", banner: `\033[32mready\033[0m \0000\0377\n`, // (printf %b escapes)
			logged: []string{`line="\x1b[32mready\x1b[0m \x00`}, not: []string{"\x1b", "\x00", "\xff"}},
		{name: "long", banner: strings.Repeat("é", 300) + "TAIL\n",
			logged: []string{`line="` + strings.Repeat("é", noiseShown/2) + `…"`}, not: []string{"TAIL"}},
		{name: "secret", banner: "using token=sk-abcdefghijklmnopqrstuvwxyz0123\n",
			logged: []string{"[REDACTED]"}, not: []string{"abcdefghijklmnop"}},
		{name: "many", banner: many,
			logged: []string{"counted but not logged", `count=` + strconv.Itoa(noiseLogged+5)}},
		{name: "invalid JSON", banner: "{not json\n", fails: true},
		{name: "invalid batch", banner: "[{\"jsonrpc\":\"1.0\"}]\n", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncbuf.Buffer{}
			m := NewManager([]*config.Server{bannered("demo", tc.banner)}, &Options{
				Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug}),
			})
			res, err := m.CallTool(context.Background(), "demo", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, nil)
			m.Close() // (the count is logged as the connection ends)
			if tc.fails {
				if err == nil {
					t.Fatal("connected; want the invalid line to fail the connection")
				}
				return
			}
			if err != nil {
				t.Fatalf("call: %v\nlogs:\n%s", err, logs)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
				t.Errorf("echo = %q", got)
			}
			out := logs.String()
			for _, want := range tc.logged {
				if !strings.Contains(out, want) {
					t.Errorf("logs lack %q:\n%s", want, out)
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(out, bad) {
					t.Errorf("logs contain %q:\n%s", bad, out)
				}
			}
			if n := strings.Count(out, "skipping a line that is not JSON-RPC"); n > noiseLogged {
				t.Errorf("%d lines logged, want at most %d", n, noiseLogged)
			}
		})
	}
}

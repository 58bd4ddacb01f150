package docs

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCommandBlocks: which lines of a README are commands, and the marker
// that keeps a block from running.
func TestCommandBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Block
		err        bool
	}{
		{"sh", "x\n```sh\nmake install   # a comment\n\n# only a comment\nmcphost tools\n```\n",
			[]Block{{Line: 2, Commands: []Command{{3, "make install   # a comment"}, {6, "mcphost tools"}}}}, false},
		{"console prompts only", "```console\n$ mcphost version\nmcphost 0.1\n```\n",
			[]Block{{Line: 1, Commands: []Command{{2, "mcphost version"}}}}, false},
		{"continuation", "```sh\nmcphost server add \\\n  fs -- npx x\n```\n",
			[]Block{{Line: 1, Commands: []Command{{2, "mcphost server add  fs -- npx x"}}}}, false},
		{"other languages ignored", "```hcl\nserver \"x\" {}\n```\n```go\nx := 1\n```\n", nil, false},
		{"marked", "<!-- not run: serves until Ctrl-C -->\n\n```sh\nmake run\n```\n",
			[]Block{{Line: 3, Commands: []Command{{4, "make run"}}, NotRun: "serves until Ctrl-C"}}, false},
		{"marker without a reason", "<!-- not run: -->\n```sh\nmake run\n```\n", nil, true},
		{"marker not closed", "<!-- not run: long\n```sh\nmake run\n```\n", nil, true},
		{"block not closed", "```sh\nmake run\n", nil, true},
		{"empty block", "```sh\n# nothing\n```\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CommandBlocks(tc.text)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !tc.err && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestWords: the words of a line's first simple command.
func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		`mcphost --config config.hcl.example call mcp__demo__echo '{"message":"hi"}'`: {"mcphost", "--config", "config.hcl.example", "call", "mcp__demo__echo", `{"message":"hi"}`},
		`MCPHOST_SERVE_TOKEN=x mcphost serve --http 127.0.0.1:8931 # serve`:           {"mcphost", "serve", "--http", "127.0.0.1:8931"},
		`mcphost call mcp__demo__echo - < args.json`:                                  {"mcphost", "call", "mcp__demo__echo", "-"},
		`echo "a \"b\" c" | mcphost x`:                                                {"echo", `a "b" c`},
		`mcphost server add -H "X-Team: core" docs`:                                   {"mcphost", "server", "add", "-H", "X-Team: core", "docs"},
	} {
		if got := Words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckMcphostCommand: a README line naming a command the CLI does not
// have, a group that only prints help, or a flag it does not take fails.
func TestCheckMcphostCommand(t *testing.T) {
	for line, ok := range map[string]bool{
		`mcphost --config config.hcl.example call mcp__demo__echo '{"message":"hi"}'`:             true,
		`mcphost server add -s user everything -- npx -y @modelcontextprotocol/server-everything`: true,
		`mcphost server list`:          true,
		`echo hi`:                      true,
		`mcphost nosuchcommand`:        false,
		`mcphost server`:               false, // a group: prints help, runs nothing
		`mcphost server list --nosuch`: false,
		`mcphost tools approve`:        false, // needs a tool's name
		`mcphost version extra`:        false,
	} {
		if err := checkMcphostCommand(line); (err == nil) != ok {
			t.Errorf("%s: err = %v, want ok=%v", line, err, ok)
		}
	}
}

// TestRunCommandsStops: runCommands runs lines in one shell (an export
// holds), answers questions with y, and fails at the first command that
// exits non-zero, naming its line.
func TestRunCommandsStops(t *testing.T) {
	dir := t.TempDir()
	yes := filepath.Join(dir, "yes")
	out, err := runCommands(context.Background(), dir, []string{"PATH=/usr/bin:/bin"}, yes, []Command{
		{1, "export GREETING=hi   # kept for the next line"},
		{2, `test "$GREETING" = hi`},
		{3, "read answer; test \"$answer\" = y"},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err = runCommands(context.Background(), dir, []string{"PATH=/usr/bin:/bin"}, yes, []Command{
		{7, "true"}, {8, "false"}, {9, "touch never"},
	})
	if !errors.Is(err, errCommandFailed) || !strings.Contains(out, "README.md:8: exit status 1") || strings.Contains(out, "README.md:9:") {
		t.Fatalf("err = %v, output:\n%s", err, out)
	}
}

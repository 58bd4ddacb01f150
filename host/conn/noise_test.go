package conn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLooksJSONRPC: what is held to the strict rules.
func TestLooksJSONRPC(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0"}`: true, `{oops`: true, `[]`: true, `[ {"a":1}]`: true, `[`: true, "[\t]": true,
		`[INFO] ready`: false, `[2026-01-01] x`: false, `Starting`: false, `"str"`: false, `1`: false, `null`: false,
	} {
		if got := looksJSONRPC([]byte(line)); got != want {
			t.Errorf("looksJSONRPC(%q) = %v, want %v", line, got, want)
		}
	}
}

// FuzzStdioServerLines: whatever a stdio server prints, the reader does not
// panic, and lines that do not look like JSON-RPC never end the connection.
func FuzzStdioServerLines(f *testing.F) {
	for _, s := range []string{
		"banner\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n",
		"[INFO] x\n[]\n[ ]\n",
		`{"a":1,"a":2}` + "\n",
		`{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}` + "\n",
		"\x00\xff{}\n",
		"[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]\n",
		strings.Repeat("x", 300) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		lc := newLineConn(io.NopCloser(bytes.NewReader(in)), nopWriteCloser{io.Discard}, 1<<10, nil, hclog.NewNullLogger())
		defer lc.Close()
		var err error
		for err == nil {
			_, err = lc.Read(context.Background())
		}
		jsonish := false
		for _, line := range bytes.Split(in, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 && looksJSONRPC(line) {
				jsonish = true
			}
		}
		if !jsonish && len(in) <= 1<<10 && !errors.Is(err, io.EOF) {
			t.Fatalf("no line looks like JSON-RPC, but reading ended with %v", err)
		}
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

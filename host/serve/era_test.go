package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestUpstreamVersion(t *testing.T) {
	init := func(v string) string {
		return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":` + v + `,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	}
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"2025-11-25", init(`"2025-11-25"`), "2025-11-25"},
		{"2025-06-18, known to the go-sdk", init(`"2025-06-18"`), "2025-06-18"},
		{"2024-11-05", init(`"2024-11-05"`), "2024-11-05"},
		{"an older version the go-sdk does not know", init(`"2024-01-01"`), "2025-11-25"},
		{"2026-07-28 (initialize is not of that era)", init(`"2026-07-28"`), ""},
		{"a later version", init(`"2027-01-01"`), ""},
		{"not a string", init(`20251125`), ""},
		{"no version", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, ""},
		{"a notification", `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"server/discover", `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}`, ""},
		{"a call first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, ""},
		{"duplicate method (strict JSON)", `{"jsonrpc":"2.0","id":0,"method":"tools/list","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"not JSON", `hello`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := upstreamVersion([]byte(tc.msg)); got != tc.want {
				t.Errorf("upstreamVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

// nopCloser is an input whose Close is counted.
type nopCloser struct {
	io.Reader
	closed int
}

func (n *nopCloser) Close() error { n.closed++; return nil }

func TestReadStdioClient(t *testing.T) {
	initLine := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	long := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","x":"` + strings.Repeat("a", MaxMessageBytes) + `"}}` + "\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"initialize then more", initLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", "2025-11-25"},
		{"blank lines first", "\n  \r\n" + initLine + "\r\n", "2025-11-25"},
		{"no newline before the end", initLine, ""},
		{"empty input", "", ""},
		{"over the size limit", long, ""},
		{"a 2026-07-28 client", `{"jsonrpc":"2.0","id":0,"method":"server/discover"}` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &nopCloser{Reader: strings.NewReader(tc.in)}
			sc, err := ReadStdioClient(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if sc.UpstreamVersion != tc.want {
				t.Errorf("UpstreamVersion = %q, want %q", sc.UpstreamVersion, tc.want)
			}
			// Nothing the client sent is lost.
			got, err := io.ReadAll(sc.Input)
			if err != nil || string(got) != tc.in {
				t.Errorf("Input yields %d bytes (%v), want the %d sent", len(got), err, len(tc.in))
			}
			sc.Input.Close()
			if in.closed != 1 {
				t.Errorf("closing Input closed the input %d times, want 1", in.closed)
			}
		})
	}
}

// TestReadStdioClientStops: a client that sends nothing does not hold the
// gateway past its context; the input is closed.
func TestReadStdioClientStops(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadStdioClient(ctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := w.Write([]byte("x\n")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the input was not closed: write err = %v", err)
	}
}

// FuzzReadStdioClient: whatever the client sends first, the gateway reads
// all of it, unchanged, and decides an era only for an initialize request.
func FuzzReadStdioClient(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n{}\n"))
	f.Add([]byte("\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"))
	f.Add([]byte(`{"method":"initialize","method":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ReadStdioClient(context.Background(), io.NopCloser(bytes.NewReader(data)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(sc.Input)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Input yields %q (%v), want %q", got, err, data)
		}
		if v := sc.UpstreamVersion; v != "" && !bytes.Contains(data, []byte(`"initialize"`)) {
			t.Fatalf("era %q decided for input without an initialize request", v)
		}
	})
}

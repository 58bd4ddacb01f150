package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway"
)

func TestInitialize(t *testing.T) {
	init := func(v string) string {
		return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":` + v + `,"capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`
	}
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"2025-11-25", init(`"2025-11-25"`), "2025-11-25"},
		{"2025-06-18, known to the go-sdk", init(`"2025-06-18"`), "2025-06-18"},
		{"2024-11-05", init(`"2024-11-05"`), "2024-11-05"},
		// What the go-sdk server answers an initialize of a version it
		// does not take there: the latest before 2026-07-28.
		{"an older version the go-sdk does not know", init(`"2024-01-01"`), "2025-11-25"},
		{"2026-07-28 (not by initialize)", init(`"2026-07-28"`), "2025-11-25"},
		{"a later version", init(`"2027-01-01"`), "2025-11-25"},
		{"not a string", init(`20251125`), "2025-11-25"},
		{"no version", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "2025-11-25"},
		{"a notification", `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"a null id (refused by the gateway)", `{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"server/discover", `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}`, ""},
		{"a call first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, ""},
		{"duplicate method (strict JSON)", `{"jsonrpc":"2.0","id":0,"method":"tools/list","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"not JSON", `hello`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, caps := initialize([]byte(tc.msg))
			if got != tc.want {
				t.Errorf("version = %q, want %q", got, tc.want)
			}
			if wantCaps := strings.Contains(tc.msg, `"capabilities"`) && tc.want != ""; wantCaps != (string(caps) == `{"sampling":{}}`) {
				t.Errorf("capabilities = %s", caps)
			}
		})
	}
}

func TestOffer(t *testing.T) {
	gw := &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		Sampling:    &mcp.SamplingCapabilities{},
		RootsV2:     &mcp.RootCapabilities{},
		Extensions:  gateway.ClientExtensions(),
	}
	for _, tc := range []struct {
		name, caps, want string
	}{
		// The extensions the gateway speaks for its clients, as far as
		// the client declared them (not the others it declared).
		{"the skills extension", `{"extensions":{"io.modelcontextprotocol/skills":{"x":1},"com.example/other":{}}}`, `{"extensions":{"io.modelcontextprotocol/skills":{}}}`},
		{"another extension", `{"extensions":{"com.example/other":{}}}`, `{}`},
		{"none", `{}`, `{}`},
		{"elicitation as before URL mode (form)", `{"elicitation":{}}`, `{"elicitation":{"form":{}}}`},
		{"URL elicitation only", `{"elicitation":{"url":{}}}`, `{"elicitation":{"url":{}}}`},
		{"everything", `{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{"listChanged":true},"experimental":{"x":{}}}`, `{"sampling":{"context":{}},"elicitation":{"form":{},"url":{}},"roots":{}}`},
		{"sampling", `{"sampling":{}}`, `{"sampling":{}}`},
		{"not an object", `[]`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &Client{UpstreamVersion: "2025-11-25", caps: []byte(tc.caps)}
			got := sc.Offer(gw)
			v2 := struct {
				*mcp.ClientCapabilities
				Roots *mcp.RootCapabilities `json:"roots,omitempty"`
			}{got, got.RootsV2}
			b, _ := json.Marshal(v2)
			if string(b) != tc.want {
				t.Errorf("Offer = %s, want %s", b, tc.want)
			}
		})
	}
	if got := (&Client{caps: []byte(`{}`)}).Offer(gw); got != gw {
		t.Error("without an upstream version, the gateway's own offer is not kept")
	}
}

// nopCloser is an input whose Close is counted.
type nopCloser struct {
	io.Reader
	closed int
}

func (n *nopCloser) Close() error { n.closed++; return nil }

func TestReadClient(t *testing.T) {
	initLine := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	long := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","x":"` + strings.Repeat("a", gateway.MaxMessageBytes) + `"}}` + "\n"
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
			sc, err := ReadClient(context.Background(), in)
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

// TestReadClientStops: a client that sends nothing does not hold the
// gateway past its context; the input is closed.
func TestReadClientStops(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadClient(ctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := w.Write([]byte("x\n")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the input was not closed: write err = %v", err)
	}
}

// FuzzReadClient: whatever the client sends first, the gateway reads
// all of it, unchanged, and decides an era only for an initialize request.
func FuzzReadClient(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n{}\n"))
	f.Add([]byte("\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"))
	f.Add([]byte(`{"method":"initialize","method":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ReadClient(context.Background(), io.NopCloser(bytes.NewReader(data)))
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

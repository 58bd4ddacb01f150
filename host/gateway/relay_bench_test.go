package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
)

// BenchmarkRelayStdio is tools/call through the stdio gateway's relay path,
// in process (the gateway on pipes, the demo server a child process), so
// that allocations in the gateway and its upstream connection are counted.
func BenchmarkRelayStdio(b *testing.B) {
	g, w, r := stdioGateway(b)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "benchmark payload: the quick brown fox jumps over the lazy dog"}}
	before := g.RelayedCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.StopTimer()
	if g.RelayedCalls() == before {
		b.Fatal("no call took the relay path")
	}
}

// BenchmarkRelayStdioRaw is the same without a go-sdk client: the request
// is written and the response read as lines, so that the allocations
// counted are the gateway's and its upstream connection's only.
func BenchmarkRelayStdioRaw(b *testing.B) {
	g, w, r := stdioGateway(b)
	relayRawCalls(b, g, w, r)
}

// relayRawCalls opens a 2025-11-25 session by hand on the gateway g served
// on w and r, then measures tools/call written and read as lines, and
// fails unless the calls took the relay path.
func relayRawCalls(b *testing.B, g *gateway.Gateway, w io.Writer, r io.Reader) {
	br := bufio.NewReader(r)
	// A 2025-11-25 session, opened by hand.
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"); err != nil {
		b.Fatal(err)
	}
	if resp, err := br.ReadBytes('\n'); err != nil || !bytes.Contains(resp, []byte(`"result"`)) {
		b.Fatal(err, string(resp))
	}
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"benchmark payload: the quick brown fox jumps over the lazy dog"}}}` + "\n")
	before := g.RelayedCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := br.ReadBytes('\n')
		if err != nil || !bytes.Contains(resp, []byte(`"id":"b"`)) {
			b.Fatal(err, string(resp))
		}
	}
	b.StopTimer()
	if g.RelayedCalls() == before {
		b.Fatal("no call took the relay path")
	}
}

// BenchmarkRelayHTTP is tools/call through the HTTP handler's relay path,
// in process (no network: the handler is called with a recorder; the demo
// server is a child process), a stateless 2025-11-25 request, so that the
// allocations counted are the handler's, the relay's and its upstream
// connection's.
func BenchmarkRelayHTTP(b *testing.B) {
	g := gatewayOf(b, []*config.Server{demo("a")})
	h := streamable.New(g).Handler(&streamable.Options{Stateless: true})
	body := []byte(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"benchmark payload: the quick brown fox jumps over the lazy dog"}}}`)
	before := g.RelayedCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"id":"b"`)) {
			b.Fatal(w.Code, w.Body.String())
		}
	}
	b.StopTimer()
	if g.RelayedCalls() == before {
		b.Fatal("no call took the relay path")
	}
}

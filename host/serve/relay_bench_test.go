package serve_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

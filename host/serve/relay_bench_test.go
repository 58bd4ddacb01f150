package serve_test

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/serve"
)

// BenchmarkRelayStdio is tools/call through the stdio gateway's relay path,
// in process (the gateway on pipes, the demo server a child process), so
// that allocations in the gateway and its upstream connection are counted.
func BenchmarkRelayStdio(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := serve.New(h, nil)
	g.Sync(ctx)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.ServeStdio(ctx, inR, outW)
	}()
	defer func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
		h.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
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

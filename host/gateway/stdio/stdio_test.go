package stdio_test

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/internal/demoserver"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// (The stdio front is tested mostly through the gateway, in package
// serve's tests; here are those that need the front's test seams.)

func TestMain(m *testing.M) {
	demoserver.RunIfChild()
	os.Exit(m.Run())
}

// gatewayOf is a gateway over servers, synced, not yet serving.
func gatewayOf(t testing.TB, servers ...*config.Server) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: servers, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, nil)
	t.Cleanup(func() { g.Close() })
	g.Sync(ctx)
	t.Cleanup(func() {
		cancel()
		h.Close()
	})
	return g
}

// servePipes serves g on in-process pipes with the hooks connected and
// waiting (stdio.ServeWithHooks), and returns the client's ends; the
// test's cleanup closes them and waits for the front to return.
func servePipes(t testing.TB, g *gateway.Gateway, connected, waiting func()) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdio.ServeWithHooks(ctx, g, inR, outW, connected, waiting)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	return inW, outR
}

// TestRelayFirstCallAfterConnect: a client's first tools/call can reach the
// gateway before the go-sdk's Connect has returned to Serve (the read
// loop starts first, and the client's initialize is answered by then); it
// still takes the relay path. The hooks hold Serve in that gap until
// the call waits for the session (on the old code, which passed such a
// call to the go-sdk, nothing waits: the hook gives up after 5 s and the
// call was answered off the relay path).
func TestRelayFirstCallAfterConnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := gatewayOf(t, demotest.Server("a"))
	waiting := make(chan struct{}, 1)
	w, r := servePipes(t, g, func() {
		select {
		case <-waiting: // the client's call waits for the session
		case <-time.After(5 * time.Second):
		}
	}, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "first-call"}, nil).Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "first"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := host.TextOf(res.Content); text != "first" || res.IsError {
		t.Fatalf("got %q (isError %v)", text, res.IsError)
	}
	if n := g.RelayedCalls(); n != 1 {
		t.Fatalf("%d calls relayed, want 1", n)
	}
}

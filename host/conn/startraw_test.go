package conn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

type rawEnd struct {
	resp    []byte
	handled bool
	err     error
}

// TestStartRaw: a raw call started without waiting ends with one call of
// done: with the server's response; with the context's error when it is
// cancelled (and the server is told: its call sees the cancellation); with
// an error when the server goes away. It does not start on a server that is
// not connected, or on a session of another generation.
func TestStartRaw(t *testing.T) {
	t.Parallel()
	cfg := demo("d")
	m := NewManager([]*config.Server{cfg}, nil)
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	start := func(ctx context.Context, tool, args string) (bool, chan rawEnd) {
		ch := make(chan rawEnd, 2)
		ok := m.StartRaw(ctx, cfg.Name, RawCall{Tool: tool, Args: []byte(args), ProtocolVersion: NewProtocol, Gen: m.Generation(context.Background(), cfg.Name)},
			func(resp []byte, handled bool, err error) { ch <- rawEnd{resp, handled, err} })
		return ok, ch
	}
	wait := func(ch chan rawEnd) rawEnd {
		t.Helper()
		select {
		case e := <-ch:
			select {
			case again := <-ch:
				t.Fatalf("done called twice: %+v", again)
			case <-time.After(50 * time.Millisecond):
			}
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("done was not called")
		}
		return rawEnd{}
	}
	if ok, _ := start(ctx, "echo", `{"message":"x"}`); ok {
		t.Fatal("started on a server that is not connected")
	}
	if _, err := m.Session(ctx, cfg.Name); err != nil {
		t.Fatal(err)
	}

	ok, ch := start(ctx, "echo", `{"message":"hi"}`)
	if !ok {
		t.Fatal("not started on a connected server")
	}
	if e := wait(ch); e.err != nil || !e.handled || !strings.Contains(string(e.resp), `"text":"hi"`) {
		t.Fatalf("echo: %s %v %v", e.resp, e.handled, e.err)
	}

	cctx, cancel := context.WithCancel(ctx)
	ok, ch = start(cctx, "slow", `{"milliseconds":10000}`)
	if !ok {
		t.Fatal("slow not started")
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if e := wait(ch); !errors.Is(e.err, context.Canceled) || e.resp != nil {
		t.Fatalf("cancelled: %s %v %v", e.resp, e.handled, e.err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := m.CallTool(ctx, cfg.Name, &mcp.CallToolParams{Name: "stats", Arguments: map[string]any{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.StructuredContent.(map[string]any)["slow_cancelled"].(float64); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server was not told of the cancellation")
		}
		time.Sleep(20 * time.Millisecond)
	}

	stale := m.Generation(context.Background(), cfg.Name) + 1
	if m.StartRaw(ctx, cfg.Name, RawCall{Tool: "echo", ProtocolVersion: NewProtocol, Gen: stale}, func([]byte, bool, error) {}) {
		t.Fatal("started on a session of another generation")
	}

	ok, ch = start(ctx, "slow", `{"milliseconds":10000}`)
	if !ok {
		t.Fatal("slow not started")
	}
	if _, err := m.CallTool(ctx, cfg.Name, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}}, nil); err == nil {
		t.Log("crash returned")
	}
	if e := wait(ch); e.err == nil || !e.handled {
		t.Fatalf("server gone: %s %v %v", e.resp, e.handled, e.err)
	}
}

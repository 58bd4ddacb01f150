package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
)

// TestRelayStartTimeout: a call started by RelayStart that gets no response
// within tool_timeout ends with a TimeoutError (matching ErrTimeout and
// context.DeadlineExceeded), and the server is told to cancel it; a call
// that answers in time is not cut.
func TestRelayStartTimeout(t *testing.T) {
	t.Parallel()
	srv := demo("one")
	srv.ToolTimeout = 300 * time.Millisecond
	h := newHost(t, srv)
	ctx := context.Background()
	if _, problems := h.Tools(ctx); len(problems) > 0 { // (RelayStart takes only listed tools)
		t.Fatal(problems)
	}
	type result struct {
		resp    []byte
		handled bool
		err     error
	}
	start := func(tool, args string) result {
		t.Helper()
		ch := make(chan result, 1)
		if !h.Serving().RelayStart(ctx, tool, json.RawMessage(args), host.RelayOptions{ProtocolVersion: conn.NewProtocol},
			func(resp []byte, handled bool, err error) { ch <- result{resp, handled, err} }) {
			t.Fatalf("RelayStart did not take %s", tool)
		}
		select {
		case r := <-ch:
			return r
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no end", tool)
			return result{}
		}
	}
	if r := start("mcp__one__echo", `{"message":"in time"}`); !r.handled || r.err != nil || !strings.Contains(string(r.resp), "in time") {
		t.Fatalf("echo: %s, %v, %v", r.resp, r.handled, r.err)
	}
	r := start("mcp__one__slow", `{"milliseconds":10000,"steps":1}`)
	var te *host.TimeoutError
	if !r.handled || !errors.As(r.err, &te) || !errors.Is(r.err, host.ErrTimeout) || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("slow: handled %v, err %v; want a TimeoutError", r.handled, r.err)
	}
	// The server was sent notifications/cancelled.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := h.CallTool(ctx, "mcp__one__stats", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res.StructuredContent); strings.Contains(string(b), `"slow_cancelled":1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not see the call cancelled: %s", host.TextOf(res.Content))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRelayCallTimeout: a call made by RelayCall ends with a TimeoutError
// (matching ErrTimeout and context.DeadlineExceeded) when tool_timeout
// passes — with the call in flight (the raw call's own timer), and while
// it waits for a slot under max_concurrent_calls (a context of the
// timeout, made only then); a call that answers in time is not cut.
func TestRelayCallTimeout(t *testing.T) {
	t.Parallel()
	srv := demo("one")
	srv.ToolTimeout = 300 * time.Millisecond
	cfg := &config.Config{Servers: []*config.Server{srv}, DefaultMode: "allow_all"}
	cfg.Settings.MaxConcurrentCalls = 1
	h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := context.Background()
	if _, problems := h.Tools(ctx); len(problems) > 0 {
		t.Fatal(problems)
	}
	relay := func(tool, args string) (resp []byte, handled bool, err error) {
		return h.Serving().RelayCall(ctx, tool, json.RawMessage(args), host.RelayOptions{ProtocolVersion: conn.NewProtocol})
	}
	isTimeout := func(err error) bool {
		var te *host.TimeoutError
		return errors.As(err, &te) && errors.Is(err, host.ErrTimeout) && errors.Is(err, context.DeadlineExceeded)
	}
	if resp, handled, err := relay("mcp__one__echo", `{"message":"in time"}`); !handled || err != nil || !strings.Contains(string(resp), "in time") {
		t.Fatalf("echo: %s, %v, %v", resp, handled, err)
	}
	// In flight.
	if _, handled, err := relay("mcp__one__slow", `{"milliseconds":10000,"steps":1}`); !handled || !isTimeout(err) {
		t.Fatalf("slow: handled %v, err %v; want a TimeoutError", handled, err)
	}
	// Waiting for the one slot, which a slow call holds for longer than
	// tool_timeout (CallTool's, kept alive by the server's progress).
	held := make(chan error, 1)
	go func() {
		_, err := h.CallTool(ctx, "mcp__one__slow", map[string]any{"milliseconds": 1500, "steps": 30}, nil)
		held <- err
	}()
	time.Sleep(200 * time.Millisecond) // (the slow call holds the slot)
	start := time.Now()
	if _, handled, err := relay("mcp__one__echo", `{"message":"queued"}`); !handled || !isTimeout(err) {
		t.Fatalf("queued: handled %v, err %v; want a TimeoutError", handled, err)
	}
	if d := time.Since(start); d > 1200*time.Millisecond {
		t.Fatalf("queued: ended after %s, want about tool_timeout", d)
	}
	if err := <-held; err != nil {
		t.Fatalf("slow (holding the slot): %v", err)
	}
}

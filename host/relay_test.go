package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
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

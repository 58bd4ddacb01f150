package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/gateway/stdio"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// TestRelayedTaskCallNotReencoded: a 2025-11-25 call with a task parameter
// that the relay takes, and the raw lane too, is never re-encoded for the
// go-sdk path (its task parameter put in _meta: only when the raw lane
// does not take it). On the old code every relayed call with a task was
// re-encoded up front (a full decode and encode of the request): the hook
// counted one.
func TestRelayedTaskCallNotReencoded(t *testing.T) {
	t.Parallel()
	g := gatewayOf(t, demotest.Server("a", "-protocol", "2025-11-25"))
	var carried atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		stdio.ServeCountingCarries(ctx, g, inR, outW, func() { carried.Add(1) })
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	lines := make(chan string, 16)
	go func() { // (ends with outR, closed by the cleanup)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	answer := func(id string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the front ended")
				}
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal([]byte(l), &m) == nil && string(m.ID) == id {
					return l
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no answer to %s", id)
			}
		}
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	answer("0")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"hi"},"task":{"ttl":60000}}}`)
	if got := answer("1"); !strings.Contains(got, `"result"`) {
		t.Fatalf("tools/call: %s, want a result", got)
	}
	if n := g.RelayedCalls(); n != 1 {
		t.Fatalf("%d calls relayed, want 1", n)
	}
	if n := carried.Load(); n != 0 {
		t.Errorf("the relayed call was re-encoded %d times, want never", n)
	}
}

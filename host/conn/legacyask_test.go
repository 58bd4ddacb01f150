package conn

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
)

// A 2025-11-25 client that cannot be asked (stateless) stays on the first
// session once the second is open: relayed there (CallRaw), and its go-sdk
// path call (Call with CannotAsk) is not taken to the second session.
func TestStatelessClientAfterSecondSessionOpen(t *testing.T) {
	cfg := demo("d", "-passthrough")
	m := NewManager([]*config.Server{cfg}, &Options{Capabilities: gatewayCaps})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	raw := func() bool {
		t.Helper()
		_, handled, err := m.CallRaw(ctx, cfg.Name, RawCall{Tool: "echo", Args: []byte(`{"message":"x"}`), ProtocolVersion: LegacyProtocol, Gen: m.Generation(ctx, cfg.Name), Requester: newAnswerer("s", ""), Asks: false})
		if err != nil {
			t.Fatal(err)
		}
		return handled
	}
	if _, err := m.Session(ctx, cfg.Name); err != nil {
		t.Fatal(err)
	}
	if !raw() {
		t.Fatal("a stateless client's call was not relayed before the second session opened")
	}
	// An askable client's call opens the second session.
	if _, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, &CallOptions{ClientVersion: LegacyProtocol, Requester: newAnswerer("a", "")}); err != nil {
		t.Fatal(err)
	}
	c := m.For(ctx, cfg.Name)
	if c.legacy.conn() == nil {
		t.Fatal("no second session was opened for a client that can be asked")
	}
	if !raw() {
		t.Fatal("a stateless client's call was not relayed once the second session was open")
	}
	if got := c.forVersion(ctx, LegacyProtocol, false); got != c {
		t.Fatal("forVersion took a caller that cannot be asked to the second session")
	}
	o := &CallOptions{ClientVersion: LegacyProtocol, Requester: newAnswerer("s", ""), CannotAsk: true}
	var on *Conn
	o.Verify = func(_ context.Context, cs *mcp.ClientSession, _ uint64) error {
		c.mu.Lock()
		first := c.session
		c.mu.Unlock()
		switch cs {
		case first:
			on = c
		default:
			on = c.legacy.conn()
		}
		return nil
	}
	if _, err := m.Call(ctx, cfg.Name, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, o); err != nil {
		t.Fatal(err)
	}
	if on != c {
		t.Fatal("a call with CannotAsk went to the second session")
	}
}

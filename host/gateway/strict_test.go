package gateway_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// initRaw initializes a raw stdio client at version.
func initRaw(c *rawClient, version string) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := c.recv(); m["result"] == nil {
		c.t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestStdioStrictJSON (SECURITY B17): on stdio, a message the strict scan
// refuses is answered with an error and never routed, whatever path it would
// have taken (relay or go-sdk).
func TestStdioStrictJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, line, want string }{
		{"case-folding key ſ", `{"jsonrpc":"2.0","id":11,"method":"tools/call","paramſ":{"name":"mcp__a__crash"}}`, `-32600`},
		{"escaped key", `{"jsonrpc":"2.0","id":12,"method":"tools/call","p\u0061rams":{"name":"mcp__a__crash"}}`, `-32600`},
		{"escaped params key", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"n\u0061me":"mcp__a__crash"}}`, `-32600`},
		{"trailing object", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"}}}{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"mcp__a__crash"}}`, `-32700`},
		{"trailing garbage", `{"jsonrpc":"2.0","id":16,"method":"ping"} x`, `-32700`},
		{"duplicate id member", `{"jsonrpc":"2.0","id":17,"id":18,"method":"ping"}`, `-32600`},
		{"duplicate method", `{"jsonrpc":"2.0","id":19,"method":"ping","method":"tools/list"}`, `-32600`},
		{"case-variant _meta", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"mcp__a__echo","_meta":{"progressToken":1,"ProgressToken":2}}}`, `-32600`},
		{"batch", `[{"jsonrpc":"2.0","id":21,"method":"ping"}]`, `-32600`},
	}
	g, w, r := stdioGateway(t)
	c := &rawClient{t: t, w: w, br: bufio.NewReader(r)}
	initRaw(c, "2025-11-25")
	for _, tc := range tests {
		c.send(tc.line)
		m := c.recv()
		b, _ := json.Marshal(m)
		if e, ok := m["error"].(map[string]any); !ok || !strings.Contains(string(b), tc.want) || e["code"] == nil {
			t.Errorf("%s: response %s, want error %s", tc.name, b, tc.want)
		}
	}
	// Valid JSON that is not JSON-RPC 2.0: answered with its id, and the id
	// is free again at once.
	c.send(`{"jsonrpc":"1.0","id":7,"method":"ping"}`)
	if m := c.recv(); m["id"] != float64(7) || m["error"] == nil {
		t.Errorf("a JSON-RPC 1.0 request: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if m := c.recv(); m["id"] != float64(7) || m["result"] == nil {
		t.Errorf("reusing the id of a refused message: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	if m := c.recv(); m["id"] != float64(99) || m["result"] == nil {
		t.Errorf("after refusals, ping: %v", m)
	}
	if g.RelayedCalls() != 0 {
		t.Errorf("%d refused messages were relayed", g.RelayedCalls())
	}
}

// TestStdioDuplicateInFlightID (SECURITY B15): a request reusing the id of a
// request still in flight, also as a numeric alias (50, 50.0, 5e1), is
// answered -32600 at once; the first request still gets its own answer, and
// the id may be used again once it is answered.
func TestStdioDuplicateInFlightID(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			_, w, r := stdioGateway(t)
			c := &rawClient{t: t, w: w, br: bufio.NewReader(r)}
			initRaw(c, version)
			c.send(`{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"mcp__a__slow","arguments":{"milliseconds":3000}}}`)
			// The pipe is synchronous: read each answer before the next send.
			var dups, invalid int
			answered := false
			classify := func(m map[string]any) {
				b, _ := json.Marshal(m)
				switch {
				case m["error"] != nil && m["id"] == float64(50) && strings.Contains(string(b), "already in flight"):
					dups++
				case m["error"] != nil && m["id"] == nil && strings.Contains(string(b), "string or an integer"):
					invalid++
				case m["error"] == nil && m["id"] == float64(50) && !strings.Contains(string(b), "dup"):
					answered = true
				default:
					t.Fatalf("unexpected message: %s", b)
				}
			}
			for _, dup := range []string{`50`, `50.0`, `5e1`, `500e-1`} {
				c.send(`{"jsonrpc":"2.0","id":` + dup + `,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"dup"}}}`)
				classify(c.recv())
			}
			c.send(`{"jsonrpc":"2.0","id":50.5,"method":"ping"}`)
			classify(c.recv())
			for !answered {
				classify(c.recv())
			}
			if dups != 4 || invalid != 1 {
				t.Fatalf("duplicates answered %d of 4, fractional id refused %d of 1", dups, invalid)
			}
			c.send(`{"jsonrpc":"2.0","id":5e1,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"again"}}}`)
			m := c.recv()
			b, _ := json.Marshal(m)
			if m["id"] != float64(50) || !strings.Contains(string(b), "again") {
				t.Errorf("reusing the answered id: %s", b)
			}
		})
	}
}

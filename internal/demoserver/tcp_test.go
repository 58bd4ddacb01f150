package demoserver

import (
	"context"
	"net"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeTCP: each TCP connection is a session of its own, one JSON line
// per message (the transport-tcp example plugin's wire format); ending the
// context closes the listener and the sessions, and ServeTCP returns nil.
func TestServeTCP(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeTCP(ctx, New(&Options{Name: "tcpdemo"}), ln) }()

	var sessions []*mcp.ClientSession
	for _, msg := range []string{"one", "two"} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, cs)
		if got := cs.InitializeResult().ServerInfo.Name; got != "tcpdemo" {
			t.Errorf("server name %q", got)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != msg {
			t.Errorf("echo %q = %#v", msg, res.Content[0])
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeTCP = %v, want nil after the context ended", err)
	}
	for _, cs := range sessions {
		cs.Wait() // the server closed it
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the listener still accepts after the context ended")
	}
}

package main

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sdk"
	"github.com/mcphost/mcphost/sdk/sdktest"
)

// TestOpen: the plugin dials the HOST:PORT of a tcp:// URL and refuses any
// other URL with a message that says what it needs. (It used to cut the
// first six bytes off the URL, so http://127.0.0.1:PORT dialed
// "/127.0.0.1:PORT".) It opens directly and as the host sees the plugin,
// through the SDK's gRPC shims (sdktest).
func TestOpen(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n"))
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	transports := map[string]sdk.Transport{"direct": tcpTransport{}, "host's view": sdktest.Transport(t, serveOpts())}
	for _, tc := range []struct {
		url, wantErr string
	}{
		{"tcp://" + addr, ""},
		{"tcp://" + addr + "/", ""},
		{"TCP://" + addr, ""},
		{"http://" + addr, `needs a url of the form tcp://HOST:PORT, got "http://` + addr + `"`},
		{"tcp://127.0.0.1", "needs a url of the form tcp://HOST:PORT"},
		{"tcp://:9000", "needs a url of the form tcp://HOST:PORT"},
		{"tcp://" + addr + "?x=1", "needs a url of the form tcp://HOST:PORT"},
		{"tcp://" + addr + "/mcp", "needs a url of the form tcp://HOST:PORT"},
		{addr, "first path segment in URL cannot contain colon"},
	} {
		for via, tr := range transports {
			t.Run(via+" "+tc.url, func(t *testing.T) {
				c, err := tr.Open(context.Background(), &sdk.OpenRequest{Transport: "tcp", ServerName: "s", URL: tc.url})
				if tc.wantErr != "" {
					var te *sdk.TransportError
					if !errors.As(err, &te) || te.Code != sdk.CodeTerminal || !strings.Contains(te.Message, tc.wantErr) {
						t.Fatalf("Open: %v, want a terminal TransportError containing %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				msg, err := c.Recv(context.Background())
				if err != nil || string(msg) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
					t.Fatalf("Recv = %q, %v; want the line without its line ending", msg, err)
				}
				// A blank line is skipped; then the server's clean close is io.EOF.
				if msg, err := c.Recv(context.Background()); !errors.Is(err, io.EOF) {
					t.Fatalf("Recv after the server closed = %q, %v; want io.EOF", msg, err)
				}
			})
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/mcphost/mcphost/sdk"
)

// FuzzRecv: whatever a server sends, Recv returns non-empty messages
// without line breaks or surrounding space, then io.EOF or a terminal
// TransportError, and never panics.
func FuzzRecv(f *testing.F) {
	for _, s := range []string{"", "\n", "{}\n", "{}\r\n\n  \n{\"a\":1}\n", "{}", " \t\r\n", "a\nb\nc"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &tcpConn{r: bufio.NewReader(bytes.NewReader(data))}
		for n := 0; ; n++ {
			if n > len(data)+1 {
				t.Fatal("more messages than bytes")
			}
			msg, err := c.Recv(context.Background())
			if errors.Is(err, io.EOF) {
				return
			}
			var te *sdk.TransportError
			if errors.As(err, &te) {
				if te.Code != sdk.CodeTerminal {
					t.Fatalf("error code %d", te.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("unclassified error %v", err)
			}
			if len(msg) == 0 || bytes.ContainsAny(msg, "\n") || !bytes.Equal(msg, bytes.TrimSpace(msg)) {
				t.Fatalf("message %q", msg)
			}
		}
	})
}

// FuzzTCPAddr: tcpAddr accepts only tcp://HOST:PORT and returns its
// HOST:PORT, which splits into a host and a port.
func FuzzTCPAddr(f *testing.F) {
	for _, s := range []string{"tcp://127.0.0.1:9000", "tcp://[::1]:1/", "http://h:1", "tcp://h", "tcp://h:1/x", "h:1", "tcp://:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		addr, err := tcpAddr(raw)
		if err != nil {
			return
		}
		if host, port, err := net.SplitHostPort(addr); err != nil || host == "" || port == "" {
			t.Fatalf("tcpAddr(%q) = %q: %v", raw, addr, err)
		}
	})
}

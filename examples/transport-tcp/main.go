// Command transport-tcp is a complete transport plugin for mcphost: it
// dials plain TCP (a server's url is tcp://HOST:PORT) and exchanges
// newline-delimited JSON-RPC, one message per line. docs/writing-a-plugin.md
// builds it step by step; a test keeps the guide's copy equal to this file.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"

	"github.com/mcphost/mcphost/sdk"
)

type tcpTransport struct{}

// Open dials the server at req.URL, which must be tcp://HOST:PORT.
func (tcpTransport) Open(ctx context.Context, req *sdk.OpenRequest) (sdk.Conn, error) {
	addr, err := tcpAddr(req.URL)
	if err != nil {
		return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
	}
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
	}
	return &tcpConn{c: c, r: bufio.NewReader(c)}, nil
}

// tcpAddr returns the HOST:PORT of a tcp:// URL.
func tcpAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "tcp" || u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the tcp transport needs a url of the form tcp://HOST:PORT, got %q", raw)
	}
	return u.Host, nil
}

type tcpConn struct {
	c net.Conn
	r *bufio.Reader
}

// Recv returns the next message (a line, blank lines skipped), or io.EOF
// when the server closed the connection between messages.
func (t *tcpConn) Recv(context.Context) ([]byte, error) {
	for {
		line, err := t.r.ReadBytes('\n')
		msg := bytes.TrimSpace(line)
		switch {
		case err == nil && len(msg) > 0:
			return msg, nil
		case errors.Is(err, io.EOF) && len(msg) == 0:
			return nil, io.EOF
		case err != nil:
			return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
		}
	}
}

// Send writes one message as one line.
func (t *tcpConn) Send(_ context.Context, msg []byte) error {
	_, err := t.c.Write(append(msg, '\n'))
	return err
}

// Close closes the connection, which also ends a pending Recv.
func (t *tcpConn) Close() error { return t.c.Close() }

// serveOpts describes the plugin to the host: its name and version, and
// the transport it provides, named "tcp" (transport = "tcp" in a server
// block).
func serveOpts() *sdk.ServeOpts {
	return &sdk.ServeOpts{
		Info: sdk.Info{Name: "transport-tcp", Version: "0.1.0", Transports: []sdk.Component{
			{Name: "tcp", Description: "newline-delimited JSON-RPC over TCP (tcp://HOST:PORT)"},
		}},
		Transport: tcpTransport{},
	}
}

func main() {
	if err := sdk.Serve(serveOpts()); err != nil {
		sdk.Logger().Error("cannot serve", "error", err)
		os.Exit(1)
	}
}

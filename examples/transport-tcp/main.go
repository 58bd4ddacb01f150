// Command transport-tcp is the example plugin from the README: a complete
// transport plugin that dials plain TCP and exchanges newline-delimited
// JSON-RPC. A test keeps the README's copy equal to this file.
package main

import (
	"bufio"
	"context"
	"net"
	"os"

	"github.com/mcphost/mcphost/sdk"
)

type tcpTransport struct{}

func (tcpTransport) Open(ctx context.Context, req *sdk.OpenRequest) (sdk.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", req.URL[len("tcp://"):])
	if err != nil {
		return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
	}
	return &tcpConn{c: c, r: bufio.NewReader(c)}, nil
}

type tcpConn struct {
	c net.Conn
	r *bufio.Reader
}

func (t *tcpConn) Recv(context.Context) ([]byte, error) {
	line, err := t.r.ReadBytes('\n')
	if err != nil {
		return nil, &sdk.TransportError{Code: sdk.CodeTerminal, Message: err.Error()}
	}
	return line[:len(line)-1], nil
}

func (t *tcpConn) Send(_ context.Context, msg []byte) error {
	_, err := t.c.Write(append(msg, '\n'))
	return err
}

func (t *tcpConn) Close() error { return t.c.Close() }

func main() {
	err := sdk.Serve(&sdk.ServeOpts{
		Info:      sdk.Info{Name: "transport-tcp", Version: "0.1.0", Transports: []sdk.Component{{Name: "tcp"}}},
		Transport: tcpTransport{},
	})
	if err != nil {
		sdk.Logger().Error("cannot serve", "error", err)
		os.Exit(1)
	}
}

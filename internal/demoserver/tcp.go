package demoserver

import (
	"context"
	"errors"
	"log"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveTCP serves srv on a TCP listener, one session per connection, each
// message one line of JSON (what the transport-tcp example plugin speaks),
// until ctx ends; it then closes the listener and every connection and
// waits for their sessions.
func serveTCP(ctx context.Context, srv *mcp.Server, addr string, logger *log.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Print(err)
		return 1
	}
	logger.Printf("listening on tcp://%s", ln.Addr())
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		<-ctx.Done()
		ln.Close()
	})
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return 0
			}
			logger.Print(err)
			return 1
		}
		ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
		if err != nil {
			logger.Print(err)
			c.Close()
			continue
		}
		wg.Go(func() {
			stop := context.AfterFunc(ctx, func() { ss.Close() })
			defer stop()
			ss.Wait()
		})
	}
}

package demoserver

import (
	"context"
	"fmt"
	"log"
	"net"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveTCP listens on addr and serves srv there (see ServeTCP).
func serveTCP(ctx context.Context, srv *mcp.Server, addr string, logger *log.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Print(err)
		return 1
	}
	logger.Printf("listening on tcp://%s", ln.Addr())
	if err := ServeTCP(ctx, srv, ln); err != nil {
		logger.Print(err)
		return 1
	}
	return 0
}

// ServeTCP serves srv on ln, one session per connection, each message one
// line of JSON (what the transport-tcp example plugin speaks), until ctx
// ends or ln fails; it then closes ln and every connection, and waits for
// their sessions. It returns nil when ctx ended.
func ServeTCP(ctx context.Context, srv *mcp.Server, ln net.Listener) error {
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
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accepting on %s: %w", ln.Addr(), err)
		}
		ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
		if err != nil {
			c.Close() // a session that cannot start: drop its connection
			continue
		}
		wg.Go(func() {
			stop := context.AfterFunc(ctx, func() { ss.Close() })
			defer stop()
			ss.Wait()
		})
	}
}

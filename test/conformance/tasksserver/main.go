// Command tasksserver runs internal/testing/tasksserver, the tasks-capable MCP server
// of the conformance runs (scripts/conformance.sh, part "tasks"): over
// stateless streamable HTTP with -http ADDR (it prints the URL it serves on
// stderr), else over stdio.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/internal/testing/tasksserver"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address (host:port) instead of stdio")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		log.Fatalf("tasksserver: %v", err)
	}
}

func run(ctx context.Context, addr string) error {
	srv := tasksserver.New(tasksserver.Options{})
	defer srv.Close()
	if addr == "" {
		return srv.ServeStdio(ctx, os.Stdin, os.Stdout)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "tasksserver: serving http://%s/\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

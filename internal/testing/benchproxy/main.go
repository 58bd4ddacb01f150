// Command benchproxy is the reference middle process of the gateway
// benchmarks (test/bench), run in front of a stdio MCP server:
//
//	benchproxy copy  CMD [ARG...]  copies bytes both ways and parses nothing:
//	                               the floor of any process in the middle
//	benchproxy naive CMD [ARG...]  a naive go-sdk proxy: a go-sdk server whose
//	                               tools forward each call through a go-sdk
//	                               client, for scale
//
// It is built for the benchmarks only (internal/testing/testbin) and never shipped.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: benchproxy copy|naive CMD [ARG...]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "copy":
		err = copyBytes(os.Args[2:])
	case "naive":
		err = naive(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchproxy:", err)
		os.Exit(1)
	}
}

// copyBytes runs the server and copies stdin to it and its stdout back,
// until the input ends.
func copyBytes(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(os.Stdout, out)
	}()
	io.Copy(in, os.Stdin)
	in.Close()
	wg.Wait()
	return cmd.Wait()
}

// naive connects a go-sdk client to the server and serves its tools on
// stdio through a go-sdk server, forwarding each call as it comes.
func naive(argv []string) error {
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "naive-proxy"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "naive-proxy"}, nil)
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		})
	}
	return srv.Run(ctx, &mcp.StdioTransport{})
}

// Package signals tests how the real mcphost binary answers signals while
// it serves: SIGHUP reloads the configuration (the gateway keeps serving),
// and SIGTERM drains, answering
// calls in flight with an error by the drain deadline, then exits.
package signals

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

// startServe runs `mcphost serve` with one demo server and drain_timeout 1s.
func startServe(t *testing.T, args ...string) (*exec.Cmd, *syncbuf.Buffer) {
	t.Helper()
	return testbin.ServeCmd(t, binDir, "settings {\n  drain_timeout = \"1s\"\n}\n", "info", nil, args...)
}

// exercise checks SIGHUP and SIGTERM against a connected client.
func exercise(t *testing.T, cmd *exec.Cmd, cs *mcp.ClientSession, stderr *syncbuf.Buffer) {
	t.Helper()
	ctx := context.Background()
	// SIGHUP: the configuration is reloaded (unchanged); the gateway still
	// answers.
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "configuration reloaded: reason=SIGHUP") {
		if time.Now().After(deadline) {
			t.Fatalf("no SIGHUP log line; stderr:\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"message": "after hup"}})
	if err != nil || res.IsError {
		t.Fatalf("after SIGHUP: %v %+v; stderr:\n%s", err, res, stderr)
	}
	// SIGTERM with a 30 s call in flight: an error answer by the drain
	// deadline (1 s, plus the grace to write it), then exit.
	calls := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"milliseconds": 30000}})
		calls <- err
	}()
	time.Sleep(500 * time.Millisecond) // the call reaches the server
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-calls:
		if err == nil || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("call in flight at SIGTERM: %v, want a shutting-down error", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight got no answer")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, stderr)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the gateway did not exit after SIGTERM")
	}
	t.Logf("SIGTERM to exit: %s (drain_timeout 1s)", time.Since(start))
}

func TestServeHTTPSignals(t *testing.T) {
	t.Parallel()
	port := testbin.FreePort(t)
	cmd, stderr := startServe(t, "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	testbin.WaitListening(t, port)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "signals"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	exercise(t, cmd, cs, stderr)
}

func TestServeStdioSignals(t *testing.T) {
	t.Parallel()
	cmd, stderr := startServe(t)
	// CommandTransport would start the process itself and own its signals;
	// the test needs the *exec.Cmd, so it wires the pipes by hand.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "signals"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	exercise(t, cmd, cs, stderr)
}

// TestServeHTTPShutdownWithStreams (issue 33 item 18): SIGTERM while
// streams that carry no call are open — a 2026-07-28 client's
// subscriptions/listen, a 2025-11-25 client's standalone stream — exits
// at once, not after drain_timeout (30 s here): a client that exits and
// stops its gateway is not left waiting for a forced kill.
func TestServeHTTPShutdownWithStreams(t *testing.T) {
	t.Parallel()
	const drainTimeout = 30 * time.Second
	port := testbin.FreePort(t)
	cmd, stderr := testbin.ServeCmd(t, binDir, "settings {\n  drain_timeout = \"30s\"\n}\n", "info", nil,
		"--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	testbin.WaitListening(t, port)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		// A list_changed handler: the 2026-07-28 client listens for it.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "streams"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
		}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s client: %v", version, err)
		}
		defer cs.Close()
		// (Its stream was opened as it connected; a request after it.)
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("%s client: %v", version, err)
		}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, stderr)
		}
	case <-time.After(drainTimeout):
		cmd.Process.Kill()
		t.Fatalf("the gateway waited out drain_timeout with only streams open; stderr:\n%s", stderr)
	}
	t.Logf("SIGTERM to exit with a listen and a standalone stream open: %s (drain_timeout %s)", time.Since(start), drainTimeout)
}

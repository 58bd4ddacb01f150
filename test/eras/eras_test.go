// Package eras tests the real mcphost binary as a gateway in front of a
// real stdio server (the demo server), for clients of both protocol eras:
// the protocol version of its upstream sessions.
package eras

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

// serveCmd is `mcphost serve args…` (debug logs to stderr) on a
// configuration of the demo server (-passthrough), every call allowed, and
// extra (HCL).
func serveCmd(t *testing.T, extra string, args ...string) (*exec.Cmd, *syncbuf.Buffer) {
	t.Helper()
	return testbin.ServeCmd(t, binDir, extra, "debug", []string{"-passthrough"}, args...)
}

// TestServeInTheClientsEra: the stdio gateway opens its upstream sessions
// in its client's protocol era, so a tool written for protocol versions
// before 2026-07-28, which asks the user by a request of its own during the
// call (ask_old: the go-sdk server refuses that on a 2026-07-28 session),
// works through the gateway for such a client as it does directly, with no
// legacy_session; and a 2026-07-28 client keeps its era (ask, which asks
// in its result).
func TestServeInTheClientsEra(t *testing.T) {
	for _, tc := range []struct {
		version, tool string
	}{
		{"2025-11-25", "ask_old"},
		{"2025-06-18", "ask_old"},
		{"2026-07-28", "ask"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			cmd, stderr := serveCmd(t, "")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			asked := 0
			client := mcp.NewClient(&mcp.Implementation{Name: "era-test"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
				},
			})
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != tc.version {
				t.Fatalf("negotiated %s with the gateway, want %s", v, tc.version)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__" + tc.tool, Arguments: map[string]any{"question": "colour?"}})
			if err != nil {
				t.Fatalf("%s: %v; stderr:\n%s", tc.tool, err, stderr)
			}
			text := ""
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			if res.IsError || !strings.Contains(text, "blue") || asked != 1 {
				t.Fatalf("%s: %q (error %v), asked %d times; want the answer, asked once; stderr:\n%s", tc.tool, text, res.IsError, asked, stderr)
			}
			// The server's session is in the client's era (before
			// 2026-07-28), or the newest (from 2026-07-28 on).
			want := tc.version
			if want >= "2026-07-28" {
				want = "2026-07-28"
			}
			if !strings.Contains(stderr.String(), "conn.demo: connected: transport=stdio protocol="+want+"\n") {
				t.Errorf("the upstream session is not at %s; stderr:\n%s", want, stderr)
			}
			if want >= "2026-07-28" {
				return
			}
			// Such a server was told at initialize what this client has
			// (elicitation), not all the gateway could pass on (sampling).
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__client_capabilities"})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("client_capabilities: %v %+v", err, res)
			}
			caps := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(caps, `"elicitation"`) || strings.Contains(caps, `"sampling"`) {
				t.Errorf("the server was told the client capabilities %s, want elicitation and no sampling", caps)
			}
		})
	}
}

// TestServeHTTPProtocolVersion: with settings { protocol_version }, `serve
// --http` opens its upstream sessions at that version, so that for a
// deployment whose clients are of that era a tool written for it (ask_old,
// which asks by a request of its own) works through the gateway without
// legacy_session. (Without the setting the session is at 2026-07-28, where
// the go-sdk server refuses that request.)
func TestServeHTTPProtocolVersion(t *testing.T) {
	t.Parallel()
	port := testbin.FreePort(t)
	cmd, stderr := serveCmd(t, "settings {\n  protocol_version = \"2025-11-25\"\n}\n", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "era-test"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "green"}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__ask_old", Arguments: map[string]any{"question": "colour?"}})
	if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "green") {
		t.Fatalf("ask_old: %v %+v; stderr:\n%s", err, res, stderr)
	}
	if !strings.Contains(stderr.String(), "conn.demo: connected: transport=stdio protocol=2025-11-25\n") {
		t.Errorf("the upstream session is not at 2025-11-25; stderr:\n%s", stderr)
	}
	// A 2026-07-28 client of the same gateway is served too: the server's
	// request comes to it as an input-required result (a held call).
	cs2, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	res, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__ask_old", Arguments: map[string]any{"question": "colour?"}})
	if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "green") {
		t.Fatalf("ask_old, 2026-07-28 client: %v %+v; stderr:\n%s", err, res, stderr)
	}
}

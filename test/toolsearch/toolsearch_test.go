// Package toolsearch tests `mcphost serve --tool-search`, the real binary
// in front of the demo server, with go-sdk clients of both protocol eras
// on stdio and streamable HTTP.
package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/testing/syncbuf"
	"github.com/mcphost/mcphost/internal/testing/testbin"
)

var binDir string

func TestMain(m *testing.M) { os.Exit(testbin.Run(m, func(dir string) { binDir = dir })) }

// rules deny the demo's fail tool and ask about its add tool.
const rules = "permissions {\n  deny = [\"mcp__demo__fail\"]\n  ask  = [\"mcp__demo__add\"]\n}\n"

// check runs the tool-search checks on a client session: only the two
// tools listed; echo found and called; the denied fail tool neither found
// nor callable; add (ask) called after the client allowed it.
func check(t *testing.T, cs *mcp.ClientSession, asked <-chan string, stderr *syncbuf.Buffer) {
	t.Helper()
	checkAsk(t, cs, asked, stderr, true)
}

// checkAsk is check; without canAsk (a client that cannot be asked, as one
// before 2026-07-28 under --stateless), add must be denied unasked instead.
func checkAsk(t *testing.T, cs *mcp.ClientSession, asked <-chan string, stderr *syncbuf.Buffer, canAsk bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v; stderr:\n%s", err, stderr)
	}
	var listed []string
	for _, tl := range lr.Tools {
		listed = append(listed, tl.Name)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, []string{"call_tool", "search_tools"}) {
		t.Errorf("tools/list: %v, want call_tool and search_tools", listed)
	}
	search := func(query string) []string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": query, "limit": 20}})
		if err != nil || res.IsError {
			t.Fatalf("search_tools %q: %v %+v; stderr:\n%s", query, err, res, stderr)
		}
		var f struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &f); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range f.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": name, "arguments": args}})
		if err != nil {
			t.Fatalf("call_tool %s: %v; stderr:\n%s", name, err, stderr)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return text, res.IsError
	}
	if got := search("echo the message back"); len(got) == 0 || got[0] != "mcp__demo__echo" {
		t.Errorf("search found %v, want mcp__demo__echo first", got)
	}
	if got := search("always fails"); slices.Contains(got, "mcp__demo__fail") {
		t.Errorf("search found the denied tool: %v", got)
	}
	if text, isErr := call("mcp__demo__echo", map[string]any{"message": "through call_tool"}); isErr || text != "through call_tool" {
		t.Errorf("call_tool echo: %q (isError %v)", text, isErr)
	}
	if text, isErr := call("mcp__demo__fail", nil); !isErr || !strings.Contains(text, "no tool") {
		t.Errorf("call_tool of the denied tool: %q (isError %v)", text, isErr)
	}
	if !canAsk {
		if text, isErr := call("mcp__demo__add", map[string]any{"a": 20, "b": 22}); !isErr || !strings.Contains(text, "cannot be asked") {
			t.Errorf("call_tool add, for a client that cannot be asked: %q (isError %v)", text, isErr)
		}
		select {
		case msg := <-asked:
			t.Errorf("asked %q", msg)
		default:
		}
		return
	}
	if text, isErr := call("mcp__demo__add", map[string]any{"a": 20, "b": 22}); isErr || !strings.Contains(text, "42") {
		t.Errorf("call_tool add: %q (isError %v)", text, isErr)
	}
	select {
	case msg := <-asked:
		if !strings.Contains(msg, "mcp__demo__add") {
			t.Errorf("asked %q", msg)
		}
	default:
		t.Error("the client was not asked about add")
	}
}

func client(asked chan<- string) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "toolsearch-test"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
		},
	})
}

// TestServeToolSearchStdio: `serve --tool-search` on stdio.
func TestServeToolSearchStdio(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cmd, stderr := testbin.ServeCmd(t, binDir, rules, "info", nil, "--tool-search")
			asked := make(chan string, 4)
			cs, err := client(asked).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("%v; stderr:\n%s", err, stderr)
			}
			defer cs.Close()
			check(t, cs, asked, stderr)
		})
	}
}

// TestServeToolSearchHTTP: `serve --http --tool-search`, one gateway, a
// client of each era.
func TestServeToolSearchHTTP(t *testing.T) {
	port := testbin.FreePort(t)
	cmd, stderr := testbin.ServeCmd(t, binDir, rules, "info", nil, "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth", "--tool-search")
	var stdout syncbuf.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			asked := make(chan string, 4)
			cs, err := client(asked).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("%v; stderr:\n%s", err, stderr)
			}
			defer cs.Close()
			check(t, cs, asked, stderr)
		})
	}
	if !strings.Contains(stdout.String(), "Tool search: clients are listed search_tools and call_tool") {
		t.Errorf("the banner does not say tool search is on:\n%s", stdout.String())
	}
}

// TestServeToolSearchHTTPStateless: `serve --http --stateless
// --tool-search`: a 2026-07-28 client is asked about add by an
// input-required result; a 2025-11-25 client, which has no session to be
// asked on, is refused add with a message saying so.
func TestServeToolSearchHTTPStateless(t *testing.T) {
	port := testbin.FreePort(t)
	cmd, stderr := testbin.ServeCmd(t, binDir, rules, "info", nil, "--http", fmt.Sprintf("127.0.0.1:%d", port), "--no-auth", "--stateless", "--tool-search")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	testbin.WaitListening(t, port)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			asked := make(chan string, 4)
			cs, err := client(asked).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("%v; stderr:\n%s", err, stderr)
			}
			defer cs.Close()
			checkAsk(t, cs, asked, stderr, version >= "2026-07-28")
		})
	}
}

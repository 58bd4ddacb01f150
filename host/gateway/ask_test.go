package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/permissions"
)

var askEcho = config.PermissionRule{Behavior: permissions.Ask, Pattern: "mcp__a__echo", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}

// TestAskThroughElicitation: a go-sdk client (protocol 2026-07-28, so the
// question arrives as an input-required result) answers the gateway's
// permission question.
func TestAskThroughElicitation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  *mcp.ElicitResult // nil: the client has no elicitation support
		wantErr string
	}{
		{"allowed", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, ""},
		{"denied in the form", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, "declined"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, "declined"},
		{"client cannot elicit", nil, "does not support elicitation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts mcp.ClientOptions
			asked := make(chan string, 1)
			if tc.answer != nil {
				opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- req.Params.Message
					return tc.answer, nil
				}
			}
			_, cs := stdioClient(t, &opts, askEcho)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": "may I?"}})
			if err != nil {
				t.Fatal(err)
			}
			text := host.TextOf(res.Content)
			if tc.wantErr == "" {
				if res.IsError || text != "may I?" {
					t.Errorf("result %q (isError %v)", text, res.IsError)
				}
			} else if !res.IsError || !strings.Contains(text, tc.wantErr) {
				t.Errorf("result %q, want an error containing %q", text, tc.wantErr)
			}
			if tc.answer != nil {
				select {
				case msg := <-asked:
					if !strings.Contains(msg, "mcp__a__echo") || !strings.Contains(msg, `ask by rule "mcp__a__echo"`) {
						t.Errorf("question %q", msg)
					}
					// The question shows the call's arguments (issue 37).
					if !strings.Contains(msg, `"message": "may I?"`) {
						t.Errorf("question %q does not show the arguments", msg)
					}
				default:
					t.Error("the client was never asked")
				}
			}
		})
	}
}

// TestAskShowsArgumentsMasked: the gateway's permission question shows
// the call's arguments with the values of secret-named keys and token-shaped
// text masked, so a client that displays the question never displays a
// secret. (Before, the question named the tool and the rule only.)
func TestAskShowsArgumentsMasked(t *testing.T) {
	t.Parallel()
	asked := make(chan string, 1)
	opts := mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- req.Params.Message
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	_, cs := stdioClient(t, &opts, askEcho)
	const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__a__echo",
		Arguments: map[string]any{"message": "deploy " + token, "api_key": "k-1234567890"}}); err != nil {
		t.Fatal(err)
	}
	msg := <-asked
	for _, secret := range []string{token, "k-1234567890"} {
		if strings.Contains(msg, secret) {
			t.Errorf("question %q shows a secret", msg)
		}
	}
	if !strings.Contains(msg, `"message": "deploy `) || !strings.Contains(msg, `"api_key":`) {
		t.Errorf("question %q does not show the arguments", msg)
	}
}

// rawClient speaks JSON-RPC lines to the stdio gateway.
type rawClient struct {
	t  *testing.T
	w  io.Writer
	br *bufio.Reader
}

func (c *rawClient) send(v string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, v+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) recv() map[string]any {
	c.t.Helper()
	line, err := c.br.ReadString('\n')
	if err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		c.t.Fatalf("%v: %s", err, line)
	}
	return m
}

// TestAskAnOlderClient: a 2025-11-25 client gets the question as an
// elicitation/create request during the call.
func TestAskAnOlderClient(t *testing.T) {
	t.Parallel()
	_, w, r := stdioGateway(t, askEcho)
	c := &rawClient{t: t, w: w, br: bufio.NewReader(r)}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"old","version":"1"}}}`)
	if m := c.recv(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"old client"}}}`)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-deadline:
			t.Fatal("no answer")
		default:
		}
		m := c.recv()
		if m["method"] == "elicitation/create" {
			id, _ := json.Marshal(m["id"])
			c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"decision":"allow"}}}`)
			continue
		}
		if id, _ := m["id"].(float64); id == 2 {
			b, _ := json.Marshal(m["result"])
			if !strings.Contains(string(b), "old client") || strings.Contains(string(b), `"isError":true`) {
				t.Errorf("result %s", b)
			}
			return
		}
	}
}

// TestForgedAnswerIsRefused: an answer sent without the gateway's question
// (no valid request state) does not approve the call.
func TestForgedAnswerIsRefused(t *testing.T) {
	t.Parallel()
	_, w, r := stdioGateway(t, askEcho)
	c := &rawClient{t: t, w: w, br: bufio.NewReader(r)}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"forger","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":"x"},"inputResponses":{"mcphost-permission":{"action":"accept","content":{"decision":"allow"}}},"requestState":"forged"}}`)
	m := c.recv()
	b, _ := json.Marshal(m)
	if !strings.Contains(string(b), `"isError":true`) || !strings.Contains(string(b), "the answer does not belong to this call") {
		t.Errorf("a forged answer was accepted: %s", b)
	}
}

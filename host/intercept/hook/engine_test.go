package hook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// The hooks through the engine (intercept.Chain): real scripts, the plan's
// merge, fail closed and fail_open.

func chainOf(t *testing.T, hooks ...config.Hook) *intercept.Chain {
	t.Helper()
	var es []*intercept.Entry
	for _, h := range hooks {
		es = append(es, newHook(t, h, nil).entry)
	}
	return intercept.NewChain(es)
}

func TestEnginePreToolUse(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	ctx := context.Background()
	t.Run("exit 2 refuses", func(t *testing.T) {
		ch := chainOf(t,
			config.Hook{Event: PreToolUse, Command: `"$CLAUDE_PROJECT_DIR"/block_rm.sh`},
			config.Hook{Event: PreToolUse, Command: `python3 "$CLAUDE_PROJECT_DIR"/allow_update.py`})
		out := ch.ForTool("mcp__db__query", "db", nil).Pre(ctx, toolCall(`{"command":"rm -rf /"}`))
		if out.Hook != intercept.Deny || out.Refused == nil || !strings.Contains(out.Refused.Error(), "Blocked: rm commands are not allowed") {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("allow with updatedInput", func(t *testing.T) {
		ch := chainOf(t, config.Hook{Event: PreToolUse, Command: `python3 "$CLAUDE_PROJECT_DIR"/allow_update.py`})
		out := ch.ForTool("mcp__db__query", "db", nil).Pre(ctx, toolCall(`{"query":"x","limit":99}`))
		if out.Hook != intercept.Allow || !sameJSON(out.Args, json.RawMessage(`{"query":"x","limit":10}`)) {
			t.Fatalf("outcome = %+v (args %s)", out, out.Args)
		}
	})
	t.Run("timeout fails closed", func(t *testing.T) {
		ch := chainOf(t, config.Hook{Event: PreToolUse, Command: "cat >/dev/null; exec sleep 30", Timeout: 300 * time.Millisecond})
		out := ch.ForTool("mcp__db__query", "db", nil).Pre(ctx, toolCall(`{}`))
		if out.Hook != intercept.Deny || out.Refused == nil {
			t.Fatalf("outcome = %+v", out)
		}
		if len(out.Records) != 1 || out.Records[0].Decision != intercept.DecisionTimeout {
			t.Errorf("records = %+v", out.Records)
		}
	})
	t.Run("timeout with fail_open passes", func(t *testing.T) {
		ch := chainOf(t, config.Hook{Event: PreToolUse, Command: "cat >/dev/null; exec sleep 30", Timeout: 300 * time.Millisecond, FailOpen: true})
		if out := ch.ForTool("mcp__db__query", "db", nil).Pre(ctx, toolCall(`{}`)); out.Hook != intercept.Pass || out.Refused != nil {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("exit 1 passes", func(t *testing.T) {
		ch := chainOf(t, config.Hook{Event: PreToolUse, Command: `"$CLAUDE_PROJECT_DIR"/exit1.sh`})
		if out := ch.ForTool("mcp__db__query", "db", nil).Pre(ctx, toolCall(`{}`)); out.Hook != intercept.Pass || out.Refused != nil {
			t.Fatalf("outcome = %+v", out)
		}
	})
}

func TestEnginePostToolUse(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	ctx := context.Background()
	ch := chainOf(t,
		config.Hook{Event: PostToolUse, Command: `python3 "$CLAUDE_PROJECT_DIR"/post_output_string.py`},
		config.Hook{Event: PostToolUseFailure, Command: `python3 "$CLAUDE_PROJECT_DIR"/failure.py`})
	plan := ch.ForTool("mcp__db__query", "db", nil)
	res, changed, _, err := plan.Response(ctx, result(toolCall(`{}`), textResult("quiet")))
	if err != nil || !changed || !sameJSON(res, json.RawMessage(`{"content":[{"type":"text","text":"QUIET"}]}`)) {
		t.Fatalf("PostToolUse: %s, %v, %v", res, changed, err)
	}
	failed := result(toolCall(`{}`), `{"content":[{"type":"text","text":"no such table"}],"isError":true}`)
	failed.IsError = true
	res, _, _, err = plan.Response(ctx, failed)
	if err != nil || !strings.Contains(string(res), "The tool failed with: no such table") {
		t.Fatalf("PostToolUseFailure: %s, %v", res, err)
	}
}

func TestEngineElicitation(t *testing.T) {
	needShell(t, true)
	t.Parallel()
	ctx := context.Background()
	ch := chainOf(t,
		config.Hook{Event: Elicitation, Command: `python3 "$CLAUDE_PROJECT_DIR"/elicit_accept.py`},
		config.Hook{Event: ElicitationResult, Command: `python3 "$CLAUDE_PROJECT_DIR"/elicit_result.py`})
	plan := ch.ForElicit("my-mcp-server", nil)
	c := &intercept.Call{Event: intercept.EventElicit, Server: "my-mcp-server",
		Elicit: &mcp.ElicitParams{Message: "creds?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"username": map[string]any{"type": "string"}}}}}
	res, _, err := plan.ElicitBefore(ctx, c)
	if err != nil || res == nil || res.Action != "accept" || res.Content["username"] != "alice" {
		t.Fatalf("ElicitBefore = %+v, %v", res, err)
	}
	res, _, err = plan.ElicitAfter(ctx, c, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"env": "prod"}})
	if err != nil || res == nil || res.Action != "decline" {
		t.Fatalf("ElicitAfter = %+v, %v", res, err)
	}
}

package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestCheckedToolCalls: on both fronts, a tools/call a check refuses with
// a code (validate_input's -32602) is that JSON-RPC error with the
// refusal's text; one refused without a code is a tool error result with
// it (the model reads the reason). The check is told the front; the audit
// line has its decision (not its reason) and the outcome denied; the
// server never gets the call. (The gate that runs the checks is the
// host's: host/gatechecks.go.)
func TestCheckedToolCalls(t *testing.T) {
	t.Parallel()
	const reason = "REASON-CANARY at '/message': got number, want string"
	for _, front := range []string{"stdio", "http"} {
		for _, tc := range []struct {
			name string
			code int64
		}{
			{"with a code", -32602},
			{"without a code", 0},
		} {
			t.Run(front+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				k := &gwChecker{decide: func(c *intercept.Call, p intercept.Phase) intercept.Verdict {
					if c.Name != "mcp__a__echo" {
						return intercept.Verdict{}
					}
					return intercept.Verdict{Action: intercept.Deny, Reason: reason, Code: tc.code}
				}}
				cs, log, buf := checkedGateway(t, front, k, []string{intercept.EventToolsCall}, "request")
				ctx := context.Background()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__echo", Arguments: map[string]any{"message": 3}})
				const text = "refused by builtin guard: " + reason
				if tc.code != 0 {
					wantRPCError(t, err, tc.code, text)
				} else if err != nil {
					t.Fatal(err)
				} else if !res.IsError || !strings.Contains(textOf(res), text) {
					t.Errorf("result %q (isError %v), want an error result with %q", textOf(res), res.IsError, text)
				}
				seen := k.calls()
				if len(seen) == 0 || seen[0].Front != front || seen[0].Event != intercept.EventToolsCall {
					t.Fatalf("calls %+v, want the call's on %s", seen, front)
				}
				stats, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__stats"})
				if err != nil || !strings.HasPrefix(textOf(stats), "{") || strings.Contains(textOf(stats), `"echo"`) {
					t.Errorf("the server's stats %q, %v: it got the refused call", textOf(stats), err)
				}
				cs.Close()
				var line *audit.Record
				for _, r := range allRecords(t, log, buf) {
					if r.Event == audit.EventToolCall && r.Tool == "mcp__a__echo" {
						line = &r
					}
				}
				if line == nil || line.Outcome != audit.OutcomeDenied || len(line.Checks) == 0 ||
					line.Checks[len(line.Checks)-1] != (audit.Check{Name: "guard", Kind: "builtin", Event: "tools/call/request", Decision: "deny"}) {
					t.Errorf("audit line %+v, want outcome denied and guard's deny", line)
				}
				if strings.Contains(buf.String(), "REASON-CANARY") {
					t.Errorf("a check's reason in the audit log: %s", buf.String())
				}
			})
		}
	}
}

package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/permissions"
)

// TestRelayDenyThenFullPath: the relay's try finds a PreToolUse hook's
// deny and gives the call up; the full path, on the same DecisionNote,
// refuses it with the hook's reason (a *RefusedError), not as a rule's
// deny read back from the note, nor as an unknown tool to a gateway user.
func TestRelayDenyThenFullPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		who  *inbound.Principal
	}{
		{"no caller", nil},
		{"a gateway user", &inbound.Principal{Issuer: "https://idp.example", Subject: "alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := &counted{v: verdict(intercept.Verdict{Action: intercept.Deny, Reason: "secret-reason"})}
			h := checkedHost(t, nil, nil, hookEntry(t, "PreToolUse", pre))
			ctx := WithCaller(context.Background(), tc.who, "")
			if _, p := h.Tools(ctx); len(p) > 0 {
				t.Fatal(p)
			}
			n := new(DecisionNote)
			nctx := WithDecisionNote(ctx, n)
			if _, handled, _ := h.Serving().RelayCall(nctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), RelayOptions{ProtocolVersion: "2026-07-28"}); handled {
				t.Fatal("the relay took a call a hook denies")
			}
			_, err := h.CallTool(nctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), &CallOptions{CallerAsks: true})
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "secret-reason") || !errors.Is(err, ErrDenied) {
				t.Fatalf("the full path after the relay: %T %v", err, err)
			}
			if n := pre.runs.Load(); n != 1 {
				t.Errorf("the hook ran %d times, want 1", n)
			}
			d, _, ok := n.Get()
			if !ok || d.Behavior != permissions.Deny || d.Rule == nil || d.Rule.Pattern != HookRulePattern {
				t.Errorf("the note's applied decision: %+v (ok %v), want the hook's deny", d, ok)
			}
			if d := h.Serving().Decision(nctx, "mcp__one__echo"); d.Behavior != permissions.Deny {
				t.Errorf("Serving.Decision after the gate: %v, want the hook's deny", d.Behavior)
			}
		})
	}
}

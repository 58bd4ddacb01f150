package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/host/permissions"
)

// TestDecisionNoteKeepsOneDecision: the steps of one call that carry a
// DecisionNote (the relay's try, then the full path) share the decision
// the first one took — and the decision the gate applied is what the note
// reports — unless the rules were reloaded in between: a decision taken
// under rules no longer in force is taken again.
func TestDecisionNoteKeepsOneDecision(t *testing.T) {
	t.Parallel()
	askRule := []config.PermissionRule{{Pattern: "mcp__one__echo", Behavior: permissions.Ask}}
	for _, tc := range []struct {
		name   string
		reload []config.PermissionRule // the rules after the relay's try (nil: no reload)
		want   permissions.Behavior    // the decision the full path applies
	}{
		{"same rules", nil, permissions.Ask},
		{"rules reloaded", []config.PermissionRule{{Pattern: "mcp__one__echo", Behavior: permissions.Allow}}, permissions.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all", Permissions: askRule}
			h, err := host.New(cfg, &host.Options{OutputDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			var note host.DecisionNote
			ctx := host.WithDecisionNote(context.Background(), &note)
			// The relay cannot ask: it leaves the call to the full path.
			if _, handled, _ := h.Serving().RelayCall(ctx, "mcp__one__echo", json.RawMessage(`{"message":"m"}`), host.RelayOptions{ProtocolVersion: conn.NewProtocol}); handled {
				t.Fatal("the relay took a call needing approval")
			}
			if tc.reload != nil {
				next := &config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all", Permissions: tc.reload}
				r, err := h.Reload(context.Background(), next, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				<-r.Drained
			}
			_, err = h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "m"}, &host.CallOptions{CallerAsks: true})
			var ar *host.ApprovalRequiredError
			if asked := errors.As(err, &ar); asked != (tc.want == permissions.Ask) {
				t.Fatalf("the full path: %v, want decision %s", err, tc.want)
			}
			if d, approved, ok := note.Get(); !ok || approved || d.Behavior != tc.want {
				t.Errorf("the note holds %v (approved %v, applied %v), want %s applied", d.Behavior, approved, ok, tc.want)
			}
		})
	}
}

// TestPromptDecidedOnce (issue 34): a prompts/get is decided once — the
// host's GetPromptResult applies the decision its call took already (its
// DecisionNote: the gateway's telemetry label, its audit line) instead of
// taking it from the rules again. To show which one applies, the note
// holds a decision taken for another caller than the one getting the
// prompt (a call's note is its own caller's).
func TestPromptDecidedOnce(t *testing.T) {
	t.Parallel()
	const prompt = "mcp__one__greet"
	deny := []config.PermissionRule{{Pattern: prompt, Behavior: permissions.Deny, For: &permissions.Principals{Subjects: []string{"mallory"}}}}
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("one")}, DefaultMode: "allow_all", Permissions: deny}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	alice, mallory := &inbound.Principal{Issuer: "i", Subject: "alice"}, &inbound.Principal{Issuer: "i", Subject: "mallory"}
	for _, tc := range []struct {
		name    string
		decided *inbound.Principal // whom the call's note holds a decision for (nil: none)
		caller  *inbound.Principal
		denied  bool
	}{
		{"no decision held: alice's", nil, alice, false},
		{"no decision held: mallory's", nil, mallory, true},
		{"the call's decision: deny", mallory, alice, true},
		{"the call's decision: allow", alice, mallory, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var note host.DecisionNote
			if tc.decided != nil {
				ctx := host.WithDecisionNote(host.WithCaller(context.Background(), tc.decided, ""), &note)
				if d := h.Serving().Decision(ctx, prompt); (d.Behavior == permissions.Deny) != (tc.decided == mallory) {
					t.Fatalf("the call's decision for %s: %s", tc.decided.Subject, d.Behavior)
				}
			}
			ctx := host.WithDecisionNote(host.WithCaller(context.Background(), tc.caller, ""), &note)
			_, err := h.GetPromptResult(ctx, prompt, &mcp.GetPromptParams{Arguments: map[string]string{"name": "Ada"}})
			if denied := errors.Is(err, host.ErrDenied); denied != tc.denied || (!denied && err != nil) {
				t.Errorf("GetPromptResult: %v, want denied %v", err, tc.denied)
			}
		})
	}
}

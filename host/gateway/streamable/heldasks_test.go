package streamable

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/state"
)

// TestHeldCallDoesNotHoldOthersAsks: alice's call to a 2025-11-25 server
// asks her (a held call) and she never answers; bob's call to the same
// server, which asks him too, gets its questions at once and completes.
func TestHeldCallDoesNotHoldOthersAsks(t *testing.T) {
	t.Parallel()
	upstream := heldUpstream(t, make(chan struct{}, 1), make(chan error, 1))
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rs := heldCluster(t, 1, st, []*config.Server{upstream}, &Options{OAuth: &InboundOAuth{Verify: UsersVerifier("alice", "bob"), Resource: "http://gateway.example/mcp"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	one := func(bool) int { return 0 }
	alice := dialHeld(t, ctx, rs[0].url, &heldRouter{urls: urlsOf(rs), token: "alice", pick: one}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}})
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}})
	if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("alice's call: %v %+v", err, res)
	}
	// Alice leaves her question unanswered: her call stays held.

	bob := dialHeld(t, ctx, rs[0].url, &heldRouter{urls: urlsOf(rs), token: "bob", pick: one}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "bob's"}}, nil
		},
	})
	bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
	defer bcancel()
	start := time.Now()
	res, err = bob.CallTool(bctx, &mcp.CallToolParams{Name: "mcp__u__twice", Arguments: map[string]any{}})
	if err != nil || res.IsError || heldText(res) != "bob's bob's" {
		t.Fatalf("bob's call while alice's is held: %v %q (after %v), want his own answers", err, heldText(res), time.Since(start))
	}
}

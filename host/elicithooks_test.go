package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// countingRequester is a relayed client's Requester that answers every
// question itself and counts them (a fake: the test needs to see whether
// the question reached the client at all).
type countingRequester struct{ n *int }

func (r countingRequester) Capabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
}

func (r countingRequester) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	*r.n++
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "from the client"}}, nil
}

func (r countingRequester) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, nil
}

func (r countingRequester) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, nil
}

// hookAnswers is an Elicitation hook's verdict that answers the question.
func hookAnswers(*intercept.Call) intercept.Verdict {
	return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"accept","content":{"answer":"from the hook"}}`)}
}

// TestRelayElicitHookOnly: a relayed call that no tools/call check matches
// still has its server's questions go through the Elicitation hooks.
func TestRelayElicitHookOnly(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hooked     bool
		wantClient int
		wantAnswer string
	}{
		{"no hooks", false, 1, "from the client"},
		{"elicitation hook only", true, 0, "from the hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := &counted{v: hookAnswers}
			var entries []*intercept.Entry
			if tc.hooked {
				entries = append(entries, hookEntry(t, "Elicitation", hook))
			}
			h := checkedHost(t, &config.Config{Servers: []*config.Server{demotest.Server("one", "-passthrough", "-protocol", "2025-11-25")}, DefaultMode: "allow_all"}, &Options{
				// The host declares elicitation to its servers only with a
				// handler for questions outside calls; it must not be asked.
				OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					t.Error("OnElicit asked")
					return &mcp.ElicitResult{Action: "decline"}, nil
				}}, entries...)
			ctx := context.Background()
			if _, p := h.Tools(ctx); len(p) > 0 {
				t.Fatal(p)
			}
			var asked int
			resp, handled, err := h.Serving().RelayCall(ctx, "mcp__one__ask_old", json.RawMessage(`{"question":"?"}`),
				RelayOptions{ProtocolVersion: "2025-11-25", Requester: countingRequester{&asked}, Asks: true})
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if asked != tc.wantClient {
				t.Errorf("the client was asked %d times, want %d", asked, tc.wantClient)
			}
			if tc.hooked && hook.runs.Load() != 1 {
				t.Errorf("the Elicitation hook ran %d times, want 1", hook.runs.Load())
			}
			if !strings.Contains(string(resp), tc.wantAnswer) {
				t.Errorf("result %s lacks %q", resp, tc.wantAnswer)
			}
		})
	}
}

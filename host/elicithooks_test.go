package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/demotest"
)

// countingRequester is a relayed client's Requester that answers every
// question itself and counts them (a fake: the test needs to see whether
// the question reached the client at all). The count is atomic: the
// question is answered on the go-sdk's goroutine, and the test reads it
// after the call, ordered only through the server process.
type countingRequester struct{ n *atomic.Int32 }

func (r countingRequester) Capabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
}

func (r countingRequester) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	r.n.Add(1)
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
			var asked atomic.Int32
			resp, handled, err := h.Serving().RelayCall(ctx, "mcp__one__ask_old", json.RawMessage(`{"question":"?"}`),
				RelayOptions{ProtocolVersion: "2025-11-25", Requester: countingRequester{&asked}, Asks: true})
			if err != nil || !handled {
				t.Fatalf("handled %v, err %v", handled, err)
			}
			if int(asked.Load()) != tc.wantClient {
				t.Errorf("the client was asked %d times, want %d", asked.Load(), tc.wantClient)
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

// TestElicitHooksReturnInputRequests: a call that returns its server's
// input requests to the client (2026-07-28) has them go through the
// Elicitation hooks first, and the client's answers through the
// ElicitationResult hooks before they go upstream.
func TestElicitHooksReturnInputRequests(t *testing.T) {
	pass := func(*intercept.Call) intercept.Verdict { return intercept.Verdict{Action: intercept.Pass} }
	override := func(*intercept.Call) intercept.Verdict {
		return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"action":"accept","content":{"answer":"overridden"}}`)}
	}
	for _, tc := range []struct {
		name         string
		before       func(*intercept.Call) intercept.Verdict // the Elicitation hook (nil: none)
		after        func(*intercept.Call) intercept.Verdict // the ElicitationResult hook (nil: none)
		wantReturned bool                                    // the question reaches the client
		want         string                                  // the result, after the client's retry if any
	}{
		{"no hooks", nil, nil, true, "answer: from the client"},
		{"the hook answers", hookAnswers, nil, false, "answer: from the hook"},
		{"the hook passes", pass, nil, true, "answer: from the client"},
		{"the result hook overrides the client", nil, override, true, "answer: overridden"},
		{"the result hook sees the hook's answer", hookAnswers, override, false, "answer: overridden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hooks []*counted
			var entries []*intercept.Entry
			if tc.before != nil {
				k := &counted{v: tc.before}
				hooks = append(hooks, k)
				entries = append(entries, hookEntry(t, "Elicitation", k))
			}
			if tc.after != nil {
				k := &counted{v: tc.after}
				hooks = append(hooks, k)
				entries = append(entries, hookEntry(t, "ElicitationResult", k))
			}
			h := checkedHost(t, &config.Config{Servers: []*config.Server{demotest.Server("one", "-passthrough")}, DefaultMode: "allow_all"}, &Options{
				OnElicit: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					t.Error("OnElicit asked")
					return &mcp.ElicitResult{Action: "decline"}, nil
				}}, entries...)
			ctx := context.Background()
			res, err := h.CallTool(ctx, "mcp__one__ask", map[string]any{"question": "?"}, &CallOptions{ReturnInputRequests: true})
			if err != nil {
				t.Fatal(err)
			}
			if (res.InputRequests != nil) != tc.wantReturned {
				t.Fatalf("input requests returned: %v, want %v", res.InputRequests, tc.wantReturned)
			}
			if res.InputRequests != nil {
				resps := mcp.InputResponseMap{}
				for key := range res.InputRequests {
					resps[key] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "from the client"}}
				}
				if res, err = h.CallTool(ctx, "mcp__one__ask", map[string]any{"question": "?"},
					&CallOptions{ReturnInputRequests: true, InputResponses: resps, RequestState: res.RequestState}); err != nil {
					t.Fatal(err)
				}
			}
			if got := TextOf(res.Content); !strings.Contains(got, tc.want) {
				t.Errorf("result %q, want %q", got, tc.want)
			}
			for i, k := range hooks {
				if k.runs.Load() != 1 {
					t.Errorf("hook %d ran %d times, want 1", i, k.runs.Load())
				}
			}
		})
	}
}

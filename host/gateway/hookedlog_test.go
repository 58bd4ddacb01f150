package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestLoggingWithElicitationHooks: with an Elicitation hook on the server
// (which wraps each call's requester), an upstream's log message during a
// call still reaches the calling client only, as without hooks
// (TestPassthroughLogging): not every session.
func TestLoggingWithElicitationHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			p := twoServers(t)
			k := &gwChecker{decide: func(*intercept.Call, intercept.Phase) intercept.Verdict { return intercept.Verdict{} }}
			e, err := intercept.HookEntry(&config.Hook{Event: "Elicitation", Matcher: "a", Command: "true", Approved: true}, k)
			if err != nil {
				t.Fatal(err)
			}
			p.h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
			logs := func(ch chan *mcp.LoggingMessageParams) *mcp.ClientOptions {
				return &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					ch <- r.Params
				}}
			}
			msgs, others := make(chan *mcp.LoggingMessageParams, 10), make(chan *mcp.LoggingMessageParams, 10)
			cs := p.dial(t, version, logs(msgs))
			other := p.dial(t, version, logs(others))
			var meta mcp.Meta
			if version == oldProtocol {
				for _, c := range []*mcp.ClientSession{cs, other} {
					if err := c.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "mcp__a__log", Arguments: map[string]any{
				"level": "warning", "logger": "db", "message": "hooked " + version}})
			if err != nil || res.IsError {
				t.Fatalf("%v %s", err, textOf(res))
			}
			select {
			case m := <-msgs:
				if m.Logger != "a/db" || m.Data != "hooked "+version {
					t.Errorf("message %+v, want logger a/db", m)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no notifications/message")
			}
			select {
			case m := <-others:
				t.Errorf("another client got the message %+v", m)
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}

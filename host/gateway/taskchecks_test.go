package gateway_test

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestTaskWithResponseCheck: a 2026-07-28 client that declares the tasks
// extension calls a tool whose result an interceptor checks, on an
// upstream that answers such clients with a task: the call is sent
// without the extension, so the upstream answers with the result itself,
// which the check sees and the client gets.
func TestTaskWithResponseCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		client func(t *testing.T, p *ptGateway) taskClient
	}{
		{"http", func(t *testing.T, p *ptGateway) taskClient { return &httpClient2026{url: p.url, caps: tasksExt} }},
		{"stdio", func(t *testing.T, p *ptGateway) taskClient { return newStdioTaskClient(t, p.g, newProtocol, tasksExt) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := newTasksUpstream(t, newProtocol)
			p := serveTasksAt(t, url, ptOptions{})
			k := &gwChecker{decide: func(*intercept.Call, intercept.Phase) intercept.Verdict { return intercept.Verdict{} }}
			e, err := intercept.InterceptorEntry(&config.Interceptor{Name: "guard", Builtin: "test", Events: []string{intercept.EventToolsCall}, Phases: []string{"response"}}, intercept.KindBuiltin, k)
			if err != nil {
				t.Fatal(err)
			}
			p.h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
			c := tc.client(t, p)
			res := c.call(t, "tools/call", map[string]any{"name": "mcp__t__echo", "arguments": map[string]any{"message": "hi"}})
			if res.Error != nil || res.Result["resultType"] == "task" || res.Result["taskId"] != nil {
				t.Fatalf("tools/call: %+v %+v, want a plain result", res.Result, res.Error)
			}
			seen := k.calls()
			if len(seen) != 1 || !strings.Contains(string(seen[0].Payload), "hi") || strings.Contains(string(seen[0].Payload), "taskId") {
				var payloads []string
				for _, s := range seen {
					payloads = append(payloads, string(s.Payload))
				}
				t.Errorf("the check saw %q, want the result", payloads)
			}
		})
	}
}

package host_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestOneCallInfo: the checks of a library's prompts/get, resources/read,
// list and tools/call are told the same call info: front "library" and
// the process's one session id; a caller that says it is the CLI
// (host.FrontCLI) is told as such, with that session id too.
func TestOneCallInfo(t *testing.T) {
	t.Parallel()
	k := &evChecker{decide: func(*intercept.Call, intercept.Phase) (intercept.Verdict, error) { return intercept.Verdict{}, nil }}
	h := evHost(t, nil, evEntry(t, "guard", k, []string{intercept.EventToolsCall, intercept.EventPromptsGet, intercept.EventResourcesRead, intercept.EventToolsList}, ""))
	for _, front := range []string{"", host.FrontCLI} {
		ctx := context.Background()
		if front != "" {
			ctx = host.WithCallInfo(ctx, host.CallInfo{Front: front})
		}
		if _, err := h.GetPromptResult(ctx, "mcp__one__greet", &mcp.GetPromptParams{Arguments: map[string]string{"name": "Ann"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.ReadResource(ctx, "one", "demo://whoami"); err != nil {
			t.Fatal(err)
		}
		if err := h.Serving().CheckList(ctx, "tools/list", &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "mcp__one__echo"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.CallTool(ctx, "mcp__one__echo", map[string]any{"message": "hi"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen, _ := k.calls()
	events := map[string]bool{}
	session := ""
	// (Both rounds see the same checks: the first half is the library's.)
	for i, c := range seen {
		events[c.Event] = true
		want := host.FrontLibrary
		if i >= len(seen)/2 {
			want = host.FrontCLI
		}
		if c.Front != want || c.Session == "" {
			t.Errorf("%s: front %q, session %q; want %q and the process's session", c.Event, c.Front, c.Session, want)
		}
		if session == "" {
			session = c.Session
		}
		if c.Session != session {
			t.Errorf("%s: session %q, want %q (one per process)", c.Event, c.Session, session)
		}
	}
	if len(events) != 4 {
		t.Errorf("the checks saw %v, want four events", events)
	}
}

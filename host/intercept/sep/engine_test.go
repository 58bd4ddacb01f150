package sep_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// TestThroughTheEngine runs an interceptor block on the real server
// through the engine (intercept.Chain and Plan), as the gate does: the
// refusal, the mutation, the block's audit mode and fail_open, the
// timeout, and a response's deny turned into an error result.
func TestThroughTheEngine(t *testing.T) {
	t.Parallel()
	const hello = `{"note":"hello"}`
	for _, tc := range []struct {
		name     string
		ic       config.Interceptor
		args     []string
		phase    intercept.Phase
		refused  string // Request: the *RefusedError's text ("": none)
		payload  string // the payload left (canonical)
		decision string // the record's
	}{
		{name: "deny", args: []string{"-i", "conf/deny-all=deny-all"}, phase: intercept.Request,
			refused: "refused by server sep: conf/deny-all: denied by policy", decision: "deny"},
		{name: "mutate", args: []string{"-i", "conf/upper=uppercase-note"}, phase: intercept.Request,
			payload: `{"note":"HELLO"}`, decision: "mutate"},
		{name: "block audit: would deny", ic: config.Interceptor{Mode: "audit"}, args: []string{"-i", "conf/deny-all=deny-all"}, phase: intercept.Request,
			payload: hello, decision: "would_deny"},
		{name: "block audit: would mutate", ic: config.Interceptor{Mode: "audit"}, args: []string{"-i", "conf/upper=uppercase-note"}, phase: intercept.Request,
			payload: hello, decision: "would_mutate"},
		{name: "crash: fail closed", args: []string{"-i", "conf/crash=crash"}, phase: intercept.Request,
			refused: "refused by server sep: the check failed (fail closed)", decision: "error"},
		{name: "crash: fail_open", ic: config.Interceptor{FailOpen: true}, args: []string{"-i", "conf/crash=crash"}, phase: intercept.Request,
			payload: hello, decision: "error"},
		{name: "slow: timeout", ic: config.Interceptor{Timeout: 300 * time.Millisecond}, args: []string{"-i", "conf/slow=slow", "-slow", "20s"}, phase: intercept.Request,
			refused: "refused by server sep: the check timed out (fail closed)", decision: "timeout"},
		{name: "response deny: an error result", args: []string{"-i", "conf/deny-all=deny-all"}, phase: intercept.Response,
			payload: `{"content":[{"text":"conf/deny-all: denied by policy","type":"text"}],"isError":true}`, decision: "deny"},
		{name: "response mutate", args: []string{"-i", "conf/upper=uppercase-note"}, phase: intercept.Response,
			payload: `{"content":[],"structuredContent":{"note":"HELLO"}}`, decision: "mutate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.ic, tc.args...)
			plan := intercept.NewChain([]*intercept.Entry{f.entry}).ForTool("mcp__demo__echo", "demo", nil)
			if plan == nil || !plan.Blocking() {
				t.Fatalf("plan %v", plan)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var (
				out  []byte
				recs []intercept.Record
				err  error
			)
			if tc.phase == intercept.Request {
				out, recs, err = plan.Request(ctx, toolCall(hello))
			} else {
				out, _, recs, err = plan.Response(ctx, toolResult(hello, `{"content":[],"structuredContent":{"note":"hello"}}`))
			}
			if tc.refused != "" {
				var re *intercept.RefusedError
				if !errors.As(err, &re) || re.Error() != tc.refused || re.Kind != intercept.KindServer {
					t.Fatalf("err %v, want %q", err, tc.refused)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got := canon(t, out); got != canon(t, []byte(tc.payload)) {
				t.Errorf("payload %s, want %s", got, tc.payload)
			}
			if len(recs) != 1 || recs[0].Decision != tc.decision || !strings.HasSuffix(recs[0].Event, "/"+map[intercept.Phase]string{intercept.Request: "request", intercept.Response: "response"}[tc.phase]) {
				t.Errorf("records %+v, want one %s", recs, tc.decision)
			}
		})
	}
}

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// How the fronts answer a tools/call a hook or an interceptor refused: the
// gate's refusal is made by the host (its tests run the checks); here the
// refusal is given, as the host returns it, to both answering paths — the
// go-sdk path's callResult (stdio and HTTP alike) and the relay's finish
// (relaycall.go, both fronts' relayed calls).

// refusals are the errors of refused calls, as the host may return them:
// the check's refusal as is, wrapped, and a held call's from another
// replica (encoded and decoded).
func refusals(code int64) map[string]error {
	re := &intercept.RefusedError{By: "args", Kind: intercept.KindBuiltin, Reason: "invalid arguments for mcp__a__echo: at '/message': got number, want string", Code: code}
	out := map[string]error{
		"as is":   re,
		"wrapped": fmt.Errorf("calling mcp__a__echo: %w", re),
	}
	if code != 0 {
		out["held elsewhere"] = encodeHeldError(re).decode(nil)
	}
	return out
}

const refusedText = "refused by builtin args: invalid arguments for mcp__a__echo: at '/message': got number, want string"

// TestCallResultRefused: the go-sdk path answers a refusal with a code as
// that JSON-RPC error, with the refusal's text; one without as a tool
// error result with it.
func TestCallResultRefused(t *testing.T) {
	t.Parallel()
	g := &Gateway{log: hclog.NewNullLogger()}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "mcp__a__echo"}}
	for _, code := range []int64{-32602, 0} {
		for name, err := range refusals(code) {
			t.Run(fmt.Sprintf("%d %s", code, name), func(t *testing.T) {
				t.Parallel()
				res, rerr := g.callResult(context.Background(), req, "mcp__a__echo", nil, err)
				if code != 0 {
					var rpc *jsonrpc.Error
					if !errors.As(rerr, &rpc) || rpc.Code != code || rpc.Message != refusedText || res != nil {
						t.Fatalf("answer %v, %v; want the JSON-RPC error %d %q", res, rerr, code, refusedText)
					}
					return
				}
				if rerr != nil || res == nil || !res.IsError || len(res.Content) != 1 || !strings.HasSuffix(res.Content[0].(*mcp.TextContent).Text, refusedText) {
					t.Fatalf("answer %+v, %v; want an error result with %q", res, rerr, refusedText)
				}
			})
		}
	}
}

// fakeRelayFront is a RelayFront that keeps the answer.
type fakeRelayFront struct{ answer []byte }

func (f *fakeRelayFront) Answer(msg []byte)                     { f.answer = msg }
func (f *fakeRelayFront) Unanswered()                           {}
func (f *fakeRelayFront) Pass(RelaySpan) bool                   { return false }
func (f *fakeRelayFront) Aborted() bool                         { return false }
func (f *fakeRelayFront) Cancelled(context.Context, error) bool { return false }
func (f *fakeRelayFront) Run(fn func())                         { fn() }
func (f *fakeRelayFront) Ended()                                {}

// TestRelayFinishRefused: the relay answers a refusal with a code as that
// JSON-RPC error under the client's id, with the refusal's text; one
// without as a tool error result with it; its audit line's outcome is
// denied.
func TestRelayFinishRefused(t *testing.T) {
	t.Parallel()
	for _, code := range []int64{-32602, 0} {
		for name, err := range refusals(code) {
			t.Run(fmt.Sprintf("%d %s", code, name), func(t *testing.T) {
				t.Parallel()
				var buf syncbuf.Buffer
				log := audit.New(&buf, nil)
				g := &Gateway{log: hclog.NewNullLogger(), audit: log}
				f := &fakeRelayFront{}
				c := &relayCall{g: g, front: f, name: "mcp__a__echo", clientID: []byte(`"c-7"`)}
				c.audit = g.auditCall(context.Background(), audit.EventToolCall, c.name, "", "", 2)
				if !c.finish(context.Background(), nil, true, err) {
					t.Fatal("not answered")
				}
				var msg struct {
					ID     string              `json:"id"`
					Result *mcp.CallToolResult `json:"result"`
					Error  *struct {
						Code    int64  `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(f.answer, &msg); err != nil || msg.ID != "c-7" {
					t.Fatalf("answer %s: %v", f.answer, err)
				}
				if code != 0 {
					if msg.Error == nil || msg.Error.Code != code || msg.Error.Message != refusedText {
						t.Errorf("answer %s, want the JSON-RPC error %d %q", f.answer, code, refusedText)
					}
				} else if msg.Result == nil || !msg.Result.IsError || !strings.Contains(string(f.answer), refusedText) {
					t.Errorf("answer %s, want an error result with %q", f.answer, refusedText)
				}
				if err := log.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				var rec audit.Record
				if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
					t.Fatalf("audit %q: %v", buf.String(), err)
				}
				if rec.Outcome != audit.OutcomeDenied {
					t.Errorf("audit outcome %q, want denied", rec.Outcome)
				}
			})
		}
	}
}

// TestFrontOf: a request the go-sdk server handles came by HTTP when it
// carries HTTP headers, else by stdio (with or without the stdio front's
// telemetry headers).
func TestFrontOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		extra *mcp.RequestExtra
		want  string
	}{
		{nil, host.FrontStdio},
		{PipeExtra("7", ""), host.FrontStdio},
		{&mcp.RequestExtra{Header: http.Header{"Content-Type": {"application/json"}}}, host.FrontHTTP},
	} {
		if got := frontOf(&mcp.CallToolRequest{Extra: tc.extra}); got != tc.want {
			t.Errorf("frontOf(%+v) = %q, want %q", tc.extra, got, tc.want)
		}
	}
}

// TestAuditChecks: the audit line's checks are the records' names, kinds,
// events, durations and decisions — a decision not among the fixed words
// is written "other" — with mode audit for audit-mode checks.
func TestAuditChecks(t *testing.T) {
	t.Parallel()
	if got := auditChecks(nil); got != nil {
		t.Errorf("auditChecks(nil) = %v", got)
	}
	t0 := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	got := auditChecks([]intercept.Record{
		{Name: "PreToolUse", Kind: intercept.KindHook, Event: "tools/call/request", Decision: "allow", Start: t0, End: t0.Add(41300000)},
		{Name: "keys", Kind: intercept.KindBuiltin, Event: "tools/call/response", Decision: "would_deny", Mode: intercept.Audit, Start: t0, End: t0},
		{Name: "odd", Kind: intercept.KindPlugin, Event: "tools/call/request", Decision: "deny: SECRET", Start: t0, End: t0},
	})
	want := []audit.Check{
		{Name: "PreToolUse", Kind: "hook", Event: "tools/call/request", Decision: "allow", Duration: 41300000},
		{Name: "keys", Kind: "builtin", Event: "tools/call/response", Decision: "would_deny", Mode: "audit"},
		{Name: "odd", Kind: "plugin", Event: "tools/call/request", Decision: "other"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("check %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

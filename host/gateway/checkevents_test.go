package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/audit"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// The gateway's part in the checks of prompts/get, resources/read and the
// lists, on both fronts: the refusals' JSON-RPC errors, the call info the
// checks get, the audit line's checks. The checkers are written in the
// test (the engine's seam, host.Serving.SetChecksForTesting): each kind of
// check is tested against its real peer in its own package, and the gate's
// tools/call checks by the host's tests.

// gwChecker is a Checker that returns what decide says and keeps the calls
// it saw.
type gwChecker struct {
	mu     sync.Mutex
	seen   []intercept.Call
	decide func(c *intercept.Call, p intercept.Phase) intercept.Verdict
}

func (k *gwChecker) Check(_ context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	k.mu.Lock()
	k.seen = append(k.seen, *c)
	k.mu.Unlock()
	return k.decide(c, p), nil
}

func (k *gwChecker) calls() []intercept.Call {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.seen)
}

// checkedGateway is a gateway, with an audit log, of the passthrough demo
// server "a" with the interceptor "guard" (in process) of events and
// phases run by k, and a client connected to it by front ("stdio" or
// "http").
func checkedGateway(t *testing.T, front string, k intercept.Checker, events []string, phases ...string) (*mcp.ClientSession, *audit.Log, *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: []*config.Server{demo("a", "-passthrough")}, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := intercept.InterceptorEntry(&config.Interceptor{Name: "guard", Builtin: "test", Events: events, Phases: phases}, intercept.KindBuiltin, k)
	if err != nil {
		t.Fatal(err)
	}
	h.Serving().SetChecksForTesting(intercept.NewChain([]*intercept.Entry{e}))
	var buf syncbuf.Buffer
	log := audit.New(&buf, nil)
	t.Cleanup(func() {
		cancel()
		h.Close()
		log.Close(context.Background())
	})
	h.ConnectAll(ctx, nil)
	g := gateway.New(h, &gateway.Options{Audit: log})
	if p := g.Sync(ctx); len(p) > 0 {
		t.Fatal(p)
	}
	var tr mcp.Transport
	if front == "stdio" {
		w, r := servePipes(t, g)
		tr = &mcp.IOTransport{Reader: r, Writer: w}
	} else {
		srv := httptest.NewServer(streamable.New(g).Handler(nil))
		t.Cleanup(func() {
			srv.CloseClientConnections()
			srv.Close()
		})
		tr = &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "checks"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, log, &buf
}

// wantRPCError checks that err is the JSON-RPC error code with text in
// its message.
func wantRPCError(t *testing.T, err error, code int64, text string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("error %v (%T), want a JSON-RPC error %d", err, err, code)
	}
	if rpc.Code != code || !strings.Contains(rpc.Message, text) {
		t.Errorf("error %d %q, want %d with %q", rpc.Code, rpc.Message, code, text)
	}
}

// TestCheckedPromptsAndReads: on both fronts, a prompts/get or
// resources/read a check refuses gets a JSON-RPC error (-32602 for the
// request, -32603 for the response) with the refusal's text; one it
// changes gets the change. The check is told the front and the session
// (the audit line's reference to it); the audit line has the check's decision, not its
// reason, and the outcome denied.
func TestCheckedPromptsAndReads(t *testing.T) {
	t.Parallel()
	const reason = "REASON-CANARY not for you"
	deny := func(*intercept.Call, intercept.Phase) intercept.Verdict {
		return intercept.Verdict{Action: intercept.Deny, Reason: reason}
	}
	for _, front := range []string{"stdio", "http"} {
		for _, tc := range []struct {
			name     string
			event    string
			phase    string
			decide   func(c *intercept.Call, p intercept.Phase) intercept.Verdict
			code     int64  // 0: no error
			want     string // the text of a result
			decision string
		}{
			{name: "prompt refused", event: intercept.EventPromptsGet, phase: "request", decide: deny, code: -32602, decision: "deny"},
			{name: "prompt result refused", event: intercept.EventPromptsGet, phase: "response", decide: deny, code: -32603, decision: "deny"},
			{name: "prompt arguments changed", event: intercept.EventPromptsGet, phase: "request", want: "Say hello to Bob.", decision: "mutate",
				decide: func(*intercept.Call, intercept.Phase) intercept.Verdict {
					return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(`{"name":"greet","arguments":{"name":"Bob"}}`)}
				}},
			{name: "read refused", event: intercept.EventResourcesRead, phase: "request", decide: deny, code: -32602, decision: "deny"},
			{name: "read result redacted", event: intercept.EventResourcesRead, phase: "response", want: "This is the [REDACTED] demo server.", decision: "mutate",
				decide: func(c *intercept.Call, _ intercept.Phase) intercept.Verdict {
					return intercept.Verdict{Action: intercept.Mutate, Payload: json.RawMessage(strings.Replace(string(c.Payload), "mcphost", "[REDACTED]", 1))}
				}},
		} {
			t.Run(front+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				k := &gwChecker{decide: tc.decide}
				cs, log, buf := checkedGateway(t, front, k, []string{tc.event}, tc.phase)
				ctx := context.Background()
				var text string
				var err error
				if tc.event == intercept.EventPromptsGet {
					var res *mcp.GetPromptResult
					if res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__a__greet", Arguments: map[string]string{"name": "Ann"}}); err == nil {
						text = res.Messages[0].Content.(*mcp.TextContent).Text
					}
				} else {
					var res *mcp.ReadResourceResult
					if res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://readme"}); err == nil {
						text = res.Contents[0].Text
					}
				}
				if tc.code != 0 {
					wantRPCError(t, err, tc.code, "refused by builtin guard: "+reason)
				} else if err != nil {
					t.Fatal(err)
				} else if text != tc.want {
					t.Errorf("text %q, want %q", text, tc.want)
				}
				seen := k.calls()
				if len(seen) != 1 || seen[0].Front != front || seen[0].Event != tc.event {
					t.Fatalf("calls %+v, want one of %s on %s", seen, tc.event, front)
				}
				cs.Close()
				var lines []audit.Record
				for _, r := range allRecords(t, log, buf) {
					if r.Event == tc.event {
						lines = append(lines, r)
					}
				}
				if len(lines) != 1 {
					t.Fatalf("audit lines %+v, want one of %s", lines, tc.event)
				}
				r := lines[0]
				if front == "http" && (len(seen[0].Session) != 16 || seen[0].Session != r.Session) {
					t.Errorf("session %q, want the audit line's %q", seen[0].Session, r.Session)
				}
				wantOutcome := audit.OutcomeOK
				if tc.code != 0 {
					wantOutcome = audit.OutcomeDenied
				}
				wantEvent := tc.event + "/" + tc.phase
				if r.Outcome != wantOutcome || len(r.Checks) != 1 || r.Checks[0] != (audit.Check{Name: "guard", Kind: "builtin", Event: wantEvent, Decision: tc.decision}) {
					t.Errorf("audit line outcome %q, checks %+v; want %s, guard's %s at %s", r.Outcome, r.Checks, wantOutcome, tc.decision, wantEvent)
				}
				if strings.Contains(buf.String(), "REASON-CANARY") {
					t.Errorf("a check's reason in the audit log: %s", buf.String())
				}
			})
		}
	}
}

// TestCheckedLists: on both fronts, a list's checks see it as the client
// would get it and may filter it; a list they refuse is a JSON-RPC error
// (-32603).
func TestCheckedLists(t *testing.T) {
	t.Parallel()
	for _, front := range []string{"stdio", "http"} {
		for _, tc := range []struct {
			name   string
			decide func(t *testing.T, c *intercept.Call, p intercept.Phase) intercept.Verdict
			code   int64
		}{
			{name: "filtered", decide: func(t *testing.T, c *intercept.Call, p intercept.Phase) intercept.Verdict {
				if p == intercept.Request {
					return intercept.Verdict{}
				}
				var l mcp.ListToolsResult
				if err := json.Unmarshal(c.Payload, &l); err != nil {
					t.Error(err)
				}
				l.Tools = slices.DeleteFunc(l.Tools, func(x *mcp.Tool) bool { return x.Name != "mcp__a__echo" })
				b, _ := json.Marshal(&l)
				return intercept.Verdict{Action: intercept.Mutate, Payload: b}
			}},
			{name: "refused", code: -32603, decide: func(_ *testing.T, _ *intercept.Call, p intercept.Phase) intercept.Verdict {
				if p == intercept.Request {
					return intercept.Verdict{}
				}
				return intercept.Verdict{Action: intercept.Deny, Reason: "no list"}
			}},
		} {
			t.Run(front+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				k := &gwChecker{decide: func(c *intercept.Call, p intercept.Phase) intercept.Verdict { return tc.decide(t, c, p) }}
				cs, _, _ := checkedGateway(t, front, k, []string{intercept.EventToolsList})
				res, err := cs.ListTools(context.Background(), nil)
				if tc.code != 0 {
					wantRPCError(t, err, tc.code, "refused by builtin guard: no list")
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Tools) != 1 || res.Tools[0].Name != "mcp__a__echo" {
					var names []string
					for _, x := range res.Tools {
						names = append(names, x.Name)
					}
					t.Errorf("tools %v, want mcp__a__echo alone", names)
				}
				// The prompts' list has no check: it is whole.
				prompts, err := cs.ListPrompts(context.Background(), nil)
				if err != nil || len(prompts.Prompts) < 2 {
					t.Errorf("prompts %v, %v", prompts, err)
				}
				for _, c := range k.calls() {
					if c.Event != intercept.EventToolsList || c.Front != front {
						t.Errorf("call %+v", c)
					}
				}
			})
		}
	}
}
